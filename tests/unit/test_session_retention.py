"""The retention pass as the session runs it: what the transcript lets go (older than its horizon,
never the live window nor what waits for an answer), what goes with it, the other services asked
to trim each person with the same horizon, one pass a day on one replica, and a person whose trim
failed kept whole for the next pass. On SQLite and on PostgreSQL as the service's role under
row-level security; the other services are in-process `PersonData` servers here, the real ones in
tests/e2e/test_person_data_end_to_end.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest
from sqlalchemy import insert, select

from session.erasure import Standing, person_digest
from session.retention import Keeping, Retention
from session.store import ConversationStore
from session.tables import effects, messages, pins, removals, updates
from tests.support.session_db import session_settings
from violet import database
from violet.channels import Peers
from violet.database import Database
from violet.identity import acting_for, authenticate
from violet.person_data import Horizon
from violet.v1 import persons_pb2, persons_pb2_grpc

SECRET = "test-secret-retention"
NOW = datetime(2026, 12, 4, 3, 0, tzinfo=UTC)
KEEPING = Keeping(transcript_days=30, work_days=60)
# 40 exchanges, one a day, the first 40 days ago: the first 10 (seqs 1 to 20) are older than
# the transcript's horizon.
EXCHANGES = 40
LIVE_FROM = 71


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Peer(persons_pb2_grpc.PersonDataServicer):
    """Another service's `PersonData`: the trims asked of it, and failures to give."""

    trims: list[tuple[str, Horizon]] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)

    async def Trim(
        self, request: persons_pb2.TrimRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.EraseReply:
        person = (await authenticate(context, SECRET)).person
        if person in self.failing:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "away for a moment")
        self.trims.append((person, Horizon.of(request)))
        return persons_pb2.EraseReply(rows=1)


@dataclass
class Place:
    db: Database
    store: ConversationStore
    peers: dict[str, Peer]
    addresses: Peers
    clock: Clock

    def retention(self, replica: str = "r1") -> Retention:
        return Retention(
            self.db,
            self.addresses,
            SECRET,
            KEEPING,
            Standing(self.db, SECRET),
            replica,
            30.0,
            self.clock,
        )

    def trimmed(self, person: str) -> list[Horizon]:
        """The horizons every service was asked to trim the person with, the same from each."""
        asked = [[h for p, h in peer.trims if p == person] for peer in self.peers.values()]
        assert all(horizons == asked[0] for horizons in asked)
        return asked[0]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Place]:
    servers, peers, addresses = [], {}, {}
    for name in ("worker", "router", "memory"):
        peers[name] = Peer()  # type: ignore[abstract]  # only Trim is asked of it here
        server = grpc.aio.server()
        persons_pb2_grpc.add_PersonDataServicer_to_server(peers[name], server)
        addresses[name] = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        await server.start()
        servers.append(server)
    channels = Peers(addresses, 10.0)
    with session_settings(request.param, tmp_path) as settings:
        db = database.service_database(settings, "session")
        clock = Clock()
        try:
            yield Place(
                db, ConversationStore.open(db, notify=False, clock=clock), peers, channels, clock
            )
        finally:
            await channels.close()
            await db.dispose()
            for server in servers:
                await server.stop(None)


async def talk(place: Place, person: str, days_ago: list[int], live_from: int) -> str:
    """One exchange a day, `days_ago` each; a told result in the second; the live window from
    `live_from`. The conversation's id."""
    store = place.store
    with acting_for(person):
        place.clock.now = NOW - timedelta(days=days_ago[0])
        conversation = await store.conversations.conversation_of(person)
        model = await store.model_conversations.start(conversation.id, "first message", "r", 1)
        for number, days in enumerate(days_ago):
            place.clock.now = NOW - timedelta(days=days)
            await store.transcript.append_say(conversation, f"{person}-{number}", f"say {number}")
            said = await store.transcript.next_unanswered(conversation.id)
            assert said is not None
            async with place.db() as tx, tx.begin():
                await store.effects.record(tx, conversation.id, f"e{number}", "done")
            await store.transcript.append_answer(conversation, said, f"answer {number}", model.id)
            if number == 1:
                await store.updates.store(conversation.id, "k1", "ferry", "result", "7:40")
                update = await store.updates.next_untold(conversation.id)
                assert update is not None
                await store.transcript.append_told(conversation, update.id, "At 7:40.", model.id)
        place.clock.now = NOW
        await store.model_conversations.start(conversation.id, "rollover", "r", live_from)
    return conversation.id


async def seqs_of(place: Place, person: str, conversation_id: str) -> list[int]:
    with acting_for(person):
        async with place.db() as db:
            found = await db.scalars(
                select(messages.c.seq)
                .where(messages.c.conversation_id == conversation_id)
                .order_by(messages.c.seq)
            )
            return list(found)


async def count(place: Place, person: str, table, conversation_id: str) -> int:  # type: ignore[no-untyped-def]
    with acting_for(person):
        async with place.db() as db:
            found = await db.scalars(
                select(table.c.conversation_id).where(table.c.conversation_id == conversation_id)
            )
            return len(list(found))


async def test_the_transcript_lets_go_of_what_is_older_than_its_horizon_below_the_window(
    place: Place,
) -> None:
    days = [EXCHANGES - number for number in range(EXCHANGES)]
    ann = await talk(place, "ann", days, LIVE_FROM)
    bob = await talk(place, "bob", [3, 2, 1], 1)
    with acting_for("ann"):
        closed_long_ago = await place.store.pins.add(ann, "promise", "call the dentist")
        place.clock.now = NOW - timedelta(days=50)
        await place.store.pins.close(ann, [closed_long_ago.id])
        place.clock.now = NOW
        still_open = await place.store.pins.add(ann, "promise", "book the ferry")

    report = await place.retention().run()

    # Seq 5 is the told result (second exchange): exchanges 0 to 9 hold seqs 1 to 21.
    kept = await seqs_of(place, "ann", ann)
    assert kept[0] == 22 and kept == list(range(22, 2 * EXCHANGES + 2))
    assert [(h.transcript_through_seq) for h in place.trimmed("ann")] == [21]
    horizon = place.trimmed("ann")[0]
    assert horizon.transcript_before == NOW - timedelta(days=30)
    assert horizon.work_before == NOW - timedelta(days=60)
    assert await count(place, "ann", updates, ann) == 0
    assert await count(place, "ann", effects, ann) == EXCHANGES - 10
    with acting_for("ann"):
        assert [p.id for p in await place.store.pins.open(ann)] == [still_open.id]
        async with place.db() as db:
            assert await db.scalar(select(pins.c.id).where(pins.c.id == closed_long_ago.id)) is None
    # Bob spoke within the horizon: nothing of his is touched, nor is he asked about.
    assert place.trimmed("bob") == []
    assert await seqs_of(place, "bob", bob) == list(range(1, 8))
    assert (report.people, report.messages, report.failed) == (1, 21, 0)

    again = await place.retention().run()
    assert (again.messages, await seqs_of(place, "ann", ann)) == (0, kept)


async def test_the_live_window_and_what_waits_for_an_answer_stay_however_old(
    place: Place,
) -> None:
    old = await talk(place, "cat", [100, 99, 98], 1)
    waiting = await talk(place, "dan", [100, 99, 98], 7)
    with acting_for("dan"):
        place.clock.now = NOW - timedelta(days=97)
        conversation = await place.store.conversations.conversation_of("dan")
        await place.store.transcript.append_say(conversation, "dan-late", "are you there?")
        place.clock.now = NOW
        async with place.db() as tx, tx.begin():
            await tx.execute(
                messages.update()
                .where(messages.c.conversation_id == waiting, messages.c.seq == 3)
                .values(answered=False)
            )

    await place.retention().run()

    assert await seqs_of(place, "cat", old) == list(range(1, 8))
    assert [h.transcript_through_seq for h in place.trimmed("cat")] == [0]
    # The work's horizon still reaches the services for a person whose transcript stays.
    assert place.trimmed("cat")[0].work_before == NOW - timedelta(days=60)
    assert await seqs_of(place, "dan", waiting) == list(range(3, 9))


async def test_a_person_being_removed_is_left_to_the_removal(place: Place) -> None:
    eve = await talk(place, "eve", [90, 89], 3)
    async with place.db() as tx, tx.begin():
        await tx.execute(
            insert(removals).values(
                digest=person_digest(SECRET, "eve"),
                person="eve",
                requested_at=NOW,
                requested_by="person",
            )
        )

    report = await place.retention().run()

    assert place.trimmed("eve") == [] and report.people == 0
    assert len(await seqs_of(place, "eve", eve)) == 5


async def test_a_failed_trim_keeps_the_person_whole_for_the_next_pass(place: Place) -> None:
    days = [EXCHANGES - number for number in range(EXCHANGES)]
    ann = await talk(place, "ann", days, LIVE_FROM)
    place.peers["router"].failing.add("ann")

    failed = await place.retention().run()

    assert (failed.people, failed.failed) == (0, 1)
    assert len(await seqs_of(place, "ann", ann)) == 2 * EXCHANGES + 1
    place.peers["router"].failing.clear()
    done = await place.retention().run()
    assert (done.people, done.failed, done.messages) == (1, 0, 21)


async def test_the_pass_runs_once_a_day_on_one_replica(place: Place) -> None:
    await talk(place, "ann", [EXCHANGES - number for number in range(EXCHANGES)], LIVE_FROM)

    first = await place.retention("r1").run_if_due()
    assert first is not None and first.people == 1
    assert await place.retention("r2").run_if_due() is None
    assert await place.retention("r1").run_if_due() is None

    place.clock.now = NOW + timedelta(days=1)
    assert await place.retention("r2").run_if_due() is not None
    assert len(place.trimmed("ann")) == 2


def test_keeping_for_ever_sets_no_horizon() -> None:
    assert Keeping().forever
    assert Keeping().horizon(NOW) == Horizon()
    assert Keeping(work_days=7).horizon(NOW) == Horizon(work_before=NOW - timedelta(days=7))
