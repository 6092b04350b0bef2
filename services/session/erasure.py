"""Removing a person everywhere, and refusing their old sign-ins afterwards.

A removal is written down first (`removals`, with the person's name), so that from then on no
say, update or sign-in of theirs is taken, and a replica that stops halfway leaves a removal
that any replica's sweep finishes. It then waits for the person's turn lock (the turn under way
ends) and for the captures of their turns on their way to memory from any replica (none is
taken once the removal is written: `session.capture.owed`), asks the worker, the router and
memory to erase the person (each idempotent, each stopping the person's work there first),
erases the session's own rows (the captures still owed among them), and only then forgets the
name: what stays is a keyed digest of it and the time, so a token issued before the removal is
refused until tokens that old have expired (`DEVICE_TOKEN_TTL_S`).

Usage rows leave their sums behind with no person (`erased_usage`), so the operator's totals
stay right.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection

from session.accounts import adding
from session.feed import Feed
from session.tables import (
    account_notices,
    budgets,
    conversations,
    devices,
    effects,
    erased_usage,
    messages,
    model_conversations,
    model_usage,
    owed_captures,
    person_keys,
    pins,
    presence,
    pseudonym_keys,
    push_outbox,
    push_subscriptions,
    reminders,
    removals,
    updates,
)
from violet.channels import Peers
from violet.clock import Clock, utc_now
from violet.database import Database, Session, rows_changed
from violet.faults import fault_point
from violet.identity import DEVICE_TOKEN_TTL_S, acting_for, service_identity
from violet.leases import Lease, LeaseColumns
from violet.v1 import persons_pb2, persons_pb2_grpc

log = logging.getLogger(__name__)

# The worker first, so no work of theirs goes on sending cards or results; memory last.
SERVICES = ("worker", "router", "memory")
LOCK_RETRY_S = 0.2
CARRYING = LeaseColumns(removals.c.digest, removals.c.holder, removals.c.until)
_DIGEST_LABEL = b"violet removed people"
USAGE_SUMS = (
    "calls",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "cost_usd",
)


# Every table of the session service, and what becomes of a person's rows in an export and a
# removal: a new table fails the test that holds this list to `tables.metadata` until it is
# placed here.
PERSON_TABLES = {
    "conversations": "exported: the messages, under `conversation`; erased",
    "messages": "exported as `conversation`; erased",
    "model_conversations": "internal: which model conversation held which messages; erased",
    "pins": "internal: what travels with every main call; erased",
    "updates": "internal: results and approvals before they are told (told, they are messages, "
    "and the worker exports them as `work` and `approvals`); erased",
    "effects": "internal: what each tool call of a turn did; erased",
    "person_keys": "exported as `account.own_key` (its last 4 characters); erased",
    "model_usage": "exported as `usage`; erased, its sums kept in `erased_usage` with no person",
    "budgets": "exported as `account.budget`; erased",
    "account_notices": "internal: notices told once; erased",
    "devices": "exported as `devices`; erased",
    "pseudonym_keys": "internal: the key of the person's pseudonym in traces and to the API; "
    "erased, so that the pseudonym names nobody",
    "removals": "the operator's record of removals: a keyed digest of the name, once finished",
    "erased_usage": "removed people's usage sums, with no person",
    "retention_passes": "the daily retention pass's own record, naming nobody",
    "push_subscriptions": "exported as `notifications` (where they go, not the browser's "
    "keys); erased",
    "presence": "internal: which devices follow the conversation now; erased",
    "push_outbox": "internal: messages waiting to be notified; erased",
    "owed_captures": "internal: turns' captures owed to memory (copies of the messages); erased",
    "reminders": "exported as `reminders`; erased",
}


class Removed(Exception):
    """The person is being removed, or was removed after this device signed in."""


class DeviceSignedOut(Removed):
    """The device was signed out (by the person or the operator): the person is still here."""


@dataclass(frozen=True)
class _Removal:
    # None while the removal runs.
    finished_at: datetime | None


@dataclass(frozen=True)
class Erased:
    at: datetime
    # Whether the session held anything of the person before.
    held: bool


def signed_in(unix: int) -> datetime | None:
    """A device token's issue time as its request carries it; None when it carries none."""
    return datetime.fromtimestamp(unix, UTC) if unix > 0 else None


def person_digest(secret: str, person: str) -> str:
    """A keyed digest of the name: who was removed cannot be read back from it."""
    key = hmac.new(secret.encode(), _DIGEST_LABEL, hashlib.sha256).digest()
    return hmac.new(key, person.encode(), hashlib.sha256).hexdigest()


class Standing:
    """Whether a person may be served: not while they are being removed, and after a removal
    only from a device that signed in since."""

    def __init__(self, db: Database, secret: str) -> None:
        self._db = db
        self._secret = secret

    async def check(
        self, person: str, signed_in_at: datetime | None = None, device: str = ""
    ) -> str | None:
        """Raises Removed unless the person may be served; else returns their conversation's
        id (None before their first message), read with their standing in the same trip.
        `signed_in_at`: when the device's token was issued, for a device opening the
        conversation; None for a call that comes after one, which is refused once any removal
        ran since the conversation began. `device`: a digest of the device's token, refused
        once the device is signed out (`session.devices`)."""
        with acting_for(person):
            return await self._db.run(self.check_on, person, signed_in_at, device)

    def check_on(
        self,
        connection: Connection,
        person: str,
        signed_in_at: datetime | None = None,
        device: str = "",
    ) -> str | None:
        """`check` as work for `Database.run`: a say is stored, or the conversation opened,
        in the same trip the person's standing is read."""
        standing = _standing_on(connection, self._digest(person), person, device)
        return _judged(standing, signed_in_at)

    def removed_on(self, connection: Connection, person: str) -> bool:
        """Whether a call for the person, with no sign-in time of its own, is too late: they
        are being removed, or were removed since their conversation began (or they have none).
        What such a call wanted to write names nobody, or is not written."""
        try:
            self.check_on(connection, person)
        except Removed:
            return True
        return False

    def _digest(self, person: str) -> str:
        return person_digest(self._secret, person)


@dataclass(frozen=True)
class _Standing:
    """What `_standing_on` read of a person and, with one, of the asking device."""

    removal: _Removal | None
    conversation: str | None
    began: datetime | None
    # Every device signed out at once: tokens issued before are refused.
    signed_out_before: datetime | None = None
    # The asking device was signed out.
    device_signed_out: bool = False


def _judged(standing: _Standing, signed_in_at: datetime | None) -> str | None:
    """`Standing.check`'s verdict on what `_standing_on` read."""
    if standing.device_signed_out:
        raise DeviceSignedOut("the device was signed out")
    before = standing.signed_out_before
    if before is not None and signed_in_at is not None and signed_in_at <= before:
        raise DeviceSignedOut("every device was signed out since this one signed in")
    removal = standing.removal
    if removal is None:
        return standing.conversation
    if removal.finished_at is None:
        raise Removed("the person is being removed")
    if signed_in_at is not None:
        if signed_in_at <= removal.finished_at:
            raise Removed("the device signed in before the person was removed")
    elif standing.began is None or standing.began <= removal.finished_at:
        raise Removed("the person was removed since this device signed in")
    return standing.conversation


_REMOVAL = select(removals.c.finished_at).where(removals.c.digest == bindparam("digest"))
_CONVERSATION = select(
    conversations.c.id, conversations.c.created_at, conversations.c.signed_out_before
).where(conversations.c.person == bindparam("person"))
_DEVICE_SIGNED_OUT = select(devices.c.signed_out_at).where(
    devices.c.person == bindparam("person"),
    devices.c.device == bindparam("device"),
    devices.c.signed_out_at.is_not(None),
)


def _standing_on(connection: Connection, digest: str, person: str, device: str) -> _Standing:
    """The person's last removal, if any, their conversation's id and start, if any, and
    whether the asking device (if one asks) was signed out."""
    removal = connection.execute(_REMOVAL, {"digest": digest}).first()
    conversation = connection.execute(_CONVERSATION, {"person": person}).first()
    signed_out = device != "" and (
        connection.execute(_DEVICE_SIGNED_OUT, {"person": person, "device": device}).first()
        is not None
    )
    return _Standing(
        None if removal is None else _Removal(removal.finished_at),
        None if conversation is None else conversation.id,
        None if conversation is None else conversation.created_at,
        None if conversation is None else conversation.signed_out_before,
        signed_out,
    )


class Erasure:
    def __init__(
        self,
        db: Database,
        peers: Peers,
        feed: Feed,
        turn_lock: Lease,
        secret: str,
        replica: str,
        lease_s: float,
        captured: Callable[[str, str], Awaitable[None]],
        clock: Clock = utc_now,
    ) -> None:
        """`turn_lock` must hold for a holder of its own, so that it waits for this replica's
        turns too; `captured(conversation_id, person)` returns once no capture of the
        conversation is on its way to memory, from any replica."""
        self._captured = captured
        self._db = db
        self._peers = peers
        self._feed = feed
        self._turn_lock = turn_lock
        self._secret = secret
        self._clock = clock
        # One replica at a time carries a removal out; one that stops is taken over.
        self._carrying = Lease(db, CARRYING, replica, lease_s, clock)

    async def remove(self, person: str, requested_by: str) -> Erased:
        """Removes the person everywhere; returns once nothing of theirs is left."""
        held = await self._holds(person)
        await self._begin(person, requested_by)
        if not await self._carry_out(person):
            await self._finished_elsewhere(person)
        return Erased(at=await self._finished_at(person) or self._clock(), held=held)

    async def resume(self) -> int:
        """Finishes every removal left halfway that no replica carries out now (one stopped
        during it); how many this replica finished."""
        async with self._db() as db:
            left = (
                await db.scalars(
                    select(removals.c.person).where(
                        removals.c.finished_at.is_(None),
                        removals.c.person.is_not(None),
                        CARRYING.free(self._clock()),
                    )
                )
            ).all()
        return sum([await self._carry_out(person) for person in left])

    async def purge(self) -> None:
        """Forgets removals older than any token still valid: nothing is left to refuse."""
        oldest = self._clock() - timedelta(seconds=DEVICE_TOKEN_TTL_S)
        async with self._db() as tx, tx.begin():
            await tx.execute(delete(removals).where(removals.c.finished_at < oldest))

    async def sweep_forever(self, every_s: float) -> None:
        while True:
            try:
                await self.resume()
                await self.purge()
            except Exception:
                log.exception("finishing removals failed; the next sweep tries again")
            await asyncio.sleep(every_s)

    async def _holds(self, person: str) -> bool:
        with acting_for(person):
            async with self._db() as db:
                for table in (conversations, person_keys, model_usage, budgets):
                    if await db.scalar(select(table.c.person).where(table.c.person == person)):
                        return True
        return False

    async def _begin(self, person: str, requested_by: str) -> None:
        digest = person_digest(self._secret, person)
        values = {"person": person, "requested_at": self._clock(), "finished_at": None}
        async with self._db() as tx, tx.begin():
            changed = await tx.execute(
                update(removals).where(removals.c.digest == digest).values(values)
            )
            if not rows_changed(changed):
                await tx.execute(
                    insert(removals).values(digest=digest, requested_by=requested_by, **values)
                )

    async def _carry_out(self, person: str) -> bool:
        """Carries the removal out unless another replica does; whether this one did."""
        async with self._carrying.holding(person_digest(self._secret, person)) as carrying:
            if carrying and await self._finished_at(person) is None:
                await self._finish(person)
        return carrying

    async def _finished_elsewhere(self, person: str) -> None:
        """Waits for the replica carrying the removal out (or, should it stop, the one that
        takes it over)."""
        while True:
            if await self._finished_at(person) is not None:
                return
            await asyncio.sleep(LOCK_RETRY_S)

    async def _finished_at(self, person: str) -> datetime | None:
        async with self._db() as db:
            return await db.scalar(
                select(removals.c.finished_at).where(
                    removals.c.digest == person_digest(self._secret, person)
                )
            )

    async def _finish(self, person: str) -> None:
        with acting_for(person):
            conversation_id = await self._conversation_id(person)
            if conversation_id is not None:
                # Every device following the conversation reads its standing again, and leaves.
                self._feed.publish(conversation_id)
            conversation_id = await self._take_turn_lock(person)
            if conversation_id is None:
                await self._erase_everywhere(person, None)
                return
            async with self._turn_lock.held(conversation_id):
                await self._captured(conversation_id, person)
                await self._erase_everywhere(person, conversation_id)
            self._feed.publish(conversation_id)

    async def _take_turn_lock(self, person: str) -> str | None:
        """Takes the person's turn lock once the turn under way ends (or its lease runs out);
        the conversation's id, or None when there is none (any more)."""
        while True:
            conversation_id = await self._conversation_id(person)
            if conversation_id is None or await self._turn_lock.try_acquire(conversation_id):
                return conversation_id
            await asyncio.sleep(LOCK_RETRY_S)

    async def _erase_everywhere(self, person: str, conversation_id: str | None) -> None:
        identity = service_identity(person, self._secret)
        for name in SERVICES:
            stub = self._peers.stub(name, persons_pb2_grpc.PersonDataStub)
            erased = await stub.Erase(persons_pb2.EraseRequest(), metadata=identity.metadata())
            log.info(
                "removal: %s erased %d rows, %d vectors, %d files",
                name,
                erased.rows,
                erased.vectors,
                erased.files,
            )
        fault_point("session.erasure_services_erased")
        async with self._db() as tx, tx.begin():
            await _erase_own(tx, person, conversation_id)
            await tx.execute(
                update(removals)
                .where(removals.c.digest == person_digest(self._secret, person))
                .values(person=None, finished_at=self._clock())
            )

    async def _conversation_id(self, person: str) -> str | None:
        async with self._db() as db:
            return await db.scalar(
                select(conversations.c.id).where(conversations.c.person == person)
            )


async def _erase_own(tx: Session, person: str, conversation_id: str | None) -> None:
    """The session's rows of the person, in one transaction; usage leaves its sums behind."""
    await _keep_usage_sums(tx, person)
    if conversation_id is not None:
        # Reminders first: a reminder firing holds its row while it writes what it owes (an
        # update, a pin), so the delete waits for it here and the later deletes see its rows.
        children = (reminders, effects, updates, owed_captures, messages, pins, model_conversations)
        for child in children:
            await tx.execute(delete(child).where(child.c.conversation_id == conversation_id))
        await tx.execute(delete(conversations).where(conversations.c.id == conversation_id))
    for table in (
        person_keys,
        model_usage,
        budgets,
        account_notices,
        devices,
        pseudonym_keys,
        push_subscriptions,
        push_outbox,
        presence,
    ):
        await tx.execute(delete(table).where(table.c.person == person))


async def _keep_usage_sums(tx: Session, person: str) -> None:
    rows = (await tx.execute(select(model_usage).where(model_usage.c.person == person))).all()
    for row in rows:
        key = {name: getattr(row, name) for name in ("day", "call", "payer", "model")}
        await tx.execute(adding(tx, erased_usage, key, {n: getattr(row, n) for n in USAGE_SUMS}))
