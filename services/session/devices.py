"""The devices a person signed in with, as each said hello: for their archive."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.tables import devices
from violet.clock import Clock, utc_now
from violet.database import rows_changed

MAX_AGENT = 200


class Devices:
    def __init__(self, db: async_sessionmaker[AsyncSession], clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, person: str, device: str, signed_in_at: datetime, agent: str) -> None:
        """Records the device's hello: first seen once, last seen each time."""
        now = self._clock()
        where = (devices.c.person == person, devices.c.device == device)
        agent = " ".join(agent.split())[:MAX_AGENT]
        async with self._db() as tx, tx.begin():
            seen = await tx.execute(update(devices).where(*where).values(last_seen=now))
            if rows_changed(seen):
                return
        try:
            async with self._db() as tx, tx.begin():
                await tx.execute(
                    insert(devices).values(
                        person=person,
                        device=device,
                        signed_in_at=signed_in_at,
                        first_seen=now,
                        last_seen=now,
                        agent=agent,
                    )
                )
        except IntegrityError:
            pass  # the same device's other connection recorded it at the same moment
