"""A person's whole data as the session service holds and gathers it: the archive (one zip,
streamed, valid against its schema, in bounded memory), the removal everywhere (every session
table, the other services asked in order, finished after a failure), and the standing that
refuses a removed person's old sign-ins. On SQLite and on PostgreSQL as the service's role
under row-level security. The other services are in-process gRPC servers of `PersonData`
here; the whole stack's own are in tests/e2e/test_person_data_end_to_end.py."""

from __future__ import annotations

import asyncio
import io
import json
import tracemalloc
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import grpc
import jsonschema
import pytest
from sqlalchemy import func, insert, select

from session.accounts import AccountRules, Accounts
from session.accounts_service import AccountsService
from session.archive import Archive, BrokenExport
from session.devices import Devices, UnknownDevice
from session.erasure import PERSON_TABLES, Erasure, Removed, Standing, person_digest
from session.feed import Feed
from session.notify.subscriptions import Subscription, Subscriptions
from session.service import Backlogged, say_destination
from session.store import ConversationStore
from session.tables import (
    account_notices,
    erased_usage,
    messages,
    metadata,
    presence,
    push_outbox,
    removals,
)
from session.transcript import nothing_more
from session.turn_lock import turn_lock
from tests.support.grpc_server import serving
from tests.support.session_db import session_settings
from tests.support.waiting import eventually
from violet import database
from violet.channels import Peers
from violet.database import Database
from violet.identity import acting_for, authenticate, service_identity
from violet.keyring import ApiKey, resolve_keyring
from violet.models.usage import UsageRow
from violet.push import PushAddress
from violet.v1 import accounts_pb2, accounts_pb2_grpc, persons_pb2, persons_pb2_grpc

SECRET = "test-secret-person-data"
ANN, BOB = "ann", "bob"
SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
NOW = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
PEER_RECORDS = {
    "memory": [
        (
            "remembered",
            {"text": "Ann's sister is called Joana", "remembered_at": "2026-12-01T09:00:00Z"},
        ),
        (
            "told",
            {
                "text": "The ferry leaves at 7:40.",
                "told_at": "2026-12-02T08:00:00Z",
                "sources": [{"page": "https://ferries.example/times", "title": "Timetable"}],
            },
        ),
    ],
    "worker": [
        (
            "documents",
            {
                "name": "ferry-note.md",
                "title": "Ferry note",
                "written_at": "2026-12-02T08:01:00Z",
                "size": 12,
                "deleted": False,
            },
        ),
        (
            "work",
            {
                "asked": "find the ferry times",
                "asked_at": "2026-12-02T07:59:00Z",
                "state": "done",
                "result": "The ferry leaves at 7:40.",
                "finished_at": "2026-12-02T08:00:00Z",
            },
        ),
    ],
    "router": [],
}


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Peer(persons_pb2_grpc.PersonDataServicer):
    """One other service's `PersonData`: its records of each person, and the removals asked."""

    name: str
    records: dict[str, list[tuple[str, dict]]]
    failures: int = 0
    erased: list[str] = field(default_factory=list)
    # Closed: an erase waits for it to open.
    gate: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.gate.set()

    async def Export(
        self, request: persons_pb2.ExportRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[persons_pb2.ExportRecord]:
        person = (await authenticate(context, SECRET)).person
        for section, record in self.records.get(person, []):
            content = b"ferry at 7:40" if section == "documents" else b""
            yield persons_pb2.ExportRecord(
                section=section, json=json.dumps(record), content=content
            )

    async def Erase(
        self, request: persons_pb2.EraseRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.EraseReply:
        person = (await authenticate(context, SECRET)).person
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            await context.abort(grpc.StatusCode.UNAVAILABLE, "away for a moment")
        self.erased.append(person)
        gone = self.records.pop(person, [])
        return persons_pb2.EraseReply(rows=len(gone))


@dataclass
class Place:
    db: Database
    store: ConversationStore
    peers: dict[str, Peer]
    clock: Clock
    addresses: Peers
    home: Path
    waited_for_captures: list[str] = field(default_factory=list)

    def erasure(self, replica: str = "eraser") -> Erasure:
        lock = turn_lock(self.db, replica, 30.0, self.clock)
        return Erasure(
            self.db,
            self.addresses,
            Feed(1.0),
            lock,
            SECRET,
            replica,
            30.0,
            self.captures_sent,
            self.clock,
        )

    async def captures_sent(self, conversation_id: str, person: str) -> None:
        self.waited_for_captures.append(conversation_id)

    def archive(self) -> Archive:
        return Archive(self.db, self.addresses, SECRET, self.clock)

    def standing(self) -> Standing:
        return Standing(self.db, SECRET)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Place]:
    servers = []
    peers: dict[str, Peer] = {}
    addresses = {}
    for name, records in PEER_RECORDS.items():
        peer = peers[name] = Peer(name, {ANN: list(records), BOB: list(records)})
        server = grpc.aio.server()
        persons_pb2_grpc.add_PersonDataServicer_to_server(peer, server)
        addresses[name] = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        await server.start()
        servers.append(server)
    channels = Peers(addresses, 10.0)
    with session_settings(request.param, tmp_path) as settings:
        db = database.service_database(settings, "session")
        clock = Clock()

        try:
            yield Place(
                db,
                ConversationStore.open(db, notify=False, clock=clock),
                peers,
                clock,
                channels,
                tmp_path,
            )
        finally:
            await channels.close()
            await db.dispose()
            for server in servers:
                await server.stop(None)


async def fill(place: Place, person: str) -> None:
    """Something of the person in every session table."""
    store = place.store
    with acting_for(person):
        conversation = await store.conversations.conversation_of(person)
        await store.transcript.append_say(conversation, f"{person}-1", f"{person} asks")
        said = await store.transcript.next_unanswered(conversation.id)
        assert said is not None
        model = await store.model_conversations.start(conversation.id, "first message", "r1", 1)
        await store.transcript.append_answer(conversation, said, "an answer", model.id)
        await store.pins.add(conversation.id, "promise", "call back")
        await store.updates.store(conversation.id, "k1", "ferry", "result", "found it")
        async with place.db() as tx, tx.begin():
            await store.effects.record(tx, conversation.id, "e1", "done")
            await tx.execute(
                insert(account_notices).values(person=person, notice="near:day", created_at=NOW)
            )
        accounts = accounts_of(place)
        await accounts.pseudonym(person)
        await accounts.set_key(person, ApiKey(f"sk-ant-api03-{person}-Zq9xW8vU7tS6rR5qP4oN3-ABCD"))
        await accounts.record_usage(person, [_usage(0.25)])
        await accounts.set_budget(person, 1.0, 10.0)
        hello = Devices(place.db, place.clock).seen_on
        await place.db.run(hello, person, f"{person}-phone", NOW, "Phone 1.0")
        browser = PushAddress("webpush", f"https://push.example/{person}", "key", "secret")
        subscription = Subscription(f"{person}-browser", browser, previews=True)
        await Subscriptions(place.db, place.clock).keep(person, subscription)
        async with place.db() as tx, tx.begin():
            await tx.execute(
                insert(presence).values(follower=f"{person}-f", person=person, until=NOW)
            )
            waiting = {"seq": 2, "kind": "result", "created_at": NOW, "due_at": NOW, "attempts": 0}
            await tx.execute(insert(push_outbox).values(person=person, **waiting))


def accounts_of(place: Place) -> Accounts:
    return Accounts(
        place.db,
        resolve_keyring("", place.home),
        AccountRules(operator_key=True, operator_shared=True),
        _accept,
        place.standing(),
        place.clock,
    )


async def _accept(key: ApiKey, person: str) -> None:
    return None


def _usage(cost: float) -> UsageRow:
    return UsageRow(
        day=NOW.date(),
        call="reply.main",
        payer="operator",
        model="claude-haiku-5-5",
        calls=1,
        input_tokens=100,
        output_tokens=10,
        cost_usd=cost,
    )


async def rows_of(place: Place, person: str) -> dict[str, int]:
    """Rows of the person in each table with a person or a conversation."""
    counts = {}
    with acting_for(person):
        async with place.db() as db:
            conversation = await db.scalar(
                select(metadata.tables["conversations"].c.id).where(
                    metadata.tables["conversations"].c.person == person
                )
            )
            for table in metadata.sorted_tables:
                if "person" in table.c:
                    where = table.c.person == person
                elif "conversation_id" in table.c:
                    where = table.c.conversation_id == conversation
                else:
                    continue
                counts[table.name] = await db.scalar(
                    select(func.count()).select_from(table).where(where)
                )
    return counts


async def archive_of(place: Place, person: str) -> zipfile.ZipFile:
    data = b"".join([chunk async for chunk in place.archive().chunks(person)])
    return zipfile.ZipFile(io.BytesIO(data))


def test_every_session_table_is_placed_for_export_and_removal() -> None:
    assert set(PERSON_TABLES) == set(metadata.tables)


async def test_the_archive_holds_the_person_and_nobody_else(place: Place) -> None:
    await fill(place, ANN)
    await fill(place, BOB)
    archive = await archive_of(place, ANN)
    assert archive.namelist()[0] == "README.md"
    data = json.loads(archive.read("data.json"))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["person"] == ANN
    assert [m["text"] for m in data["conversation"]] == ["ann asks", "an answer"]
    assert data["remembered"][0]["text"] == "Ann's sister is called Joana"
    assert data["told"][0]["sources"][0]["page"] == "https://ferries.example/times"
    assert archive.read(data["documents"][0]["file"]) == b"ferry at 7:40"
    assert data["approvals"] == []
    assert data["devices"][0]["agent"] == "Phone 1.0"
    assert data["notifications"] == [
        {
            "service": "push.example",
            "address": "https://push.example/ann",
            "previews": True,
            "since": "2026-12-03T10:00:00Z",
            "changed": "2026-12-03T10:00:00Z",
        }
    ]
    assert data["usage"][0]["cost_usd"] == pytest.approx(0.25)
    assert data["account"]["own_key"]["ending"] == "ABCD"
    assert data["account"]["budget"] == {"day_usd": 1.0, "month_usd": 10.0}
    readable = archive.read("your-data.md").decode()
    assert "> ann asks" in readable and "The ferry leaves at 7:40." in readable
    everything = b"".join(archive.read(name) for name in archive.namelist())
    assert b"bob" not in everything
    # Nothing internal: no ids of conversations, model conversations or pins.
    assert b"c_" not in archive.read("data.json")


async def test_a_service_breaking_the_sections_order_fails_the_export(place: Place) -> None:
    await fill(place, ANN)
    told, remembered = PEER_RECORDS["memory"][1], PEER_RECORDS["memory"][0]
    place.peers["memory"].records[ANN] = [remembered, told, remembered]
    with pytest.raises(BrokenExport):
        await archive_of(place, ANN)


@pytest.mark.parametrize("place", ["sqlite"], indirect=True)  # the reading is the same
async def test_a_long_conversation_is_archived_in_bounded_memory(place: Place) -> None:
    with acting_for(ANN):
        conversation = await place.store.conversations.conversation_of(ANN)
        text = "a long message that is said again and again " * 20
        async with place.db() as tx, tx.begin():
            await tx.execute(
                insert(messages),
                [
                    {
                        "conversation_id": conversation.id,
                        "seq": seq,
                        "author": "you" if seq % 2 else "violet",
                        "text": f"{seq} {text}",
                        "at": NOW + timedelta(seconds=seq),
                        "answered": True,
                    }
                    for seq in range(1, 10_001)
                ],
            )
    tracemalloc.start()
    try:
        size = 0
        async for chunk in place.archive().chunks(ANN):
            size += len(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    said = 10_000 * len(text)
    assert said > 8_000_000
    assert peak < said / 4, f"peak {peak:,} bytes for {said:,} bytes of messages"
    assert size > 0


async def test_removal_erases_every_session_row_and_asks_every_service(place: Place) -> None:
    await fill(place, ANN)
    await fill(place, BOB)
    before_bob = await rows_of(place, BOB)
    erased = await place.erasure().remove(ANN, "operator")
    assert erased.held
    assert all(count == 0 for count in (await rows_of(place, ANN)).values())
    assert await rows_of(place, BOB) == before_bob
    assert all(peer.erased == [ANN] for peer in place.peers.values())
    assert len(place.waited_for_captures) == 1
    async with place.db() as db:
        row = (await db.execute(select(removals))).one()
        usage = (await db.execute(select(erased_usage))).one()
    assert row.person is None and row.digest == person_digest(SECRET, ANN)
    assert usage.cost_usd == pytest.approx(0.25) and usage.calls == 1
    # Again: nothing left, nothing fails.
    again = await place.erasure().remove(ANN, "operator")
    assert not again.held


async def test_a_removal_that_fails_halfway_is_finished_by_the_sweep(place: Place) -> None:
    await fill(place, ANN)
    place.peers["router"].failures = 1
    with pytest.raises(grpc.aio.AioRpcError):
        await place.erasure().remove(ANN, "person")
    # Halfway: the worker erased, the router not; the person is not served meanwhile.
    assert place.peers["worker"].erased == [ANN] and place.peers["memory"].erased == []
    with pytest.raises(Removed):
        await place.standing().check(ANN)
    assert await place.erasure().resume() == 1
    assert place.peers["memory"].erased == [ANN]
    assert all(count == 0 for count in (await rows_of(place, ANN)).values())
    assert await place.erasure().resume() == 0


async def test_a_removal_under_way_is_left_to_its_replica_and_finished_once(
    place: Place,
) -> None:
    await fill(place, ANN)
    worker = place.peers["worker"]
    worker.gate.clear()
    first = asyncio.create_task(place.erasure("replica-a").remove(ANN, "person"))
    await eventually(lambda: _carried_out_by(place), "the removal under way", every_s=0.01)
    # Another replica's sweep, and a second request, while the first carries it out.
    assert await place.erasure("replica-b").resume() == 0
    second = asyncio.create_task(place.erasure("replica-b").remove(ANN, "person"))
    await asyncio.sleep(0.3)
    assert not second.done()
    worker.gate.set()
    erased = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert erased[0].held and erased[0].at == erased[1].at
    assert worker.erased == [ANN]  # carried out once


async def _carried_out_by(place: Place) -> str | None:
    async with place.db() as db:
        return await db.scalar(select(removals.c.holder))


async def test_old_sign_ins_are_refused_and_a_new_one_starts_afresh(place: Place) -> None:
    await fill(place, ANN)
    standing = place.standing()
    await standing.check(ANN, NOW)
    signed_in_before = NOW - timedelta(days=1)
    place.clock.now = NOW + timedelta(minutes=1)
    await place.erasure().remove(ANN, "person")
    with pytest.raises(Removed):
        await standing.check(ANN, signed_in_before)
    with pytest.raises(Removed):
        await standing.check(ANN)  # a call after an old sign-in
    signed_in_after = NOW + timedelta(minutes=2)
    await standing.check(ANN, signed_in_after)
    place.clock.now = signed_in_after
    with acting_for(ANN):
        fresh = await place.store.conversations.conversation_of(ANN)
        assert await place.store.conversations.last_seq(fresh) == 0
    await standing.check(ANN)
    await standing.check(BOB)


async def test_a_say_is_stored_only_when_its_person_may_be_served_in_the_same_trip(
    place: Place,
) -> None:
    await fill(place, ANN)
    await fill(place, BOB)
    standing, transcript = place.standing(), place.store.transcript
    with acting_for(BOB):
        bob = await place.store.conversations.conversation_of(BOB)
        before = await place.store.conversations.last_seq(bob)
        # The backlog is reached and Bob has no turn in it: refused, nothing stored.
        with pytest.raises(Backlogged):
            await transcript.append_say_to(
                partial(say_destination, standing, BOB, frozenset({"c_someone_else"})),
                "bob-phone",
                "Anyone there?",
                nothing_more,
            )
        assert await place.store.conversations.last_seq(bob) == before
        # His turns queue anyway once one of them is in it.
        placed = await transcript.append_say_to(
            partial(say_destination, standing, BOB, frozenset({bob.id})),
            "bob-phone",
            "Hi!",
            nothing_more,
        )
        assert placed is not None and placed[0] == bob.id and placed[1].seq == before + 1
    # Ann's removal is under way: her conversation is still there, and her say is refused.
    worker = place.peers["worker"]
    worker.gate.clear()
    removal = asyncio.create_task(place.erasure().remove(ANN, "person"))
    await eventually(lambda: _carried_out_by(place), "the removal under way", every_s=0.01)
    with acting_for(ANN):
        ann = await place.store.conversations.conversation_of(ANN)
        before = await place.store.conversations.last_seq(ann)
        with pytest.raises(Removed):
            await transcript.append_say_to(
                partial(say_destination, standing, ANN, None),
                "ann-old-phone",
                "Still here?",
                nothing_more,
            )
        assert await place.store.conversations.last_seq(ann) == before
    worker.gate.set()
    await asyncio.wait_for(removal, 10)


async def test_a_pseudonym_names_nobody_once_its_person_is_removed(place: Place) -> None:
    accounts = accounts_of(place)
    with acting_for(ANN):
        first = await accounts.pseudonym(ANN)
        assert first == await accounts.pseudonym(ANN) == (await accounts.credential(ANN)).pseudonym
    assert ANN not in first and len(first) == 32
    with acting_for(BOB):
        assert await accounts.pseudonym(BOB) != first
    await place.erasure().remove(ANN, "operator")
    with acting_for(ANN):
        assert await accounts.pseudonym(ANN) != first


async def test_tombstones_go_once_no_token_that_old_is_valid(place: Place) -> None:
    await place.erasure().remove(ANN, "operator")
    place.clock.now = NOW + timedelta(days=91)
    await place.erasure().purge()
    async with place.db() as db:
        assert await db.scalar(select(func.count()).select_from(removals)) == 0


async def test_a_device_saying_hello_again_is_one_device_seen_since(place: Place) -> None:
    hello = Devices(place.db, place.clock).seen_on
    with acting_for(ANN):
        await place.db.run(hello, ANN, "phone", NOW, "Phone 1.0")
        place.clock.now = NOW + timedelta(hours=1)
        await place.db.run(hello, ANN, "phone", NOW, "Phone 1.0")
    [device] = [record async for record in _devices(place)]
    assert device["first_seen"] == "2026-12-03T10:00:00Z"
    assert device["last_seen"] == "2026-12-03T11:00:00Z"


async def _devices(place: Place) -> AsyncIterator[dict]:
    archive = await archive_of(place, ANN)
    for device in json.loads(archive.read("data.json"))["devices"]:
        yield device


async def test_usage_reported_after_a_removal_is_kept_in_sums_that_name_nobody(
    place: Place,
) -> None:
    await fill(place, ANN)
    await place.erasure().remove(ANN, "operator")
    # A call of hers that was in flight as she went, reported by its service a moment later.
    await accounts_of(place).record_usage(ANN, [_usage(0.5)])
    assert all(count == 0 for count in (await rows_of(place, ANN)).values())
    async with place.db() as db:
        usage = (await db.execute(select(erased_usage))).one()
    assert usage.cost_usd == pytest.approx(0.75) and usage.calls == 2


async def test_a_call_for_a_person_removed_is_refused_and_makes_nothing_of_theirs(
    place: Place,
) -> None:
    await fill(place, ANN)
    await place.erasure().remove(ANN, "operator")

    async def language_of(person: str) -> str:
        assert await place.store.conversations.found(person) is None  # none made by asking
        return "en"

    service = AccountsService(accounts_of(place), SECRET, language_of, place.standing())
    add = accounts_pb2_grpc.add_AccountsServicer_to_server
    async with serving(add, service) as address, grpc.aio.insecure_channel(address) as channel:
        stub = accounts_pb2_grpc.AccountsStub(channel)
        ann = service_identity(ANN, SECRET).metadata()
        for call in (
            stub.Credential(accounts_pb2.CredentialRequest(), metadata=ann),
            stub.Show(accounts_pb2.ShowRequest(), metadata=ann),
            stub.SetKey(accounts_pb2.SetKeyRequest(key="sk-ant-api03-x"), metadata=ann),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert all(count == 0 for count in (await rows_of(place, ANN)).values())


async def test_a_device_signed_out_is_refused_from_then_on_and_the_others_go_on(
    place: Place,
) -> None:
    devices = Devices(place.db, place.clock)
    phone, laptop = "a" * 64, "b" * 64
    with acting_for(ANN):
        await place.db.run(devices.seen_on, ANN, phone, NOW, "Phone 1.0")
        place.clock.now = NOW + timedelta(minutes=5)
        await place.db.run(devices.seen_on, ANN, laptop, NOW, "Laptop 2.0")
        await place.store.conversations.conversation_of(ANN)
    subscriptions = Subscriptions(place.db)
    browser = PushAddress("webpush", "https://push.example/ann-phone", "key", "secret")
    with acting_for(ANN):
        await subscriptions.keep(ANN, Subscription("ann-browser", browser, True, phone))
    listed = await devices.listed(ANN, asking=laptop)
    assert [(d.handle, d.agent, d.this_device) for d in listed] == [
        (laptop[:16], "Laptop 2.0", True),
        (phone[:16], "Phone 1.0", False),
    ]

    assert await devices.sign_out(ANN, phone[:16]) is not None
    with pytest.raises(Removed):
        await place.standing().check(ANN, NOW, device=phone)
    await place.standing().check(ANN, NOW, device=laptop)
    assert [d.handle for d in await devices.listed(ANN)] == [laptop[:16]]
    with acting_for(ANN):
        assert await subscriptions.of(ANN) == []  # its notifications stopped
    with pytest.raises(UnknownDevice):
        await devices.sign_out(ANN, phone[:16])  # signed out already
    with pytest.raises(UnknownDevice):
        await devices.sign_out(BOB, laptop[:16])  # not his


async def test_every_device_signed_out_refuses_every_sign_in_until_then_never_used_ones_too(
    place: Place,
) -> None:
    devices = Devices(place.db, place.clock)
    with acting_for(ANN):
        await place.db.run(devices.seen_on, ANN, "a" * 64, NOW, "Phone 1.0")
        await place.store.conversations.conversation_of(ANN)
    place.clock.now = NOW + timedelta(hours=1)
    await devices.sign_out(ANN, None)
    assert await devices.listed(ANN) == []
    with pytest.raises(Removed):
        await place.standing().check(ANN, NOW + timedelta(minutes=30))  # issued before, unused
    await place.standing().check(ANN, NOW + timedelta(hours=2))  # a sign-in since
