"""Where each of a person's devices takes notifications: one subscription per device, kept with
the person's data (exported and erased with it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Row, delete, func, select

from session.tables import push_subscriptions
from violet.clock import Clock, utc_now
from violet.database import Database, Session, conflict_insert, is_postgres_session, rows_changed
from violet.push import PushAddress

# Subscriptions kept per person: a new device past this many replaces the one changed longest ago.
MAX_DEVICES = 10


@dataclass(frozen=True)
class Subscription:
    device: str
    address: PushAddress
    previews: bool
    # A digest of the token of the signed-in device that turned it on: signed out, it goes.
    signed_in_device: str = ""


class Subscriptions:
    def __init__(self, db: Database, clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    async def of(self, person: str) -> list[Subscription]:
        async with self._db() as db:
            rows = await db.execute(
                select(push_subscriptions)
                .where(push_subscriptions.c.person == person)
                .order_by(push_subscriptions.c.device)
            )
            return [_subscription(row) for row in rows]

    async def one(self, person: str, device: str) -> Subscription | None:
        async with self._db() as db:
            row = (await db.execute(select(push_subscriptions).where(_the(person, device)))).first()
        return _subscription(row) if row else None

    async def keep(self, person: str, subscription: Subscription) -> None:
        """Keeps the device's subscription, replacing its last one; past MAX_DEVICES, the one
        changed longest ago goes."""
        now = self._clock()
        address = subscription.address
        values = {
            "kind": address.kind,
            "endpoint": address.endpoint,
            "p256dh": address.p256dh,
            "auth": address.auth,
            "previews": subscription.previews,
            "signed_in_device": subscription.signed_in_device or None,
            "updated_at": now,
        }
        async with self._db() as tx, tx.begin():
            await tx.execute(
                conflict_insert(push_subscriptions, postgres=is_postgres_session(tx))
                .values(person=person, device=subscription.device, created_at=now, **values)
                .on_conflict_do_update(index_elements=["person", "device"], set_=values)
            )
            await _keep_newest(tx, person)

    async def remove(self, person: str, device: str, endpoint: str | None = None) -> bool:
        """Removes the device's subscription; with `endpoint`, only while it is still that one
        (a push service's "gone" must not remove the address the browser gave since)."""
        statement = delete(push_subscriptions).where(_the(person, device))
        if endpoint is not None:
            statement = statement.where(push_subscriptions.c.endpoint == endpoint)
        async with self._db() as tx, tx.begin():
            return rows_changed(await tx.execute(statement)) > 0


def _the(person: str, device: str) -> ColumnElement[bool]:
    return (push_subscriptions.c.person == person) & (push_subscriptions.c.device == device)


async def _keep_newest(tx: Session, person: str) -> None:
    mine = push_subscriptions.c.person == person
    count = await tx.scalar(select(func.count()).select_from(push_subscriptions).where(mine))
    if not count or count <= MAX_DEVICES:
        return
    oldest = (
        select(push_subscriptions.c.device)
        .where(mine)
        .order_by(push_subscriptions.c.updated_at, push_subscriptions.c.device)
        .limit(count - MAX_DEVICES)
    )
    devices = list((await tx.scalars(oldest)).all())
    await tx.execute(
        delete(push_subscriptions).where(mine, push_subscriptions.c.device.in_(devices))
    )


def _subscription(row: Row[Any]) -> Subscription:
    address = PushAddress(row.kind, row.endpoint, row.p256dh, row.auth)
    return Subscription(row.device, address, bool(row.previews), row.signed_in_device or "")
