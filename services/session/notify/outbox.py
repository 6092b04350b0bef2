"""Violet's messages to notify, kept until sent: a row is written in the transaction that stores
the message, when the person has a device that takes notifications, so a crash between the two
loses or repeats nothing. Whether a device of theirs follows the conversation is asked when the
group goes, not as the message is told: a page closed a moment before still counts as here
until its stream has ended, and its message would never be notified. A group of one person's
rows is held by one replica at a time (a lease), and sent at least once."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, exists, literal, or_, select, update
from sqlalchemy import insert as insert_into
from sqlalchemy.engine import Connection

from session.tables import push_outbox, push_subscriptions
from violet.clock import Clock, utc_now
from violet.database import Database, across_people, rows_changed


@dataclass(frozen=True)
class Pending:
    id: int
    seq: int
    kind: str
    attempts: int


@dataclass
class Keeping:
    """Keeps a told message to notify, as work inside the telling's transaction
    (`session.transcript.Also`)."""

    person: str
    kind: str
    group: timedelta
    clock: Clock
    kept: bool = False

    def __call__(self, connection: Connection, seq: int) -> None:
        now = self.clock()
        wanted = exists().where(push_subscriptions.c.person == self.person)
        row = select(
            literal(self.person),
            literal(seq),
            literal(self.kind),
            literal(now),
            literal(now + self.group),
        ).where(wanted)
        columns = ["person", "seq", "kind", "created_at", "due_at"]
        self.kept = (
            rows_changed(connection.execute(insert_into(push_outbox).from_select(columns, row))) > 0
        )


class Outbox:
    def __init__(self, db: Database, group_s: float, clock: Clock = utc_now) -> None:
        """`group_s`: how long a first row waits for others to be sent with it."""
        self._db = db
        self._group = timedelta(seconds=group_s)
        self._clock = clock
        self.written = asyncio.Event()

    def told(self, person: str, kind: str) -> Keeping:
        """What the transaction telling an update of `kind` to the person also does: keeps the
        message to notify, when a device of theirs takes notifications. Once that transaction
        has committed, `wake` it."""
        return Keeping(person, kind, self._group, self._clock)

    def wake(self, keeping: Keeping) -> None:
        """After the telling's commit: the sender looks for its row once the group has formed.
        Woken before the commit, it could look too early, then wait out its poll."""
        if keeping.kept:
            self.written.set()

    async def due_people(self) -> list[str]:
        now = self._clock()
        fallback = select(push_outbox.c.person).where(push_outbox.c.due_at <= now).distinct()
        async with self._db() as db:
            rows = await across_people(db, "session_push_due", fallback, moment=now)
        return [row.person for row in rows]

    async def take(self, person: str, holder: str, lease_s: float) -> list[Pending]:
        """The person's rows nobody holds, now held by `holder` for `lease_s`, when the first of
        them is due; none when another replica holds the person's group."""
        now = self._clock()
        mine = push_outbox.c.person == person
        free = or_(push_outbox.c.until.is_(None), push_outbox.c.until < now)
        async with self._db() as tx, tx.begin():
            held_elsewhere = await tx.scalar(
                select(exists().where(mine, ~free, push_outbox.c.holder != holder))
            )
            due = await tx.scalar(select(exists().where(mine, push_outbox.c.due_at <= now)))
            if held_elsewhere or not due:
                return []
            until = now + timedelta(seconds=lease_s)
            await tx.execute(
                update(push_outbox).where(mine, free).values(holder=holder, until=until)
            )
            rows = await tx.execute(
                select(push_outbox)
                .where(mine, push_outbox.c.holder == holder, push_outbox.c.until > now)
                .order_by(push_outbox.c.seq)
            )
            return [Pending(row.id, row.seq, row.kind, row.attempts) for row in rows]

    async def done(self, pending: list[Pending]) -> None:
        async with self._db() as tx, tx.begin():
            await tx.execute(delete(push_outbox).where(push_outbox.c.id.in_(_ids(pending))))

    async def again(self, pending: list[Pending], after: timedelta) -> None:
        """Sends the group again after `after`, counting the attempt."""
        async with self._db() as tx, tx.begin():
            await tx.execute(
                update(push_outbox)
                .where(push_outbox.c.id.in_(_ids(pending)))
                .values(
                    due_at=self._clock() + after,
                    attempts=push_outbox.c.attempts + 1,
                    holder=None,
                    until=None,
                )
            )


def _ids(pending: list[Pending]) -> list[int]:
    return [row.id for row in pending]
