"""The person's reminders, kept in the session's database: set, listed, cancelled, and fired once
per occurrence whichever replica gets there first.

An occurrence fires in one transaction that moves the reminder on to its next occurrence only if
it still waits at this one (a compare-and-set, so a second replica firing it at the same moment
changes nothing) and stores what the occurrence owes: the update that tells a reminder (unique
by reminder and occurrence), or the scheduled work still to be started. A crash before the commit
leaves the occurrence due; after it, the update is told and the work started by whoever looks
next. Occurrences missed while the stack was down fire once, late, and the reminder moves on to
its next occurrence after now.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, select, union_all, update
from sqlalchemy.engine import Connection, Row

from session.reminders.times import Schedule, TimeRefused
from session.tables import conversations, reminders, updates
from violet.clock import Clock, utc_now
from violet.database import Database, Session, across_people, rows_changed
from violet.telemetry import carrier

# Open reminders one person may have.
MOST_OPEN = 100
PREFIX = "r_"


@dataclass(frozen=True)
class Reminder:
    id: str
    text: str
    work: bool
    schedule: Schedule
    next_at: datetime | None


@dataclass(frozen=True)
class Due:
    """A reminder with an occurrence due or work owed, and whose it is."""

    id: str
    conversation_id: str
    person: str


@dataclass(frozen=True)
class Fired:
    """After a firing: whether an update now waits to be told, and the scheduled work still to
    be started (by this firing, or one before it that stopped short)."""

    told: bool = False
    work: tuple[Reminder, datetime] | None = None


def _reminder(row: Row[Any]) -> Reminder:
    schedule = Schedule(datetime.fromisoformat(row.starts), row.zone, row.repeat)
    return Reminder(row.id, row.text, row.work, schedule, row.next_at)


_OPEN = (
    select(reminders)
    .where(reminders.c.conversation_id == bindparam("conversation"))
    .where(reminders.c.next_at.is_not(None))
    .order_by(reminders.c.next_at, reminders.c.id)
)
_OPEN_COUNT = (
    select(func.count())
    .select_from(reminders)
    .where(reminders.c.conversation_id == bindparam("conversation"))
    .where(reminders.c.next_at.is_not(None))
)


def open_on(connection: Connection, conversation_id: str) -> list[Reminder]:
    """The conversation's open reminders, soonest first."""
    return [_reminder(row) for row in connection.execute(_OPEN, {"conversation": conversation_id})]


class TooMany(Exception):
    """The person has `MOST_OPEN` open reminders already."""


class Reminders:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self.database = database  # also where the person's zone is read with their reminders
        self._clock = clock

    def now(self) -> datetime:
        return self._clock()

    async def open(self, conversation_id: str) -> list[Reminder]:
        return await self.database.run(open_on, conversation_id)

    async def add(
        self,
        conversation_id: str,
        text: str,
        work: bool,
        schedule: Schedule,
        also: Callable[[Session, Reminder], Awaitable[None]] | None = None,
    ) -> Reminder:
        """Stores a new reminder; `also` runs in the same transaction. Raises `TimeRefused`
        for a time that has passed and `TooMany` past the limit: nothing is stored then."""
        now = self._clock()
        first = schedule.first(now)
        reminder = Reminder(PREFIX + secrets.token_hex(4), text, work, schedule, first)
        async with self.database() as tx, tx.begin():
            count = await tx.scalar(_OPEN_COUNT, {"conversation": conversation_id})
            if int(count or 0) >= MOST_OPEN:
                raise TooMany
            await tx.execute(
                insert(reminders).values(
                    id=reminder.id,
                    conversation_id=conversation_id,
                    text=text,
                    work=work,
                    zone=schedule.zone,
                    starts=schedule.start.isoformat(timespec="minutes"),
                    repeat=schedule.repeat,
                    next_at=first,
                    created_at=now,
                )
            )
            if also is not None:
                await also(tx, reminder)
        return reminder

    async def cancel(
        self,
        conversation_id: str,
        reminder_id: str,
        also: Callable[[Session], Awaitable[None]] | None = None,
    ) -> Reminder | None:
        """Cancels one open reminder of the conversation (ids of others are never found); the
        cancelled reminder, or None. Work already with the worker goes on; work fired but not
        yet handed over is dropped."""
        async with self.database() as tx, tx.begin():
            row = (
                await tx.execute(
                    select(reminders)
                    .where(reminders.c.conversation_id == conversation_id)
                    .where(reminders.c.id == reminder_id)
                    .where(reminders.c.next_at.is_not(None))
                )
            ).first()
            if row is None:
                return None
            await tx.execute(
                update(reminders)
                .where(reminders.c.id == reminder_id)
                .values(next_at=None, work_owed_at=None, cancelled_at=self._clock())
            )
            if also is not None:
                await also(tx)
            return _reminder(row)

    async def due(self, most: int) -> list[Due]:
        """Reminders with an occurrence due now, or scheduled work owed, soonest first. Two
        indexed reads joined, not one with OR: with thousands pending, each look reads only the
        few due."""
        now = self._clock()
        whose = select(reminders.c.id, reminders.c.conversation_id, conversations.c.person).join(
            conversations, conversations.c.id == reminders.c.conversation_id
        )
        occurring = whose.add_columns(reminders.c.next_at.label("at")).where(
            reminders.c.next_at <= now
        )
        owed = whose.add_columns(reminders.c.work_owed_at.label("at")).where(
            reminders.c.work_owed_at.is_not(None)
        )
        both = union_all(occurring, owed).subquery()
        fallback = (
            select(both.c.id, both.c.conversation_id, both.c.person).order_by(both.c.at).limit(most)
        )
        async with self.database() as db:
            rows = await across_people(db, "session_due_reminders", fallback, moment=now, most=most)
        seen: dict[str, Due] = {}
        for row in rows:  # a reminder both due and owed work comes once
            seen.setdefault(row.id, Due(row.id, row.conversation_id, row.person))
        return list(seen.values())

    async def fire(self, due: Due) -> Fired:
        """Fires the reminder's occurrence due now, once across replicas (see the module)."""
        return await self.database.run(self._fire_on, due, self._clock())

    def _fire_on(self, connection: Connection, due: Due, now: datetime) -> Fired:
        row = connection.execute(select(reminders).where(reminders.c.id == due.id)).first()
        if row is None:
            return Fired()
        reminder, occurrence = _reminder(row), row.next_at
        if occurrence is None or occurrence > now:
            return Fired(work=_work(reminder, row.work_owed_at))
        owed = occurrence if reminder.work else row.work_owed_at
        moved = connection.execute(
            update(reminders)
            .where(reminders.c.id == due.id, reminders.c.next_at == occurrence)
            .values(next_at=_following(reminder.schedule, now), work_owed_at=owed)
        )
        if not rows_changed(moved):
            return Fired()  # fired by another replica a moment ago
        if reminder.work:
            return Fired(work=_work(reminder, owed))
        connection.execute(
            insert(updates).values(
                conversation_id=due.conversation_id,
                key=f"reminder/{due.id}/{occurrence.isoformat()}",
                topic=due.id,
                kind="reminder",
                text=reminder.text,
                created_at=now,
                due_at=occurrence,
                trace_context=carrier(),
            )
        )
        return Fired(told=True)

    async def work_started_on(self, tx: Session, reminder_id: str, occurrence: datetime) -> None:
        """Inside the transaction that pins the started work: that occurrence's work is with
        the worker."""
        await tx.execute(
            update(reminders)
            .where(and_(reminders.c.id == reminder_id, reminders.c.work_owed_at == occurrence))
            .values(work_owed_at=None)
        )


def _work(reminder: Reminder, owed: datetime | None) -> tuple[Reminder, datetime] | None:
    return (reminder, owed) if owed is not None else None


def _following(schedule: Schedule, now: datetime) -> datetime | None:
    """The next occurrence after now: occurrences missed while nothing ran are not caught up one
    by one (the one firing late says so)."""
    try:
        return schedule.next_after(now)
    except TimeRefused:
        return None
