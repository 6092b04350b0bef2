"""Erasing a person's rows, with nothing of theirs written by any replica from then on.

Two guards, one for each way rows are written:
- Work under way (the steps of a work session, a tool changing the folder) first locks its work
  session's row and fails when the row is gone (`WorkSessions`). The erase locks the person's
  work session rows first too, so a step under way ends before the erase removes anything, and
  a later one finds its row gone and writes nothing.
- New work (a request, an answer) has no row to lock yet: it checks, in its own transaction,
  that no erase of the person is under way (`refuse_while_erasing`). The erase marks its start
  (`work_erasures`) before it stops anything, and removes the mark when everything is gone; a mark
  left by a crash keeps refusing until the person's next erase finishes.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import delete, false, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.database import conflict_insert, is_postgres_session, rows_changed
from worker.tables import approvals, erasures, outbox, work_messages, work_requests, work_sessions

# The first key of the worker's per-person advisory locks (PostgreSQL), so they share no key
# with other locks of the database ("wkr" in ASCII).
_LOCK_SPACE = 0x776B72


class BeingErased(Exception):
    """The person's data is being erased: nothing new of theirs is taken until it is done."""


def _lock_key(person: str) -> int:
    return int.from_bytes(hashlib.sha256(person.encode()).digest()[:4], "big", signed=True)


async def refuse_while_erasing(tx: AsyncSession, person: str) -> None:
    """Raises BeingErased while the person's erase is under way. Called first in a transaction
    that adds rows of the person; the answer holds until the transaction ends: on PostgreSQL
    through a shared lock on the person (an erase marks its start holding it alone), on SQLite
    through the database's write lock."""
    if is_postgres_session(tx):
        await tx.execute(select(func.pg_advisory_xact_lock_shared(_LOCK_SPACE, _lock_key(person))))
    else:
        # SQLite begins a transaction at its first write, not its first read: this one changes
        # nothing, and takes the write lock before the check.
        await tx.execute(update(erasures).where(false()).values(person=erasures.c.person))
    marked = await tx.scalar(select(erasures.c.person).where(erasures.c.person == person))
    if marked is not None:
        raise BeingErased(person)


class Erasures:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self._database = database
        self._clock = clock

    async def begin(self, person: str) -> None:
        """Marks the person's erase as under way (again, after a crash). Once it returns, every
        transaction that adds rows of theirs has ended or refuses."""
        async with self._database() as tx, tx.begin():
            postgres = is_postgres_session(tx)
            if postgres:
                await tx.execute(select(func.pg_advisory_xact_lock(_LOCK_SPACE, _lock_key(person))))
            await tx.execute(
                conflict_insert(erasures, postgres=postgres)
                .values(person=person, started_at=self._clock())
                .on_conflict_do_nothing(index_elements=[erasures.c.person])
            )

    async def remove_rows(self, person: str) -> int:
        """Removes every row of the person's but the mark, in one transaction; how many."""
        sessions = select(work_sessions.c.id).where(work_sessions.c.person == person)
        removals = (
            delete(work_messages).where(work_messages.c.session_id.in_(sessions)),
            delete(approvals).where(approvals.c.person == person),
            delete(work_requests).where(work_requests.c.person == person),
            delete(outbox).where(outbox.c.person == person),
            delete(work_sessions).where(work_sessions.c.person == person),
        )
        async with self._database() as tx, tx.begin():
            if is_postgres_session(tx):
                # As every step does first: a step under way on any replica ends before this
                # goes on, and one after it finds its work session gone.
                await tx.execute(sessions.with_for_update())
            removed = 0
            for removal in removals:
                removed += rows_changed(await tx.execute(removal))
            return removed

    async def end(self, person: str) -> None:
        """The erase is done: the person is taken again, as someone new."""
        async with self._database() as tx, tx.begin():
            await tx.execute(delete(erasures).where(erasures.c.person == person))
