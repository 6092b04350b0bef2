"""Pinned items: open promises, approvals waiting and work in progress.

They travel with every main call, whatever the window holds, until kept, answered or done.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.tables import pins
from session.transcript import now
from violet.models.tools import PINNED_HEADING, approval_line, promise_line

Kind = Literal["promise", "approval", "work"]
PREFIX: dict[str, str] = {"promise": "p_", "approval": "a_", "work": "w_"}


@dataclass(frozen=True)
class Pin:
    id: str
    kind: Kind
    text: str
    ref: str | None = None


class Pins:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def open(self, conversation_id: str, kind: Kind | None = None) -> list[Pin]:
        query = (
            select(pins)
            .where(pins.c.conversation_id == conversation_id)
            .where(pins.c.closed_at.is_(None))
            .order_by(pins.c.created_at)
        )
        if kind is not None:
            query = query.where(pins.c.kind == kind)
        async with self._sessions() as db:
            rows = await db.execute(query)
            return [Pin(row.id, row.kind, row.text, row.ref) for row in rows]

    async def add(
        self,
        conversation_id: str,
        kind: Kind,
        text: str,
        ref: str | None = None,
        also: Callable[[AsyncSession, Pin], Awaitable[None]] | None = None,
    ) -> Pin:
        """Adds a pin; `also` runs in the same transaction, given the new pin."""
        pin = Pin(PREFIX[kind] + secrets.token_hex(4), kind, " ".join(text.split()), ref)
        async with self._sessions() as db, db.begin():
            await db.execute(
                insert(pins).values(
                    id=pin.id,
                    conversation_id=conversation_id,
                    kind=kind,
                    text=pin.text,
                    ref=ref,
                    created_at=now(),
                )
            )
            if also is not None:
                await also(db, pin)
        return pin

    async def close(
        self,
        conversation_id: str,
        pin_ids: Iterable[str],
        also: Callable[[AsyncSession], Awaitable[None]] | None = None,
    ) -> int:
        """Closes the named pins of this conversation; ids of others are ignored. `also` runs
        in the same transaction when a pin was closed."""
        ids = list(pin_ids)
        if not ids:
            return 0
        async with self._sessions() as db, db.begin():
            result = await db.execute(
                update(pins)
                .where(pins.c.conversation_id == conversation_id)
                .where(pins.c.id.in_(ids))
                .where(pins.c.closed_at.is_(None))
                .values(closed_at=now())
            )
            if result.rowcount and also is not None:
                await also(db)
            return result.rowcount

    async def close_ref(self, conversation_id: str, kind: Kind, ref: str) -> int:
        async with self._sessions() as db, db.begin():
            result = await db.execute(
                update(pins)
                .where(pins.c.conversation_id == conversation_id)
                .where(pins.c.kind == kind)
                .where(pins.c.ref == ref)
                .where(pins.c.closed_at.is_(None))
                .values(closed_at=now())
            )
            return result.rowcount


def render(open_pins: Sequence[Pin]) -> str:
    """The pinned section of the system prompt; empty when nothing is open."""
    if not open_pins:
        return ""
    lines = [PINNED_HEADING]
    for pin in open_pins:
        if pin.kind == "promise":
            lines.append(promise_line(pin.id, pin.text))
        elif pin.kind == "approval":
            lines.append(approval_line(pin.id, pin.text))
        else:
            lines.append(f"- work in progress: {' '.join(pin.text.split())}")
    return "\n".join(lines)
