"""The devices a person signed in with, as each said hello: listed for them (and the operator),
and signed out one at a time or all at once.

A device is known by a digest of its token, never by the token. It is shown, and signed out,
by a handle: the digest's first characters, which name it among the person's devices and from
which no token can be read. A device signed out is refused from then on, wherever it comes
(`session.erasure.Standing`): its stream ends on every replica (woken at once, on PostgreSQL
through a notification), and the notifications it turned on go with it. Signing out every
device also refuses every token of the person issued until then, those never used included.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, text, update
from sqlalchemy.engine import Connection

from session.tables import conversations, devices, push_subscriptions
from session.transcript import NOTIFY_CHANNEL
from violet.clock import Clock, utc_now
from violet.database import Database, conflict_insert, is_postgres_session
from violet.identity import acting_for

MAX_AGENT = 200
# Hex characters of the token's digest that name a device: 64 bits, unique among a person's.
HANDLE_CHARS = 16

_SIGNED_IN = devices.c.signed_out_at.is_(None)
_WAKE = text("SELECT pg_notify(:channel, :payload)")


class UnknownDevice(Exception):
    """No signed-in device of the person has that handle."""


@dataclass(frozen=True)
class SignedIn:
    """A device of the person's that is signed in."""

    handle: str
    agent: str
    first_seen: datetime
    last_seen: datetime
    this_device: bool


def handle_of(device: str) -> str:
    return device[:HANDLE_CHARS]


class Devices:
    def __init__(self, db: Database, clock: Clock = utc_now) -> None:
        self._db = db
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

    async def listed(self, person: str, asking: str = "") -> list[SignedIn]:
        """The person's signed-in devices, most recently seen first; `asking` (a digest of the
        asking device's token) is marked as this device."""
        with acting_for(person):
            return await self._db.run(_listed_on, person, asking)

    async def sign_out(self, person: str, handle: str | None) -> str | None:
        """Signs out the person's device with `handle`, or every device of theirs (None); the
        id of their conversation, whose streams must read their standing again. Raises
        UnknownDevice when no signed-in device has the handle."""
        with acting_for(person):
            return await self._db.run(self._sign_out_on, person, handle)

    def _sign_out_on(self, connection: Connection, person: str, handle: str | None) -> str | None:
        now = self._clock()
        theirs = [devices.c.person == person, _SIGNED_IN]
        if handle is not None:
            if len(handle) != HANDLE_CHARS:
                raise UnknownDevice(handle)
            theirs.append(devices.c.device.startswith(handle, autoescape=True))
        gone = [row.device for row in connection.execute(select(devices.c.device).where(*theirs))]
        if handle is not None and not gone:
            raise UnknownDevice(handle)
        connection.execute(
            update(devices)
            .where(devices.c.person == person, devices.c.device.in_(gone))
            .values(signed_out_at=now)
        )
        notified = delete(push_subscriptions).where(push_subscriptions.c.person == person)
        if handle is not None:
            notified = notified.where(push_subscriptions.c.signed_in_device.in_(gone))
        connection.execute(notified)
        mine = conversations.c.person == person
        if handle is None:
            connection.execute(update(conversations).where(mine).values(signed_out_before=now))
        conversation = connection.scalar(select(conversations.c.id).where(mine))
        if conversation is not None and is_postgres_session(connection):
            # Other replicas' streams of the conversation read its standing again at once.
            connection.execute(_WAKE, {"channel": NOTIFY_CHANNEL, "payload": conversation})
        return conversation


def _listed_on(connection: Connection, person: str, asking: str) -> list[SignedIn]:
    rows = connection.execute(
        select(devices)
        .where(devices.c.person == person, _SIGNED_IN)
        .order_by(devices.c.last_seen.desc())
    )
    return [
        SignedIn(
            handle_of(row.device), row.agent, row.first_seen, row.last_seen, row.device == asking
        )
        for row in rows
    ]
