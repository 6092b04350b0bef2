"""A device opening its conversation (`SessionService.Open`) and its stream of it
(`SessionService.Follow`) on a real transcript: each opens in one trip to the database; a device
far behind gets every message at once, page after page, and then what this replica stores."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import grpc
import pytest
from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from session import service as service_module
from session.devices import Devices
from session.erasure import Standing, person_digest
from session.feed import Feed
from session.notify.presence import Follower, Presence
from session.service import SessionService
from session.store import ConversationStore
from session.tables import conversations, devices, presence, removals
from tests.support.fakes import session_tables
from tests.support.session_db import session_settings
from violet import database
from violet.database import Database
from violet.identity import Identity, acting_for, service_identity
from violet.v1 import session_pb2

T = TypeVar("T")

SECRET = "a secret only this test knows"
# Longer than the test: only a wake-up, or a full page read, makes the stream look again.
NEVER_S = 3600.0
SIGNED_IN = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


class Ended(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"the call ended: {code} {details}")
        self.code = code


class Context:
    """The call's context as the service uses it: its token, and how it ends."""

    def __init__(self, person: str) -> None:
        self._metadata = service_identity(person, SECRET).metadata()

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Ended(code, details)


class Memory:
    """Memory as opening the conversation uses it: told to get ready."""

    def __init__(self) -> None:
        self.prepared: list[str] = []

    def prepare(self, identity: Identity) -> None:
        self.prepared.append(identity.person)


def session_service(db: Database, store: ConversationStore, feed: Feed) -> SessionService:
    """The service as opening and following use it: no turn is started."""
    return SessionService(
        store,
        None,  # type: ignore[arg-type]
        feed,
        None,  # type: ignore[arg-type]
        Memory(),  # type: ignore[arg-type]
        SECRET,
        Standing(db, SECRET),
        Devices(db),
        Presence(db),
    )


def trips(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each hand-off of work to the database's threads from now on, by name."""
    handed: list[str] = []
    submit = db.submit

    def counted(call: Callable[..., T], *args: object) -> Future[T]:
        handed.append(
            getattr(args[1], "__name__", "") if call.__name__ == "_transaction" else call.__name__
        )
        return submit(call, *args)

    monkeypatch.setattr(db, "submit", counted)
    return handed


def opening(device: str = "phone") -> session_pb2.OpenRequest:
    return session_pb2.OpenRequest(
        device=device, signed_in_at_unix=int(SIGNED_IN.timestamp()), agent="Phone 1.0"
    )


async def test_a_device_opens_the_conversation_in_one_trip_made_on_first_contact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with session_tables(tmp_path) as db:
        store = ConversationStore.open(db, notify=False)
        service = session_service(db, store, Feed(NEVER_S, NEVER_S))
        handed = trips(db, monkeypatch)
        first = await service.Open(opening(), Context("ana"))  # type: ignore[arg-type]
        assert handed == ["_opened_on"]
        assert first.seq == 0
        with acting_for("ana"):
            conversation = await store.conversations.conversation_of("ana")
            assert first.conversation == conversation.id
            await store.transcript.append_say(conversation, "d1", "Hello.")
        handed.clear()
        again = await service.Open(opening("laptop"), Context("ana"))  # type: ignore[arg-type]
        assert handed == ["_opened_on"]
        assert (again.conversation, again.seq) == (first.conversation, 1)
        others = await service.Open(opening(), Context("bo"))  # type: ignore[arg-type]
        assert others.conversation != first.conversation
        async with db() as read:
            rows = await read.execute(select(devices.c.person, devices.c.device))
            seen = sorted(tuple(row) for row in rows)
        assert seen == [("ana", "laptop"), ("ana", "phone"), ("bo", "phone")]


async def test_a_removed_person_opens_nothing_and_leaves_no_trace(tmp_path: Path) -> None:
    async with session_tables(tmp_path) as db:
        store = ConversationStore.open(db, notify=False)
        service = session_service(db, store, Feed(NEVER_S, NEVER_S))
        async with db() as tx, tx.begin():
            await tx.execute(
                insert(removals).values(
                    digest=person_digest(SECRET, "ana"),
                    person="ana",
                    requested_at=SIGNED_IN,
                    requested_by="person",
                )
            )
        with pytest.raises(Ended) as ended:
            await service.Open(opening(), Context("ana"))  # type: ignore[arg-type]
        assert ended.value.code == grpc.StatusCode.UNAUTHENTICATED
        stream = service.Follow(session_pb2.FollowRequest(since=0), Context("ana"))  # type: ignore[arg-type]
        with pytest.raises(Ended):
            await anext(stream)
        async with db() as read:
            for table in (conversations, devices, presence):
                assert await read.scalar(select(func.count()).select_from(table)) == 0


async def next_seq(stream: AsyncIterator[session_pb2.ConversationEvent]) -> int:
    event = await asyncio.wait_for(anext(stream), 5)
    return event.message.seq


async def test_a_device_far_behind_gets_every_page_at_once_then_what_is_stored_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "SINCE_PAGE", 3)
    async with session_tables(tmp_path) as db:
        store = ConversationStore.open(db, notify=False)
        feed = Feed(NEVER_S, NEVER_S)
        with acting_for("ana"):
            conversation = await store.conversations.conversation_of("ana")
            for number in range(7):
                await store.transcript.append_say(conversation, f"d{number}", f"line {number}")
        service = session_service(db, store, feed)
        handed = trips(db, monkeypatch)
        stream = service.Follow(
            session_pb2.FollowRequest(since=0),
            Context("ana"),  # type: ignore[arg-type]
        )
        try:
            # 7 messages, pages of 3: all of them, with no wake-up between the pages.
            assert [await next_seq(stream) for _ in range(7)] == list(range(1, 8))
            # Its standing, its presence and the conversation in one trip, then the pages.
            assert handed == ["_opened_on", "since_on", "since_on", "since_on"]
            async with db() as read:
                assert await read.scalar(select(presence.c.person)) == "ana"
            with acting_for("ana"):
                appended = await store.transcript.append_say(conversation, "d7", "line 7")
            feed.publish(conversation.id, appended.stored)
            assert await next_seq(stream) == 8
        finally:
            await stream.aclose()
        async with db() as read:
            assert await read.scalar(select(func.count()).select_from(presence)) == 0


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_a_stream_cancelled_while_it_opens_leaves_no_presence(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gateway gives up on a stream (the device went away) while its opening trip runs.
    # Its presence row must not outlive it: it would count the person as following for
    # minutes, and a notification meanwhile would be dropped as seen.
    arriving, release = threading.Event(), threading.Event()
    arrive_on = Follower.arrive_on

    def slow_arrival(follower: Follower, connection: Connection) -> None:
        arriving.set()
        release.wait(10)
        arrive_on(follower, connection)

    monkeypatch.setattr(Follower, "arrive_on", slow_arrival)
    with session_settings(backend, tmp_path) as settings:
        db = database.service_database(settings, "session")
        try:
            store = ConversationStore.open(db, notify=False)
            service = session_service(db, store, Feed(NEVER_S, NEVER_S))
            stream = service.Follow(session_pb2.FollowRequest(since=0), Context("ana"))  # type: ignore[arg-type]
            first = asyncio.ensure_future(anext(stream))
            await asyncio.to_thread(arriving.wait, 10)
            first.cancel()
            # A stream that did not wait for its opening trip would be gone by now, its row
            # removed before it was made.
            await asyncio.wait({first}, timeout=0.5)
            assert not first.done()
            release.set()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(first, 10)
            with acting_for("ana"):
                left = await db.scalar(select(func.count()).select_from(presence))
            assert left == 0
        finally:
            await db.dispose()


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_two_replicas_opening_a_new_persons_conversation_at_once_make_one(
    backend: str, tmp_path: Path
) -> None:
    with session_settings(backend, tmp_path) as settings:
        replicas = [database.service_database(settings, "session") for _ in range(2)]
        try:
            opened = [ConversationStore.open(db, notify=False).conversations for db in replicas]
            with acting_for("ana"):
                for _ in range(5):  # first contacts, raced
                    ids = await asyncio.gather(
                        *(conversations_.conversation_of("ana") for conversations_ in opened)
                    )
                    assert ids[0] == ids[1]
                    async with replicas[0]() as tx, tx.begin():
                        await tx.execute(delete(conversations))
        finally:
            for db in replicas:
                await db.dispose()
