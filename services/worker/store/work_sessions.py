"""Work sessions: one per topic, each with its own model conversation, a version that counts
its changes, the results held while a tool call waits, and the lease that lets one replica run
it at a time."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from sqlalchemy import insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.database import across_people, conflict_insert, is_postgres_session, rows_changed
from violet.leases import Lease, LeaseColumns
from violet.models import ModelMessage
from worker.store.encoding import as_json
from worker.tables import approvals, work_messages, work_requests, work_sessions

WORK_SESSION_LEASE = LeaseColumns(
    work_sessions.c.id, work_sessions.c.lease_holder, work_sessions.c.lease_until
)


def _new_topic() -> str:
    return "t_" + secrets.token_hex(8)


class HeldResult(TypedDict):
    """A tool call's result, kept until every call of its step has one."""

    content: str
    is_error: bool


class StaleWorkSession(Exception):
    """Another replica changed the work session since it was loaded here."""


class WorkSessionGone(StaleWorkSession):
    """The work session is no longer stored: its person's data was erased."""


@dataclass
class WorkSession:
    id: str
    person: str
    title: str
    version: int
    held: dict[str, HeldResult] = field(default_factory=dict)
    messages: list[ModelMessage] = field(default_factory=list)


async def _messages(db: AsyncSession, work_session_id: str) -> list[ModelMessage]:
    contents = await db.scalars(
        select(work_messages.c.content)
        .where(work_messages.c.session_id == work_session_id)
        .order_by(work_messages.c.position)
    )
    return [json.loads(content) for content in contents]


class WorkSessions:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._database = database
        self._clock = clock

    def lease(self, replica: str, lease_s: float) -> Lease:
        """The leases `replica` runs work sessions under."""
        return Lease(self._database, WORK_SESSION_LEASE, replica, lease_s, self._clock)

    async def open(
        self, tx: AsyncSession, person: str, topic: str, title: str, moment: datetime
    ) -> str:
        """The person's work session for `topic`, made when the topic is empty or unknown, or
        under a fresh id when it is someone else's."""
        if topic:
            owner = await tx.scalar(
                select(work_sessions.c.person).where(work_sessions.c.id == topic)
            )
            if owner == person:
                return topic
            if owner is not None:
                topic = ""
        topic = topic or _new_topic()
        # A topic of another person's is hidden from this one by row-level security; its id is
        # taken all the same, so the work opens under a new one.
        while not await self._insert(tx, topic, person, title, moment):
            topic = _new_topic()
        return topic

    @staticmethod
    async def _insert(
        tx: AsyncSession, topic: str, person: str, title: str, moment: datetime
    ) -> bool:
        """Makes the work session; False when its id is taken."""
        inserted = await tx.execute(
            conflict_insert(work_sessions, postgres=is_postgres_session(tx))
            .values(
                id=topic,
                person=person,
                title=title,
                created_at=moment,
                last_active=moment,
                version=0,
                held_results="{}",
                loads=0,
            )
            .on_conflict_do_nothing(index_elements=[work_sessions.c.id])
            .returning(work_sessions.c.id)
        )
        return inserted.first() is not None

    async def load(self, work_session_id: str, replica: str) -> WorkSession:
        """The work session with its whole model conversation, marked loaded by `replica`."""
        async with self._database() as tx, tx.begin():
            await tx.execute(
                update(work_sessions)
                .where(work_sessions.c.id == work_session_id)
                .values(loaded_by=replica, loads=work_sessions.c.loads + 1, unloaded_at=None)
            )
            row = (
                await tx.execute(select(work_sessions).where(work_sessions.c.id == work_session_id))
            ).one_or_none()
            if row is None:
                raise WorkSessionGone(work_session_id)
            messages = await _messages(tx, work_session_id)
        return WorkSession(
            row.id, row.person, row.title, row.version, json.loads(row.held_results), messages
        )

    async def read(self, person: str, work_session_id: str) -> WorkSession | None:
        """The person's work session as stored, to read only: neither loaded nor leased, so it
        may be running elsewhere. None when it is not the person's, whoever's it is."""
        async with self._database() as db:
            row = (
                await db.execute(
                    select(work_sessions)
                    .where(work_sessions.c.id == work_session_id)
                    .where(work_sessions.c.person == person)
                )
            ).one_or_none()
            if row is None:
                return None
            messages = await _messages(db, work_session_id)
        return WorkSession(
            row.id, row.person, row.title, row.version, json.loads(row.held_results), messages
        )

    async def version_of(self, work_session_id: str) -> int:
        async with self._database() as db:
            found = await db.scalar(
                select(work_sessions.c.version).where(work_sessions.c.id == work_session_id)
            )
        if found is None:
            raise WorkSessionGone(work_session_id)
        return int(found)

    async def mark_unloaded(self, work_session_id: str, replica: str) -> None:
        async with self._database() as tx, tx.begin():
            await tx.execute(
                update(work_sessions)
                .where(work_sessions.c.id == work_session_id)
                .where(work_sessions.c.loaded_by == replica)
                .values(loaded_by=None, unloaded_at=self._clock())
            )

    async def stored(self, person: str, work_session_ids: Collection[str]) -> set[str]:
        """Which of the person's work sessions are still stored."""
        async with self._database() as db:
            found = await db.scalars(
                select(work_sessions.c.id)
                .where(work_sessions.c.person == person)
                .where(work_sessions.c.id.in_(work_session_ids))
            )
            return set(found)

    @contextlib.asynccontextmanager
    async def present(self, work_session_id: str) -> AsyncIterator[None]:
        """Holds the work session's row while the block changes the person's folder, so an
        erase (which locks the rows before it removes them, and the folder after) either waits
        for the block or is done, and then the block does not run: WorkSessionGone."""
        async with self._database() as tx, tx.begin():
            touched = await tx.execute(
                update(work_sessions)
                .where(work_sessions.c.id == work_session_id)
                .values(last_active=self._clock())
            )
            if rows_changed(touched) != 1:
                raise WorkSessionGone(work_session_id)
            yield

    async def runnable(self) -> list[tuple[str, str]]:
        """(work session, person) of every work session with work to do and no live holder."""
        open_requests = select(work_requests.c.session_id).where(
            work_requests.c.status.in_(("pending", "running"))
        )
        answered = select(approvals.c.session_id).where(
            approvals.c.status.in_(("approved", "declined", "sending"))
        )
        moment = self._clock()
        runnable = (
            select(work_sessions.c.id, work_sessions.c.person)
            .where(
                or_(
                    work_sessions.c.id.in_(open_requests),
                    work_sessions.c.id.in_(answered),
                )
            )
            .where(WORK_SESSION_LEASE.free(moment))
        )
        async with self._database() as db:
            rows = await across_people(db, "worker_runnable_sessions", runnable, moment=moment)
            return [(row.id, row.person) for row in rows]

    async def append(
        self, tx: AsyncSession, work_session: WorkSession, new: list[ModelMessage], request_id: int
    ) -> None:
        """Adds messages to the work session's model conversation, in a step that counted its
        change (`bump`)."""
        moment = self._clock()
        await tx.execute(
            insert(work_messages),
            [
                {
                    "session_id": work_session.id,
                    "position": len(work_session.messages) + offset,
                    "role": message["role"],
                    "content": as_json(message),
                    "request_id": request_id,
                    "created_at": moment,
                }
                for offset, message in enumerate(new)
            ],
        )
        # A step that fails after this drops the loaded copy, so it never runs ahead of the rows.
        work_session.messages.extend(new)

    async def hold(
        self, tx: AsyncSession, work_session: WorkSession, held: dict[str, HeldResult]
    ) -> None:
        """Keeps the results of the round of tool calls gathered so far, in a step that counted
        its change (`bump`)."""
        await tx.execute(
            update(work_sessions)
            .where(work_sessions.c.id == work_session.id)
            .values(held_results=as_json(held))
        )
        work_session.held = held

    async def bump(self, tx: AsyncSession, work_session: WorkSession) -> None:
        """Counts a step's change, provided nobody else changed the work session since it was
        loaded. The first statement of every step: it locks the row until the step ends."""
        result = await tx.execute(
            update(work_sessions)
            .where(work_sessions.c.id == work_session.id)
            .where(work_sessions.c.version == work_session.version)
            .values(version=work_session.version + 1, last_active=self._clock())
        )
        if rows_changed(result) != 1:
            still = await tx.scalar(
                select(work_sessions.c.id).where(work_sessions.c.id == work_session.id)
            )
            raise (StaleWorkSession if still else WorkSessionGone)(work_session.id)
        work_session.version += 1
