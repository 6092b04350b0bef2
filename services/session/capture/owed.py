"""Captures owed to memory, kept until memory has them.

A turn's capture is written in the transaction that stores the turn's words (Violet's answer, or
a told result), so no crash falls between an answer and the record that memory still needs it.
A conversation's captures go in the order of their seqs, by one replica at a time: a capture is
leased as it is written when none of the conversation is owed before it (it can go at once);
otherwise it waits behind the others, and whoever holds those sends it next, or the sweep takes
them all once they are due. An acknowledged capture is deleted. A failed one stays, with the
rest of its conversation, until its backoff has passed.

What is owed is bounded, per person and in all (`Bounds`): past a bound the oldest owed captures
of the person with the most are dropped, counted as a fallback, since memory's words for a
person can wait but the session's tables cannot grow without end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, exists, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Row

from session.tables import owed_captures, removals
from violet.clock import Clock, utc_now
from violet.database import Database, across_people, rows_changed
from violet.identity import acting_for
from violet.models import JsonObject
from violet.telemetry import carrier

_OWED = owed_captures.c


@dataclass(frozen=True)
class Capture:
    """What memory is sent of a turn: the person's words and Violet's answer, or what Violet
    told of a work result with its deeds and sources, and the transcript seqs they were stored
    as."""

    person_message: str
    violet_answer: str
    source_seqs: tuple[int, ...]
    said_at: datetime
    told: str = ""
    deeds: tuple[JsonObject, ...] = ()
    sources: tuple[JsonObject, ...] = ()


@dataclass(frozen=True)
class Owed:
    """A capture memory has not acknowledged yet."""

    id: int
    conversation_id: str
    person: str
    seq: int
    capture: Capture
    answered_at: datetime
    trace_context: str | None
    attempts: int


@dataclass(frozen=True)
class Conversations:
    """A conversation with captures owed, as the sweep sees it."""

    id: str
    person: str
    owed: int
    due_at: datetime
    held_until: datetime | None


@dataclass(frozen=True)
class Bounds:
    """How many captures may be owed for one person, and for everyone together."""

    per_person: int
    in_all: int


@dataclass
class Dropped:
    """Owed captures dropped past a bound, by person."""

    by_person: dict[str, int] = field(default_factory=dict)


class OwedCaptures:
    def __init__(self, db: Database, holder: str, lease_s: float, clock: Clock = utc_now) -> None:
        """`holder`: this replica's name on the leases it takes, each for `lease_s`."""
        self._db = db
        self._holder = holder
        self._lease = timedelta(seconds=lease_s)
        self._clock = clock

    def owe_on(
        self,
        connection: Connection,
        conversation_id: str,
        person: str,
        capture: Capture,
        answered_at: datetime,
    ) -> Owed | None:
        """Writes the capture as owed, as work inside the trip that stores the turn's words.
        Returns it leased to this replica when nothing of the conversation is owed before it
        (it goes at once); None when it waits behind others."""
        now = self._clock()
        earlier = connection.scalar(
            select(exists().where(_OWED.conversation_id == conversation_id))
        )
        values = {
            "conversation_id": conversation_id,
            "person": person,
            "seq": max(capture.source_seqs),
            "source_seqs": list(capture.source_seqs),
            "person_message": capture.person_message,
            "violet_answer": capture.violet_answer,
            "told": capture.told,
            "deeds": list(capture.deeds),
            "sources": list(capture.sources),
            "said_at": capture.said_at,
            "answered_at": answered_at,
            "trace_context": carrier() or None,
            "attempts": 0,
            "due_at": now,
            "holder": None if earlier else self._holder,
            "until": None if earlier else now + self._lease,
        }
        row_id = connection.scalar(insert(owed_captures).values(values).returning(_OWED.id))
        if earlier:
            return None
        return _owed({**values, "id": row_id})

    async def take(self, conversation_id: str, person: str) -> list[Owed]:
        """The conversation's owed captures, oldest first, now leased to this replica, when the
        oldest is due and none is held by another replica; none while the person is being
        removed (the removal waits for the captures under way, then deletes them)."""
        with acting_for(person):
            return await self._db.run(self._take_on, conversation_id, person, True)

    async def done_then_next(self, owed: Owed) -> list[Owed]:
        """Deletes the acknowledged capture; the conversation's captures owed after it, leased
        to this replica as `take` leases them, due or not (they waited behind this one)."""
        with acting_for(owed.person):
            return await self._db.run(self._done_then_next_on, owed)

    def _done_then_next_on(self, connection: Connection, owed: Owed) -> list[Owed]:
        connection.execute(delete(owed_captures).where(_OWED.id == owed.id))
        return self._take_on(connection, owed.conversation_id, owed.person, False)

    def _take_on(
        self, connection: Connection, conversation_id: str, person: str, when_due: bool
    ) -> list[Owed]:
        now = self._clock()
        mine = _OWED.conversation_id == conversation_id
        free = or_(_OWED.until.is_(None), _OWED.until < now, _OWED.holder == self._holder)
        blocked: list[ColumnElement[bool]] = [
            exists().where(mine, ~free),
            exists().where(removals.c.person == person),
        ]
        if when_due:
            blocked.append(~exists().where(mine, _OWED.due_at <= now))
        if connection.scalar(select(or_(*blocked))):
            return []
        connection.execute(
            update(owed_captures).where(mine).values(holder=self._holder, until=now + self._lease)
        )
        rows = connection.execute(select(owed_captures).where(mine).order_by(_OWED.seq))
        return [_owed(row._asdict()) for row in rows]

    async def again(self, owed: Sequence[Owed], after: timedelta) -> None:
        """Lets the captures go, to be sent again after `after`, counting the attempt."""
        if not owed:
            return
        with acting_for(owed[0].person):
            await self._db.run(self._again_on, [row.id for row in owed], after)

    def _again_on(self, connection: Connection, ids: list[int], after: timedelta) -> None:
        connection.execute(
            update(owed_captures)
            .where(_OWED.id.in_(ids))
            .values(
                due_at=self._clock() + after,
                attempts=_OWED.attempts + 1,
                holder=None,
                until=None,
            )
        )

    async def let_go(self, owed: Sequence[Owed]) -> None:
        """Gives the captures' lease back untried (this replica is stopping)."""
        if not owed:
            return
        with acting_for(owed[0].person):
            await self._db.execute(
                update(owed_captures)
                .where(_OWED.id.in_([row.id for row in owed]), _OWED.holder == self._holder)
                .values(holder=None, until=None)
            )

    async def conversations(self) -> list[Conversations]:
        """Every conversation with captures owed."""
        grouped = select(
            _OWED.conversation_id,
            _OWED.person,
            func.count().label("owed"),
            func.min(_OWED.due_at).label("due_at"),
            func.max(_OWED.until).label("held_until"),
        ).group_by(_OWED.conversation_id, _OWED.person)
        async with self._db() as db:
            rows = await across_people(db, "session_owed_captures", grouped)
        return [
            Conversations(row.conversation_id, row.person, row.owed, row.due_at, row.held_until)
            for row in rows
        ]

    async def bound(self, found: Sequence[Conversations], bounds: Bounds) -> Dropped:
        """Drops the oldest captures owed past the bounds: each person's past `per_person`,
        and past `in_all` together, those of the people owed the most first."""
        keep = _kept(found, bounds)
        dropped = Dropped()
        for conversation in found:
            excess = conversation.owed - keep[conversation.id]
            if excess > 0:
                dropped.by_person[conversation.person] = await self._drop_oldest(
                    conversation, excess
                )
        return dropped

    async def _drop_oldest(self, conversation: Conversations, count: int) -> int:
        mine = _OWED.conversation_id == conversation.id
        oldest = select(_OWED.id).where(mine).order_by(_OWED.seq).limit(count)
        with acting_for(conversation.person):
            done = await self._db.execute(
                delete(owed_captures).where(mine, _OWED.id.in_(oldest.scalar_subquery()))
            )
        return rows_changed(done)

    async def held(self, conversation_id: str, person: str) -> bool:
        """Whether a replica holds captures of the conversation now (one is on its way)."""
        now = self._clock()
        with acting_for(person):
            return bool(
                await self._db.scalar(
                    select(
                        exists().where(
                            _OWED.conversation_id == conversation_id,
                            _OWED.until.is_not(None),
                            _OWED.until >= now,
                        )
                    )
                )
            )


def _kept(found: Sequence[Conversations], bounds: Bounds) -> dict[str, int]:
    """How many captures each conversation keeps: at most `per_person`, and all together at
    most `in_all`, by the highest level every conversation may keep up to."""
    owed = {c.id: min(c.owed, bounds.per_person) for c in found}
    if sum(owed.values()) <= bounds.in_all:
        return owed
    low, high = 0, max(owed.values())
    while low < high:  # the highest level whose total fits
        level = (low + high + 1) // 2
        if sum(min(count, level) for count in owed.values()) <= bounds.in_all:
            low = level
        else:
            high = level - 1
    return {conversation: min(count, low) for conversation, count in owed.items()}


def oldest_owed_seq_on(connection: Connection, conversation_id: str) -> int | None:
    """The seq of the conversation's oldest capture memory has not acknowledged, if any."""
    return connection.scalar(
        select(func.min(_OWED.seq)).where(_OWED.conversation_id == conversation_id)
    )


def _owed(values: dict[str, Any] | Row[Any]) -> Owed:
    row = dict(values)
    capture = Capture(
        person_message=row["person_message"],
        violet_answer=row["violet_answer"],
        source_seqs=tuple(row["source_seqs"]),
        said_at=row["said_at"],
        told=row["told"],
        deeds=tuple(row["deeds"]),
        sources=tuple(row["sources"]),
    )
    return Owed(
        id=row["id"],
        conversation_id=row["conversation_id"],
        person=row["person"],
        seq=row["seq"],
        capture=capture,
        answered_at=row["answered_at"],
        trace_context=row["trace_context"],
        attempts=row["attempts"],
    )
