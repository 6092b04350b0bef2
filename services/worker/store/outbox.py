"""Results, approval questions and card updates, stored with the step that made them and sent
until the peer takes them."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.database import across_people
from violet.identity import acting_for
from violet.models import JsonObject
from worker.store.encoding import as_json
from worker.store.work_sessions import WorkSession
from worker.tables import outbox

OutgoingKind = Literal["result", "approval", "card"]


@dataclass(frozen=True)
class Outgoing:
    id: int
    person: str
    topic: str
    kind: OutgoingKind
    key: str
    payload: JsonObject
    attempts: int


@dataclass(frozen=True)
class Send:
    """An update to store in the outbox together with the step that made it."""

    kind: OutgoingKind
    key: str
    payload: JsonObject


class Outbox:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._database = database
        self._clock = clock

    async def enqueue(self, tx: AsyncSession, work_session: WorkSession, send: Send) -> None:
        key = send.key
        if send.kind == "card":
            # Only the newest card of a topic matters; older unsent ones are superseded.
            await tx.execute(
                delete(outbox)
                .where(outbox.c.topic == work_session.id)
                .where(outbox.c.kind == "card")
                .where(outbox.c.sent_at.is_(None))
            )
            key = f"card:{work_session.id}:{secrets.token_hex(6)}"
        moment = self._clock()
        await tx.execute(
            insert(outbox).values(
                person=work_session.person,
                topic=work_session.id,
                kind=send.kind,
                key=key,
                payload=as_json(send.payload),
                created_at=moment,
                attempts=0,
                next_try_at=moment,
            )
        )

    async def due(self, limit: int = 50) -> list[Outgoing]:
        """What is due to be sent, oldest first; each person's read as that person."""
        moment = self._clock()
        due = (
            select(outbox.c.id, outbox.c.person)
            .where(outbox.c.sent_at.is_(None))
            .where(outbox.c.next_try_at <= moment)
            .order_by(outbox.c.id)
            .limit(limit)
        )
        async with self._database() as db:
            found = await across_people(db, "worker_due_outbox", due, moment=moment, most=limit)
        outgoing: list[Outgoing] = []
        for person in dict.fromkeys(row.person for row in found):
            ids = [row.id for row in found if row.person == person]
            with acting_for(person):
                outgoing += await self._read(ids)
        return sorted(outgoing, key=lambda item: item.id)

    async def _read(self, ids: list[int]) -> list[Outgoing]:
        async with self._database() as db:
            rows = await db.execute(select(outbox).where(outbox.c.id.in_(ids)))
            return [
                Outgoing(r.id, r.person, r.topic, r.kind, r.key, json.loads(r.payload), r.attempts)
                for r in rows
            ]

    async def sent(self, outgoing_id: int) -> None:
        async with self._database() as tx, tx.begin():
            await tx.execute(
                update(outbox).where(outbox.c.id == outgoing_id).values(sent_at=self._clock())
            )

    async def retry_later(self, outgoing_id: int, attempts: int, delay_s: float) -> None:
        async with self._database() as tx, tx.begin():
            await tx.execute(
                update(outbox)
                .where(outbox.c.id == outgoing_id)
                .values(attempts=attempts, next_try_at=self._clock() + timedelta(seconds=delay_s))
            )

    async def drop(self, outgoing_id: int) -> None:
        async with self._database() as tx, tx.begin():
            await tx.execute(delete(outbox).where(outbox.c.id == outgoing_id))
