"""The devices a person signed in with, as each said hello: for their archive."""

from __future__ import annotations

from datetime import datetime

from session.tables import devices
from violet.clock import Clock, utc_now
from violet.database import Database, conflict_insert, is_postgres_session

MAX_AGENT = 200


class Devices:
    def __init__(self, db: Database, clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    async def seen(self, person: str, device: str, signed_in_at: datetime, agent: str) -> None:
        """Records the device's hello: first seen once, last seen each time."""
        now = self._clock()
        async with self._db() as tx, tx.begin():
            await tx.execute(
                conflict_insert(devices, postgres=is_postgres_session(tx))
                .values(
                    person=person,
                    device=device,
                    signed_in_at=signed_in_at,
                    first_seen=now,
                    last_seen=now,
                    agent=" ".join(agent.split())[:MAX_AGENT],
                )
                .on_conflict_do_update(index_elements=["person", "device"], set_={"last_seen": now})
            )
