"""What the person asked of their work sessions: one request a turn, done in order, each at most
once per key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from worker.store.erasures import refuse_while_erasing
from worker.store.work_sessions import WorkSessions
from worker.tables import work_requests

RequestStatus = Literal["pending", "running", "waiting", "done"]


@dataclass(frozen=True)
class Request:
    id: int
    work_session_id: str
    person: str
    text: str
    status: RequestStatus
    steps: int
    trace_id: str | None = None
    span_id: str | None = None


@dataclass(frozen=True)
class Asked:
    """A request as the person's archive shows it."""

    id: int
    text: str
    status: RequestStatus
    outcome: str | None
    created_at: datetime
    finished_at: datetime | None


def _request(row: Any) -> Request:
    return Request(
        row.id,
        row.session_id,
        row.person,
        row.text,
        row.status,
        row.steps,
        row.trace_id,
        row.span_id,
    )


class Requests:
    def __init__(
        self,
        database: async_sessionmaker[AsyncSession],
        clock: Clock,
        work_sessions: WorkSessions,
    ) -> None:
        self._database = database
        self._clock = clock
        self._work_sessions = work_sessions

    async def start(
        self,
        person: str,
        topic: str,
        text: str,
        *,
        title: str,
        key: str = "",
        trace_id: str | None = None,
        span_id: str | None = None,
    ) -> str:
        """Adds the request to the person's work session for `topic` and returns that work
        session's id, in one transaction. The topic is a new work session when it is empty,
        unknown, or not the person's (then under a fresh id). A request whose `key` the person's
        work already holds adds nothing: the topic it went to the first time is returned.
        Raises BeingErased while the person's data is being erased."""
        moment = self._clock()
        try:
            async with self._database() as tx, tx.begin():
                await refuse_while_erasing(tx, person)
                if key and (found := await self._keyed(tx, person, key)):
                    return found
                topic = await self._work_sessions.open(tx, person, topic, title, moment)
                await tx.execute(
                    insert(work_requests).values(
                        session_id=topic,
                        person=person,
                        text=text,
                        key=key or None,
                        status="pending",
                        steps=0,
                        created_at=moment,
                        trace_id=trace_id,
                        span_id=span_id,
                    )
                )
        except IntegrityError:  # the same request, sent twice at once: the other one won
            async with self._database() as db:
                found = await self._keyed(db, person, key) if key else None
            if found is None:
                raise
            return found
        return topic

    @staticmethod
    async def _keyed(db: AsyncSession, person: str, key: str) -> str | None:
        """The topic of the person's request with this key, if there is one."""
        found = await db.scalar(
            select(work_requests.c.session_id)
            .where(work_requests.c.person == person)
            .where(work_requests.c.key == key)
        )
        return None if found is None else str(found)

    async def current(self, work_session_id: str) -> Request | None:
        """The request under way (running or waiting), else the next pending one."""
        async with self._database() as db:
            rows = await db.execute(
                select(work_requests)
                .where(work_requests.c.session_id == work_session_id)
                .where(work_requests.c.status != "done")
                .order_by(work_requests.c.id)
            )
            open_requests = [_request(row) for row in rows]
        for request in open_requests:
            if request.status != "pending":
                return request
        return open_requests[0] if open_requests else None

    async def texts_of(self, work_session_id: str) -> list[str]:
        """What the person asked of the work session, oldest first."""
        async with self._database() as db:
            found = await db.scalars(
                select(work_requests.c.text)
                .where(work_requests.c.session_id == work_session_id)
                .order_by(work_requests.c.id)
            )
            return list(found)

    async def outcomes(self, work_session_id: str) -> list[tuple[str, str]]:
        """(request, outcome) of the work session's finished requests, oldest first."""
        async with self._database() as db:
            rows = await db.execute(
                select(work_requests.c.text, work_requests.c.outcome)
                .where(work_requests.c.session_id == work_session_id)
                .where(work_requests.c.status == "done")
                .order_by(work_requests.c.id)
            )
            return [(row.text, row.outcome or "") for row in rows]

    async def page_of(self, person: str, after: int, size: int) -> list[Asked]:
        """Up to `size` of the person's requests made after the one numbered `after`, oldest
        first."""
        async with self._database() as db:
            rows = await db.execute(
                select(
                    work_requests.c.id,
                    work_requests.c.text,
                    work_requests.c.status,
                    work_requests.c.outcome,
                    work_requests.c.created_at,
                    work_requests.c.finished_at,
                )
                .where(work_requests.c.person == person)
                .where(work_requests.c.id > after)
                .order_by(work_requests.c.id)
                .limit(size)
            )
            return [
                Asked(r.id, r.text, r.status, r.outcome, r.created_at, r.finished_at) for r in rows
            ]

    @staticmethod
    async def change(tx: AsyncSession, request_id: int, **values: Any) -> None:
        await tx.execute(
            update(work_requests).where(work_requests.c.id == request_id).values(**values)
        )
