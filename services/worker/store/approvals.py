"""Actions held for the person's yes or no, answered once, and carried out at most once."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.database import rows_changed
from violet.models import JsonObject
from worker.store.encoding import as_json
from worker.store.erasures import refuse_while_erasing
from worker.tables import approvals


@dataclass(frozen=True)
class Approval:
    id: str
    work_session_id: str
    person: str
    request_id: int
    tool_use_id: str
    action: str
    payload: JsonObject
    question: str
    status: str


@dataclass(frozen=True)
class Asked:
    """An approval as the person's archive shows it."""

    id: str
    question: str
    answer: str | None
    created_at: datetime
    answered_at: datetime | None


def new_approval(
    work_session_id: str,
    person: str,
    request_id: int,
    tool_use_id: str,
    action: str,
    payload: JsonObject,
    question: str,
) -> Approval:
    return Approval(
        "ap_" + secrets.token_hex(8),
        work_session_id,
        person,
        request_id,
        tool_use_id,
        action,
        payload,
        question,
        "waiting",
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


class Approvals:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._database = database
        self._clock = clock

    async def add(self, tx: AsyncSession, approval: Approval) -> None:
        await tx.execute(
            insert(approvals).values(
                id=approval.id,
                session_id=approval.work_session_id,
                person=approval.person,
                request_id=approval.request_id,
                tool_use_id=approval.tool_use_id,
                action=approval.action,
                payload=as_json(approval.payload),
                question=approval.question,
                status=approval.status,
                created_at=self._clock(),
            )
        )

    async def of_call(self, work_session_id: str, tool_use_id: str) -> Approval | None:
        """The approval a tool call of the work session waits for, if it asked one."""
        async with self._database() as db:
            row = (
                await db.execute(
                    select(approvals)
                    .where(approvals.c.session_id == work_session_id)
                    .where(approvals.c.tool_use_id == tool_use_id)
                )
            ).first()
        return _approval(row) if row else None

    async def answer(self, person: str, approval_id: str, approved: bool) -> Approval | None:
        """Records the person's answer once; None when the approval is not theirs. A repeated
        answer changes nothing. Raises BeingErased while the person's data is being erased (a
        yes would send the email)."""
        async with self._database() as tx, tx.begin():
            await refuse_while_erasing(tx, person)
            await tx.execute(
                update(approvals)
                .where(approvals.c.id == approval_id)
                .where(approvals.c.person == person)
                .where(approvals.c.status == "waiting")
                .values(
                    status="approved" if approved else "declined",
                    answer="yes" if approved else "no",
                    answered_at=self._clock(),
                )
            )
            row = (
                await tx.execute(
                    select(approvals)
                    .where(approvals.c.id == approval_id)
                    .where(approvals.c.person == person)
                )
            ).first()
        return _approval(row) if row else None

    async def page_of(self, person: str, after: Asked | None, size: int) -> list[Asked]:
        """Up to `size` of the person's approvals asked after `after` (from the first when
        None), oldest first."""
        query = select(
            approvals.c.id,
            approvals.c.question,
            approvals.c.answer,
            approvals.c.created_at,
            approvals.c.answered_at,
        ).where(approvals.c.person == person)
        if after is not None:
            query = query.where(
                or_(
                    approvals.c.created_at > after.created_at,
                    and_(approvals.c.created_at == after.created_at, approvals.c.id > after.id),
                )
            )
        async with self._database() as db:
            rows = await db.execute(
                query.order_by(approvals.c.created_at, approvals.c.id).limit(size)
            )
            return [Asked(r.id, r.question, r.answer, r.created_at, r.answered_at) for r in rows]

    async def claim_send(self, approval: Approval) -> bool:
        """Marks an approved action as being carried out, once: True for the one caller that
        moved it from approved to sending. Recorded before the effect, so a worker that stops
        midway finds it claimed and never carries it out a second time."""
        async with self._database() as tx, tx.begin():
            result = await tx.execute(
                update(approvals)
                .where(approvals.c.id == approval.id)
                .where(approvals.c.status == "approved")
                .values(status="sending", claimed_at=self._clock())
            )
            return rows_changed(result) == 1

    @staticmethod
    async def mark_done(tx: AsyncSession, approval: Approval) -> None:
        await tx.execute(
            update(approvals).where(approvals.c.id == approval.id).values(status="done")
        )
