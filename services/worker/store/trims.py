"""Trimming a person's finished work past the operator's retention horizon, work session by work
session, so that each model conversation left is still one the Messages API takes.

What goes: of each work session, the requests finished before the horizon that come before every
request not so finished, with their messages and their settled approvals; and the person's
outbox rows sent before the horizon. The conversation is cut only where a request starts, as
`worker.agent.window` cuts it, so no tool call is parted from its result.

A work session whose lease is held is running on some replica: it is left for the next pass,
since cutting under a step would waste the step (its tool may have run already). So is one whose
request under way holds the model's thinking (a request waiting for the person's yes, say): each
thinking block is bound to everything before it, the earlier requests too, and the request's tool
loop must send its latest thinking back as it came, so a cut there would have its next step
refused. It is trimmed at the first pass after that request ends. Any other may
be loaded in a replica's memory, perhaps waiting for weeks for the person's answer, so it is
trimmed all the same, safely: the trim holds its row first, as every step does, so a lease taken
meanwhile waits for the trim; and it counts its change on the version, so a loaded copy is stale:
its next step writes nothing (`StaleWorkSession`) and its next run loads the trimmed
conversation, never keeping or saving again what was removed.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.database import rows_changed
from violet.models import ModelMessage
from violet.models.messages import THINKING_TYPES
from worker.store.work_sessions import WORK_SESSION_LEASE
from worker.tables import approvals, outbox, work_messages, work_requests, work_sessions

log = logging.getLogger(__name__)

# An approval still to be answered or carried out stays, whatever became of its request.
UNSETTLED = ("waiting", "approved", "sending")


def _finished_before(before: datetime) -> ColumnElement[bool]:
    return (work_requests.c.status == "done") & (work_requests.c.finished_at < before)


def _not_finished_before(before: datetime) -> ColumnElement[bool]:
    return or_(
        work_requests.c.status != "done",
        work_requests.c.finished_at.is_(None),
        work_requests.c.finished_at >= before,
    )


def _starts_a_request(message: ModelMessage) -> bool:
    """As `worker.agent.is_request`: the person's request, a user turn in plain text."""
    return message["role"] == "user" and isinstance(message["content"], str)


class Trims:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._database = database
        self._clock = clock

    async def work_sessions_to_trim(self, person: str, before: datetime) -> list[str]:
        """The person's work sessions whose first request finished before `before`."""
        first = (
            select(func.min(work_requests.c.id))
            .where(work_requests.c.person == person)
            .group_by(work_requests.c.session_id)
        )
        async with self._database() as db:
            found = await db.scalars(
                select(work_requests.c.session_id)
                .where(work_requests.c.id.in_(first))
                .where(_finished_before(_utc(before)))
                .order_by(work_requests.c.id)
            )
            return list(found)

    async def trim(self, work_session_id: str, before: datetime) -> int | None:
        """Removes the work session's requests finished before `before` that come before every
        other, with their messages and settled approvals, in one transaction; how many rows.
        None when it is left for a later pass: it runs now, or its request under way holds
        thinking."""
        before = _utc(before)
        async with self._database() as tx, tx.begin():
            if not await self._hold_unless_running(tx, work_session_id):
                return None
            last = await self._last_finished(tx, work_session_id, before)
            if last is None:
                return 0
            if await self._thinking_under_way(tx, work_session_id):
                log.info("a work conversation left for a later trim: its request thinks")
                return None
            cut = await self._cut(tx, work_session_id, last)
            if cut is None:
                log.warning("a work conversation not cut: no request starts where it would be")
                return 0
            removed = await self._remove(tx, work_session_id, last, cut)
            await self._renumber(tx, work_session_id, cut)
            await tx.execute(
                update(work_sessions)
                .where(work_sessions.c.id == work_session_id)
                .values(version=work_sessions.c.version + 1)
            )
            return removed

    async def drop_sent(self, person: str, before: datetime) -> int:
        """Removes the person's outbox rows made before `before` and already sent; how many."""
        async with self._database() as tx, tx.begin():
            dropped = await tx.execute(
                delete(outbox)
                .where(outbox.c.person == person)
                .where(outbox.c.sent_at.is_not(None))
                .where(outbox.c.created_at < _utc(before))
            )
            return rows_changed(dropped)

    async def _hold_unless_running(self, tx: AsyncSession, work_session_id: str) -> bool:
        """Holds the work session's row until the transaction ends, unless its lease is held:
        False then. A write that changes nothing, so it holds the row on PostgreSQL and the
        database's write lock on SQLite, before anything is read."""
        held = await tx.execute(
            update(work_sessions)
            .where(work_sessions.c.id == work_session_id)
            .where(WORK_SESSION_LEASE.free(self._clock()))
            .values(version=work_sessions.c.version)
        )
        return rows_changed(held) == 1

    @staticmethod
    async def _last_finished(
        tx: AsyncSession, work_session_id: str, before: datetime
    ) -> int | None:
        """The id of the last request of the work session's that finished before `before` with
        every one before it."""
        ours = work_requests.c.session_id == work_session_id
        first_kept = (
            select(func.min(work_requests.c.id))
            .where(ours)
            .where(_not_finished_before(before))
            .scalar_subquery()
        )
        found = await tx.scalar(
            select(func.max(work_requests.c.id))
            .where(ours)
            .where(or_(first_kept.is_(None), work_requests.c.id < first_kept))
        )
        return None if found is None else int(found)

    @staticmethod
    async def _thinking_under_way(tx: AsyncSession, work_session_id: str) -> bool:
        """Whether a request of the work session's not yet done holds a thinking block."""
        under_way = (
            select(work_requests.c.id)
            .where(work_requests.c.session_id == work_session_id)
            .where(work_requests.c.status != "done")
        )
        replies = await tx.scalars(
            select(work_messages.c.content)
            .where(work_messages.c.session_id == work_session_id)
            .where(work_messages.c.role == "assistant")
            .where(work_messages.c.request_id.in_(under_way))
        )
        return any(_thinks(json.loads(content)) for content in replies)

    @staticmethod
    async def _cut(tx: AsyncSession, work_session_id: str, last: int) -> int | None:
        """The position the conversation left starts at: the first message of a request after
        `last`, or past the end when none has one yet. None when no request starts there."""
        ours = work_messages.c.session_id == work_session_id
        kept = await tx.scalar(
            select(func.min(work_messages.c.position))
            .where(ours)
            .where(or_(work_messages.c.request_id.is_(None), work_messages.c.request_id > last))
        )
        if kept is None:
            end = await tx.scalar(select(func.max(work_messages.c.position)).where(ours))
            return 0 if end is None else int(end) + 1
        first = await tx.scalar(
            select(work_messages.c.content).where(ours).where(work_messages.c.position == kept)
        )
        return int(kept) if _starts_a_request(json.loads(first or "{}")) else None

    @staticmethod
    async def _remove(tx: AsyncSession, work_session_id: str, last: int, cut: int) -> int:
        removals = (
            delete(work_messages)
            .where(work_messages.c.session_id == work_session_id)
            .where(work_messages.c.position < cut),
            delete(approvals)
            .where(approvals.c.session_id == work_session_id)
            .where(approvals.c.request_id <= last)
            .where(approvals.c.status.not_in(UNSETTLED)),
            delete(work_requests)
            .where(work_requests.c.session_id == work_session_id)
            .where(work_requests.c.id <= last),
        )
        removed = 0
        for removal in removals:
            removed += rows_changed(await tx.execute(removal))
        return removed

    @staticmethod
    async def _renumber(tx: AsyncSession, work_session_id: str, cut: int) -> None:
        """Numbers the messages left from 0 again: a loaded copy appends at its length. Through
        negative positions, so no two rows share one on the way (each row is checked against
        the unique position as it changes)."""
        if cut == 0:
            return
        ours = work_messages.c.session_id == work_session_id
        position = work_messages.c.position
        await tx.execute(update(work_messages).where(ours).values(position=-1 - position))
        await tx.execute(update(work_messages).where(ours).values(position=-1 - position - cut))


def _thinks(message: ModelMessage) -> bool:
    content = message["content"]
    return not isinstance(content, str) and any(b["type"] in THINKING_TYPES for b in content)


def _utc(moment: datetime) -> datetime:
    # Times are stored in UTC, and SQLite compares them as text.
    return moment.astimezone(UTC)
