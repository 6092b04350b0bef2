"""The worker's storage: every change a work session makes is one transaction, so a worker that
stops at any point resumes from exactly where it was.

Every query names the person or a work session found through the person. On PostgreSQL each
transaction also names the person it acts for (`violet.database`); the sweep and the outbox
learn who has something due from the owner's scan functions, which return ids and people only.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet import database
from violet.identity import acting_for
from worker.tables import approvals, outbox, work_messages, work_requests, work_sessions

RequestStatus = Literal["pending", "running", "waiting", "done"]
OutgoingKind = Literal["result", "approval", "card"]


def now() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands datetimes back without their zone; they were stored in UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _new_topic() -> str:
    return "t_" + secrets.token_hex(8)


class StaleSession(Exception):
    """Another replica changed the work session since it was loaded here."""


@dataclass
class WorkSession:
    id: str
    person: str
    title: str
    version: int
    held: dict[str, dict] = field(default_factory=dict)
    messages: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class Request:
    id: int
    session_id: str
    person: str
    text: str
    status: RequestStatus
    steps: int
    trace_id: str | None = None
    span_id: str | None = None


@dataclass(frozen=True)
class Approval:
    id: str
    session_id: str
    person: str
    request_id: int
    tool_use_id: str
    action: str
    payload: dict
    question: str
    status: str


@dataclass(frozen=True)
class Outgoing:
    id: int
    person: str
    topic: str
    kind: OutgoingKind
    key: str
    payload: dict
    attempts: int


@dataclass(frozen=True)
class Finished:
    """A request as another work session sees it: what was asked and what came of it."""

    session_id: str
    title: str
    request: str
    outcome: str
    at: datetime


@dataclass(frozen=True)
class Send:
    """An update to store in the outbox together with the step that made it."""

    kind: OutgoingKind
    key: str
    payload: dict


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


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


def _approval(row: Any) -> Approval:
    return Approval(
        row.id,
        row.session_id,
        row.person,
        row.request_id,
        row.tool_use_id,
        row.action,
        json.loads(row.payload),
        row.question,
        row.status,
    )


class WorkStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    # --- work sessions ------------------------------------------------------------------------

    async def start_request(
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
        """Adds the request to the person's work session for `topic` and returns that session's
        id, in one transaction. The topic is a new session when it is empty, unknown, or not the
        person's (then under a fresh id). A request whose `key` the person's work already holds
        adds nothing: the topic it went to the first time is returned."""
        moment = now()
        try:
            async with self._sessions() as db, db.begin():
                if key and (found := await self._keyed(db, person, key)):
                    return found
                topic = await self._open_session(db, person, topic, title, moment)
                await db.execute(
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
            async with self._sessions() as db:
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

    async def _open_session(
        self, db: AsyncSession, person: str, topic: str, title: str, moment: datetime
    ) -> str:
        if topic:
            owner = await db.scalar(
                select(work_sessions.c.person).where(work_sessions.c.id == topic)
            )
            if owner == person:
                return topic
            if owner is not None:
                topic = ""
        topic = topic or _new_topic()
        # A topic of another person's is hidden from this one by row-level security; its id is
        # taken all the same, so the work opens under a new one.
        while not await self._insert_session(db, topic, person, title, moment):
            topic = _new_topic()
        return topic

    @staticmethod
    async def _insert_session(
        db: AsyncSession, topic: str, person: str, title: str, moment: datetime
    ) -> bool:
        postgres = db.bind.dialect.name == "postgresql"
        inserted = await db.execute(
            (postgres_insert if postgres else sqlite_insert)(work_sessions)
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

    async def load(self, session_id: str, replica: str) -> WorkSession:
        """The work session with its whole model conversation, marked loaded by `replica`."""
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(work_sessions)
                .where(work_sessions.c.id == session_id)
                .values(loaded_by=replica, loads=work_sessions.c.loads + 1, unloaded_at=None)
            )
            row = (
                await db.execute(select(work_sessions).where(work_sessions.c.id == session_id))
            ).one()
            contents = await db.scalars(
                select(work_messages.c.content)
                .where(work_messages.c.session_id == session_id)
                .order_by(work_messages.c.position)
            )
            messages = [json.loads(content) for content in contents]
        return WorkSession(
            row.id, row.person, row.title, row.version, json.loads(row.held_results), messages
        )

    async def version_of(self, session_id: str) -> int:
        async with self._sessions() as db:
            return int(
                await db.scalar(
                    select(work_sessions.c.version).where(work_sessions.c.id == session_id)
                )
            )

    async def mark_unloaded(self, session_id: str, replica: str) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(work_sessions)
                .where(work_sessions.c.id == session_id)
                .where(work_sessions.c.loaded_by == replica)
                .values(loaded_by=None, unloaded_at=now())
            )

    async def claim(self, session_id: str, replica: str, lease_s: float) -> bool:
        moment = now()
        async with self._sessions() as db, db.begin():
            result = await db.execute(
                update(work_sessions)
                .where(work_sessions.c.id == session_id)
                .where(
                    or_(
                        work_sessions.c.lease_until.is_(None),
                        work_sessions.c.lease_until < moment,
                        work_sessions.c.lease_holder == replica,
                    )
                )
                .values(lease_holder=replica, lease_until=moment + timedelta(seconds=lease_s))
            )
            return result.rowcount == 1

    async def release(self, session_id: str, replica: str) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(work_sessions)
                .where(work_sessions.c.id == session_id)
                .where(work_sessions.c.lease_holder == replica)
                .values(lease_holder=None, lease_until=None)
            )

    async def runnable(self) -> list[tuple[str, str]]:
        """(work session, person) of every session with work to do and no live holder."""
        moment = now()
        open_requests = select(work_requests.c.session_id).where(
            work_requests.c.status.in_(("pending", "running"))
        )
        answered = select(approvals.c.session_id).where(
            approvals.c.status.in_(("approved", "declined", "sending"))
        )
        runnable = (
            select(work_sessions.c.id, work_sessions.c.person)
            .where(
                or_(
                    work_sessions.c.id.in_(open_requests),
                    work_sessions.c.id.in_(answered),
                )
            )
            .where(or_(work_sessions.c.lease_until.is_(None), work_sessions.c.lease_until < moment))
        )
        async with self._sessions() as db:
            rows = await database.across_people(
                db, "worker_runnable_sessions", runnable, moment=moment
            )
            return [(row.id, row.person) for row in rows]

    async def others_finished(self, person: str, besides: str) -> list[Finished]:
        """The newest finished request of each of the person's other work sessions."""
        newest = (
            select(work_requests.c.session_id, func.max(work_requests.c.id).label("last"))
            .where(work_requests.c.person == person)
            .where(work_requests.c.session_id != besides)
            .where(work_requests.c.status == "done")
            .group_by(work_requests.c.session_id)
            .subquery()
        )
        async with self._sessions() as db:
            rows = await db.execute(
                select(
                    work_requests.c.session_id,
                    work_sessions.c.title,
                    work_requests.c.text,
                    work_requests.c.outcome,
                    work_requests.c.finished_at,
                )
                .join(newest, newest.c.last == work_requests.c.id)
                .join(work_sessions, work_sessions.c.id == work_requests.c.session_id)
                .where(work_sessions.c.person == person)
                .order_by(work_requests.c.finished_at.desc())
            )
            return [
                Finished(r.session_id, r.title, r.text, r.outcome or "", aware(r.finished_at))
                for r in rows
            ]

    async def requests_of(self, session_id: str) -> list[str]:
        """What the person asked of the work session, oldest first."""
        async with self._sessions() as db:
            found = await db.scalars(
                select(work_requests.c.text)
                .where(work_requests.c.session_id == session_id)
                .order_by(work_requests.c.id)
            )
            return list(found)

    async def outcomes(self, session_id: str) -> list[tuple[str, str]]:
        """(request, outcome) of the session's finished requests, oldest first."""
        async with self._sessions() as db:
            rows = await db.execute(
                select(work_requests.c.text, work_requests.c.outcome)
                .where(work_requests.c.session_id == session_id)
                .where(work_requests.c.status == "done")
                .order_by(work_requests.c.id)
            )
            return [(row.text, row.outcome or "") for row in rows]

    # --- requests -----------------------------------------------------------------------------

    async def current_request(self, session_id: str) -> Request | None:
        """The request under way (running or waiting), else the next pending one."""
        async with self._sessions() as db:
            rows = await db.execute(
                select(work_requests)
                .where(work_requests.c.session_id == session_id)
                .where(work_requests.c.status != "done")
                .order_by(work_requests.c.id)
            )
            open_requests = [_request(row) for row in rows]
        for request in open_requests:
            if request.status != "pending":
                return request
        return open_requests[0] if open_requests else None

    # --- the steps of a turn, each one transaction --------------------------------------------

    async def begin(self, session: WorkSession, request: Request, message: dict) -> None:
        async with self._sessions() as db, db.begin():
            await self._append(db, session, [message], request.id)
            await self._set_request(db, request.id, status="running")

    async def record_reply(
        self, session: WorkSession, request: Request, content: list[dict]
    ) -> None:
        async with self._sessions() as db, db.begin():
            await self._append(db, session, [{"role": "assistant", "content": content}], request.id)
            await self._set_request(db, request.id, steps=request.steps + 1)

    async def hold_result(self, session: WorkSession, tool_use_id: str, result: dict) -> None:
        async with self._sessions() as db, db.begin():
            await self._hold(db, session, {**session.held, tool_use_id: result})

    async def hold_for_approval(
        self,
        session: WorkSession,
        request: Request,
        tool_use_id: str,
        action: str,
        payload: dict,
        question: str,
        card: dict,
    ) -> Approval:
        approval = Approval(
            "ap_" + secrets.token_hex(8),
            session.id,
            session.person,
            request.id,
            tool_use_id,
            action,
            payload,
            question,
            "waiting",
        )
        async with self._sessions() as db, db.begin():
            await db.execute(
                insert(approvals).values(
                    id=approval.id,
                    session_id=session.id,
                    person=session.person,
                    request_id=request.id,
                    tool_use_id=tool_use_id,
                    action=action,
                    payload=_json(payload),
                    question=question,
                    status="waiting",
                    created_at=now(),
                )
            )
            await self._set_request(db, request.id, status="waiting")
            approval_update = {"approval": approval.id, "question": question}
            await self._enqueue(
                db, session, Send("approval", f"approval:{approval.id}", approval_update)
            )
            await self._enqueue(db, session, Send("card", "", card))
        return approval

    async def approval_for(self, session_id: str, tool_use_id: str) -> Approval | None:
        async with self._sessions() as db:
            row = (
                await db.execute(
                    select(approvals)
                    .where(approvals.c.session_id == session_id)
                    .where(approvals.c.tool_use_id == tool_use_id)
                )
            ).first()
        return _approval(row) if row else None

    async def claim_send(self, approval: Approval) -> bool:
        """Marks an approved action as being carried out, once: True for the one caller that
        moved it from approved to sending. Recorded before the effect, so a worker that stops
        midway finds it claimed and never carries it out a second time."""
        async with self._sessions() as db, db.begin():
            result = await db.execute(
                update(approvals)
                .where(approvals.c.id == approval.id)
                .where(approvals.c.status == "approved")
                .values(status="sending", claimed_at=now())
            )
            return result.rowcount == 1

    async def settle(self, session: WorkSession, approval: Approval, result: dict) -> None:
        """The held action's outcome becomes its tool result, and the approval is done."""
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(approvals).where(approvals.c.id == approval.id).values(status="done")
            )
            await self._hold(db, session, {**session.held, approval.tool_use_id: result})

    async def record_results(self, session: WorkSession, request: Request, message: dict) -> None:
        async with self._sessions() as db, db.begin():
            await self._append(db, session, [message], request.id)
            await self._hold(db, session, {})
            await self._set_request(db, request.id, status="running")

    async def finish(
        self,
        session: WorkSession,
        request: Request,
        outcome: str,
        deeds: list[dict],
        card: dict,
        closing: list[dict],
    ) -> None:
        """Ends the request: its closing messages, its outcome, the result (with what Violet did,
        as `violet.v1.Deed` JSON objects) and the card to send."""
        async with self._sessions() as db, db.begin():
            if closing:
                await self._append(db, session, closing, request.id)
            await self._set_request(
                db, request.id, status="done", outcome=outcome, finished_at=now()
            )
            await self._enqueue(
                db,
                session,
                Send("result", f"result:{request.id}", {"text": outcome, "deeds": deeds}),
            )
            await self._enqueue(db, session, Send("card", "", card))

    async def _append(
        self, db: AsyncSession, session: WorkSession, new: list[dict], request_id: int
    ) -> None:
        await self._bump(db, session)
        moment = now()
        await db.execute(
            insert(work_messages),
            [
                {
                    "session_id": session.id,
                    "position": len(session.messages) + offset,
                    "role": message["role"],
                    "content": _json(message),
                    "request_id": request_id,
                    "created_at": moment,
                }
                for offset, message in enumerate(new)
            ],
        )
        # A step that fails after this drops the loaded copy, so it never runs ahead of the rows.
        session.messages.extend(new)

    async def _hold(self, db: AsyncSession, session: WorkSession, held: dict[str, dict]) -> None:
        await self._bump(db, session, held_results=_json(held))
        session.held = held

    async def _bump(self, db: AsyncSession, session: WorkSession, **values: Any) -> None:
        """Counts the change, provided nobody else changed the session since it was loaded."""
        result = await db.execute(
            update(work_sessions)
            .where(work_sessions.c.id == session.id)
            .where(work_sessions.c.version == session.version)
            .values(version=session.version + 1, last_active=now(), **values)
        )
        if result.rowcount != 1:
            raise StaleSession(session.id)
        session.version += 1

    async def _set_request(self, db: AsyncSession, request_id: int, **values: Any) -> None:
        await db.execute(
            update(work_requests).where(work_requests.c.id == request_id).values(**values)
        )

    # --- approvals ----------------------------------------------------------------------------

    async def answer(self, person: str, approval_id: str, approved: bool) -> Approval | None:
        """Records the person's answer once; None when the approval is not theirs. A repeated
        answer changes nothing."""
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(approvals)
                .where(approvals.c.id == approval_id)
                .where(approvals.c.person == person)
                .where(approvals.c.status == "waiting")
                .values(status="approved" if approved else "declined", answered_at=now())
            )
            row = (
                await db.execute(
                    select(approvals)
                    .where(approvals.c.id == approval_id)
                    .where(approvals.c.person == person)
                )
            ).first()
        return _approval(row) if row else None

    # --- the outbox ---------------------------------------------------------------------------

    async def _enqueue(self, db: AsyncSession, session: WorkSession, send: Send) -> None:
        key = send.key
        if send.kind == "card":
            # Only the newest card of a topic matters; older unsent ones are superseded.
            await db.execute(
                delete(outbox)
                .where(outbox.c.topic == session.id)
                .where(outbox.c.kind == "card")
                .where(outbox.c.sent_at.is_(None))
            )
            key = f"card:{session.id}:{secrets.token_hex(6)}"
        moment = now()
        await db.execute(
            insert(outbox).values(
                person=session.person,
                topic=session.id,
                kind=send.kind,
                key=key,
                payload=_json(send.payload),
                created_at=moment,
                attempts=0,
                next_try_at=moment,
            )
        )

    async def due(self, limit: int = 50) -> list[Outgoing]:
        """What is due to be sent, oldest first; each person's read as that person."""
        moment = now()
        due = (
            select(outbox.c.id, outbox.c.person)
            .where(outbox.c.sent_at.is_(None))
            .where(outbox.c.next_try_at <= moment)
            .order_by(outbox.c.id)
            .limit(limit)
        )
        async with self._sessions() as db:
            found = await database.across_people(
                db, "worker_due_outbox", due, moment=moment, most=limit
            )
        outgoing: list[Outgoing] = []
        for person in dict.fromkeys(row.person for row in found):
            ids = [row.id for row in found if row.person == person]
            with acting_for(person):
                async with self._sessions() as db:
                    rows = await db.execute(select(outbox).where(outbox.c.id.in_(ids)))
                    outgoing += [
                        Outgoing(
                            r.id,
                            r.person,
                            r.topic,
                            r.kind,
                            r.key,
                            json.loads(r.payload),
                            r.attempts,
                        )
                        for r in rows
                    ]
        return sorted(outgoing, key=lambda item: item.id)

    async def sent(self, outgoing_id: int) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(update(outbox).where(outbox.c.id == outgoing_id).values(sent_at=now()))

    async def retry_later(self, outgoing_id: int, attempts: int, delay_s: float) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(outbox)
                .where(outbox.c.id == outgoing_id)
                .values(attempts=attempts, next_try_at=now() + timedelta(seconds=delay_s))
            )

    async def drop(self, outgoing_id: int) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(delete(outbox).where(outbox.c.id == outgoing_id))
