"""One turn of a person at a time, on any replica: a lease on the conversation's row.

A lease (holder + expiry, renewed while the turn runs) rather than a held database lock, so it
works the same on SQLite and PostgreSQL and a crashed replica blocks nobody past its lease.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

from sqlalchemy import or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.tables import conversations
from session.transcript import now
from violet.database import rows_changed


class TurnLock:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], holder: str, lease_s: float
    ) -> None:
        self._sessions = sessions
        self._holder = holder
        self._lease = timedelta(seconds=lease_s)

    async def try_acquire(self, conversation_id: str) -> bool:
        moment = now()
        async with self._sessions() as db, db.begin():
            result = await db.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .where(
                    or_(
                        conversations.c.lock_until.is_(None),
                        conversations.c.lock_until < moment,
                        conversations.c.lock_holder == self._holder,
                    )
                )
                .values(lock_holder=self._holder, lock_until=moment + self._lease)
            )
            return rows_changed(result) == 1

    async def release(self, conversation_id: str) -> None:
        async with self._sessions() as db, db.begin():
            await db.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .where(conversations.c.lock_holder == self._holder)
                .values(lock_holder=None, lock_until=None)
            )

    @contextlib.asynccontextmanager
    async def held(self, conversation_id: str) -> AsyncIterator[None]:
        """Holds an acquired lease, renewing it until the block ends."""
        renewal = asyncio.create_task(self._renew(conversation_id))
        try:
            yield
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
            # Even a cancelled turn hands the lock back, so the person never waits out a lease.
            await asyncio.shield(self.release(conversation_id))

    async def _renew(self, conversation_id: str) -> None:
        while True:
            await asyncio.sleep(self._lease.total_seconds() / 3)
            await self.try_acquire(conversation_id)
