"""Sends what waits in the outbox: one notification per group of a person's pending messages,
to each device of theirs that takes them.

Sending is at least once: a group leaves the outbox only after every device took it or cannot
(gone, or refused for good), and is sent again later otherwise; its tag makes a device show it
once. A device that a push service says is gone loses its subscription. A group for a person
a device of whom follows the conversation as it goes is dropped: that device shows the messages
itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta

from opentelemetry import trace
from sqlalchemy import select

from session.notify.outbox import Outbox, Pending
from session.notify.presence import Presence
from session.notify.subscriptions import Subscription, Subscriptions
from session.notify.wording import notice
from session.tables import conversations, messages
from violet.database import Database
from violet.identity import acting_for
from violet.metrics import NOTIFICATIONS
from violet.push import Notice, Outcome, Pusher, Sent

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
# People whose groups are sent at once: a slow push service delays a few, not everyone, and
# the database connections stay free for turns.
PEOPLE_AT_ONCE = 4

LanguageOf = Callable[[str], Awaitable[str]]


class Notifier:
    def __init__(
        self,
        db: Database,
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
                # Cleared first: a write while this group forms wakes the next round at once.
                self._outbox.written.clear()
                await asyncio.sleep(group_s)
            try:
                await self.send_due()
            except Exception:
                log.exception("notifications could not be sent; they are tried again later")

    async def send_due(self) -> int:
        """Sends every due group, a few people at a time; how many were sent or dropped."""
        room = asyncio.Semaphore(PEOPLE_AT_ONCE)

        async def send_for(person: str) -> int:
            async with room:
                with acting_for(person):
                    return await self._send_group(person)

        return sum(await asyncio.gather(*map(send_for, await self._outbox.due_people())))

    async def _send_group(self, person: str) -> int:
        group = await self._outbox.take(person, self._replica, LEASE_S)
        if not group:
            return 0
        with tracer.start_as_current_span("notify") as span:
            span.set_attribute("violet.notify.messages", len(group))
            if await self._presence.here(person):
                # A device follows, connected since or all along: it shows the messages.
                NOTIFICATIONS.add(1, {"violet.notify.outcome": "seen"})
                await self._outbox.done(group)
                return 1
            subscriptions = await self._subscriptions.of(person)
            language = await self._language_of(person)
            previews = any(each.previews for each in subscriptions)
            texts = await self._texts(person, group) if previews else {}
            sent = await asyncio.gather(
                *(
                    self._push(person, each, notice(group, language, each.previews, texts))
                    for each in subscriptions
                )
            )
            span.set_attribute("violet.notify.devices", len(subscriptions))
            await self._settle(group, [s for s in sent if s.outcome is Outcome.RETRY])
        return 1

    async def _push(self, person: str, subscription: Subscription, told: Notice) -> Sent:
        pusher = self._pushers.get(subscription.address.kind)
        if pusher is None:
            return Sent(Outcome.FAILED, None, f"no sender for {subscription.address.kind}", None)
        sent = await pusher.push(subscription.address, told)
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
