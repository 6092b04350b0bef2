"""Updates to tell the person: results and approval questions from background work, and Violet's
own questions about promises that waited too long. Stored when they arise, told when the main
session is free."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import bindparam, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from session.tables import updates
from violet.clock import Clock, utc_now
from violet.database import Database
from violet.models import JsonObject
from violet.telemetry import carrier

Kind = Literal["result", "approval", "check_in", "reminder"]


@dataclass(frozen=True)
class Update:
    id: int
    topic: str
    kind: Kind
    text: str
    approval_ref: str | None = None
    trace_context: str | None = None
    # What Violet did for a result, as `violet.v1.Deed` JSON objects.
    deeds: tuple[JsonObject, ...] = ()
    # Where a result came from, as `violet.v1.Source` JSON objects.
    sources: tuple[JsonObject, ...] = ()
    # A reminder's occurrence: when it was due.
    due_at: datetime | None = None


class Updates:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def store(
        self,
        conversation_id: str,
        key: str,
        topic: str,
        kind: Kind,
        text: str,
        approval_ref: str | None = None,
        deeds: Sequence[JsonObject] = (),
        sources: Sequence[JsonObject] = (),
    ) -> bool:
        """Stores an update once per key; False when it was already there."""
        try:
            async with self._database() as tx, tx.begin():
                await tx.execute(
                    insert(updates).values(
                        conversation_id=conversation_id,
                        key=key,
                        topic=topic,
                        kind=kind,
                        text=text,
                        approval_ref=approval_ref,
                        deeds=list(deeds),
                        sources=list(sources),
                        created_at=self._clock(),
                        trace_context=carrier(),
                    )
                )
        except IntegrityError:
            return False
        return True

    async def next_untold(self, conversation_id: str) -> Update | None:
        return await self._database.run(next_untold_on, conversation_id)


_NEXT_UNTOLD = (
    select(updates)
    .where(updates.c.conversation_id == bindparam("conversation"), updates.c.told_seq.is_(None))
    .order_by(updates.c.id)
    .limit(1)
)


def next_untold_on(connection: Connection, conversation_id: str) -> Update | None:
    """The oldest update of the conversation not yet told."""
    row = connection.execute(_NEXT_UNTOLD, {"conversation": conversation_id}).first()
    if row is None:
        return None
    return Update(
        row.id,
        row.topic,
        row.kind,
        row.text,
        row.approval_ref,
        row.trace_context,
        tuple(row.deeds or ()),
        tuple(row.sources or ()),
        row.due_at,
    )
