"""Sends what waits in the outbox: one notification per group of a person's pending messages,
to each device of theirs that takes them.

Sending is at least once: a group leaves the outbox only after every device took it or cannot
(gone, or refused for good), and is sent again later otherwise; its tag makes a device show it
once. A device that a push service says is gone loses its subscription. A group for a person
who has since connected is dropped: the device shows the messages itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta

from opentelemetry import trace
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.notify.outbox import Outbox, Pending
from session.notify.presence import Presence
from session.notify.subscriptions import Subscription, Subscriptions
from session.notify.wording import notice
from session.tables import conversations, messages
from violet.identity import acting_for
from violet.metrics import NOTIFICATIONS
from violet.push import Outcome, Pusher, Sent

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

# The outbox is looked at this often even when nothing here wrote to it (another replica's
# rows after it stopped, retries that came due).
POLL_S = 15.0
# Retries wait twice as long each time, from a minute to an hour; after this many attempts a
# group is given up (about a day).
FIRST_RETRY_S = 60.0
LAST_RETRY_S = 3600.0
MAX_ATTEMPTS = 30
LEASE_S = 60.0

LanguageOf = Callable[[str], Awaitable[str]]


class Notifier:
    def __init__(
        self,
        db: async_sessionmaker[AsyncSession],
        outbox: Outbox,
        subscriptions: Subscriptions,
        presence: Presence,
        pushers: Mapping[str, Pusher],
        language_of: LanguageOf,
        replica: str,
    ) -> None:
        self._db = db
        self._outbox = outbox
        self._subscriptions = subscriptions
        self._presence = presence
        self._pushers = pushers
        self._language_of = language_of
        self._replica = replica

    async def forever(self, group_s: float, poll_s: float = POLL_S) -> None:
        """Sends what is due; after a write here, once its group has had time to form."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.written.wait(), poll_s)
                await asyncio.sleep(group_s)
            self._outbox.written.clear()
            try:
                await self.send_due()
            except Exception:
                log.exception("notifications could not be sent; they are tried again later")

    async def send_due(self) -> int:
        """Sends every due group; how many were sent or dropped."""
        handled = 0
        for person in await self._outbox.due_people():
            with acting_for(person):
                handled += await self._send_group(person)
        return handled

    async def _send_group(self, person: str) -> int:
        group = await self._outbox.take(person, self._replica, LEASE_S)
        if not group:
            return 0
        with tracer.start_as_current_span("notify") as span:
            span.set_attribute("violet.notify.messages", len(group))
            if await self._presence.here(person):
                # A device connected since: it shows the messages itself.
                NOTIFICATIONS.add(1, {"violet.notify.outcome": "seen"})
                await self._outbox.done(group)
                return 1
            subscriptions = await self._subscriptions.of(person)
            sent = await asyncio.gather(
                *(self._push(person, group, each) for each in subscriptions)
            )
            span.set_attribute("violet.notify.devices", len(subscriptions))
            await self._settle(group, [s for s in sent if s.outcome is Outcome.RETRY])
        return 1

    async def _push(self, person: str, group: list[Pending], subscription: Subscription) -> Sent:
        pusher = self._pushers.get(subscription.address.kind)
        if pusher is None:
            return Sent(Outcome.FAILED, None, f"no sender for {subscription.address.kind}", None)
        texts = await self._texts(person, group) if subscription.previews else {}
        language = await self._language_of(person)
        sent = await pusher.push(
            subscription.address, notice(group, language, subscription.previews, texts)
        )
        NOTIFICATIONS.add(1, {"violet.notify.outcome": sent.outcome.name.lower()})
        if sent.outcome is Outcome.GONE:
            await self._subscriptions.remove(
                person, subscription.device, subscription.address.endpoint
            )
        elif sent.outcome is not Outcome.DELIVERED:
            log.warning(
                "a notification was not delivered",
                extra={"outcome": sent.outcome.name, "status": sent.status, "reason": sent.reason},
            )
        return sent

    async def _settle(self, group: list[Pending], retries: list[Sent]) -> None:
        attempts = max(row.attempts for row in group) + 1
        if not retries:
            await self._outbox.done(group)
        elif attempts >= MAX_ATTEMPTS:
            NOTIFICATIONS.add(1, {"violet.notify.outcome": "given_up"})
            log.error("a notification was given up after %d attempts", attempts)
            await self._outbox.done(group)
        else:
            wait = min(FIRST_RETRY_S * 2 ** (attempts - 1), LAST_RETRY_S)
            asked = max((s.retry_after_s or 0.0) for s in retries)
            await self._outbox.again(group, timedelta(seconds=max(wait, asked)))

    async def _texts(self, person: str, group: list[Pending]) -> dict[int, str]:
        """Violet's words in the group's messages, by seq."""
        async with self._db() as db:
            rows = await db.execute(
                select(messages.c.seq, messages.c.text)
                .join(conversations, conversations.c.id == messages.c.conversation_id)
                .where(conversations.c.person == person)
                .where(messages.c.seq.in_([row.seq for row in group]))
            )
            return {row.seq: row.text for row in rows}
