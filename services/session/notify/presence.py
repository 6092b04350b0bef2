"""Which of a person's devices follow the conversation now, on any replica: a notification is
for a person none of whose devices does.

Each follower (one device's stream, through a gateway) is a row with an expiry, renewed while it
follows and removed when it stops; a replica that stopped without removing its rows stops
counting once they expire.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, insert, select, update
from sqlalchemy.engine import Connection

from session.tables import presence
from violet.clock import Clock, utc_now
from violet.database import Database

# How long a follower counts without renewing: a few of the streams' safety-net wake-ups.
PRESENCE_S = 150.0
# A follower renews once this much of it has passed.
RENEW_AFTER_S = PRESENCE_S / 3


class Follower:
    """One device's stream, counted as present from `arrive_on` while it renews."""

    def __init__(self, presence: Presence, person: str, key: str, until: datetime) -> None:
        self._presence = presence
        self._person = person
        self.key = key
        self._until = until

    def arrive_on(self, connection: Connection) -> None:
        """Counts the stream, as work for `Database.run`: in the trip that opens it."""
        connection.execute(
            insert(presence).values(follower=self.key, person=self._person, until=self._until)
        )

    async def renew_if_due(self) -> None:
        if self._until - self._presence.now() < timedelta(seconds=PRESENCE_S - RENEW_AFTER_S):
            self._until = await self._presence.renew(self.key)


class Presence:
    def __init__(self, db: Database, clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    def now(self) -> datetime:
        return self._clock()

    @contextlib.asynccontextmanager
    async def following(self, person: str) -> AsyncIterator[Follower]:
        """A device's stream of the person's conversation, counted once it arrives
        (`Follower.arrive_on`) and no longer once the block ends."""
        follower = Follower(self, person, uuid.uuid4().hex, self._until())
        try:
            yield follower
        finally:
            await self._db.execute(delete(presence).where(presence.c.follower == follower.key))

    async def renew(self, key: str) -> datetime:
        until = self._until()
        await self._db.execute(
            update(presence).where(presence.c.follower == key).values(until=until)
        )
        return until

    async def here(self, person: str) -> bool:
        """Whether any device of the person follows the conversation now."""
        now = self._clock()
        here = exists().where(presence.c.person == person, presence.c.until > now)
        return bool(await self._db.scalar(select(here)))

    def _until(self) -> datetime:
        return self._clock() + timedelta(seconds=PRESENCE_S)
