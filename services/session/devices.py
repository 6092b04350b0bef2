"""The devices a person signed in with, as each said hello: for their archive."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.engine import Connection

from session.tables import devices
from violet.clock import Clock, utc_now
from violet.database import conflict_insert, is_postgres_session

MAX_AGENT = 200


class Devices:
    def __init__(self, clock: Clock = utc_now) -> None:
        self._clock = clock

    def seen_on(
        self, connection: Connection, person: str, device: str, signed_in_at: datetime, agent: str
    ) -> None:
        """Records the device's hello, as work for `Database.run`: first seen once, last seen
        each time."""
        now = self._clock()
        connection.execute(
            conflict_insert(devices, postgres=is_postgres_session(connection))
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
