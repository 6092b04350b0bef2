"""One turn of a person at a time, on any replica: a lease on the conversation's row."""

from __future__ import annotations

from session.tables import conversations
from violet.clock import Clock, utc_now
from violet.database import Database
from violet.leases import Lease, LeaseColumns

TURN_LOCK = LeaseColumns(
    conversations.c.id, conversations.c.lock_holder, conversations.c.lock_until
)


def turn_lock(db: Database, holder: str, lease_s: float, clock: Clock = utc_now) -> Lease:
    return Lease(db, TURN_LOCK, holder, lease_s, clock)
