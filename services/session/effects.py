"""What each tool call of a turn did, kept by a key derived from what caused it.

A turn that stopped before its answer was stored runs again on the next start; its tool calls
come again too. Each call's key is the same both times (the turn's cause, the call's name and
its count among the turn's calls of that name), so a call found here is not made again: its
recorded result is given to the model as before. The record is written in the same transaction
as the call's own change (a pin added or closed), and a call to another service carries the key
so the receiver can refuse a second effect when the crash fell between its effect and this
record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sqlalchemy import insert, select

from session.tables import effects
from violet.clock import Clock, utc_now
from violet.database import Database, Session


@dataclass(frozen=True)
class Recorded:
    content: str
    topic: str | None = None


class CallKeys:
    """The keys of one turn's tool calls. A model may word a call differently when a turn is
    replayed, and a real model's call ids differ on every call, so neither is part of a key."""

    def __init__(self, cause: str) -> None:
        self._cause = cause
        self._seen: Counter[str] = Counter()

    def next(self, name: str) -> str:
        self._seen[name] += 1
        return f"{self._cause}/{name}/{self._seen[name]}"


class Effects:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def recorded(self, conversation_id: str, key: str) -> Recorded | None:
        async with self._database() as db:
            row = (
                await db.execute(
                    select(effects.c.content, effects.c.topic)
                    .where(effects.c.conversation_id == conversation_id)
                    .where(effects.c.key == key)
                )
            ).first()
        return Recorded(row.content, row.topic) if row else None

    async def record(
        self,
        tx: Session,
        conversation_id: str,
        key: str,
        content: str,
        topic: str | None = None,
    ) -> None:
        """Records a call's result inside the transaction that makes its change."""
        await tx.execute(
            insert(effects).values(
                conversation_id=conversation_id,
                key=key,
                content=content,
                topic=topic,
                created_at=self._clock(),
            )
        )
