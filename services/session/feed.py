"""Wakes the streams that follow a conversation when its transcript grows.

Wake-ups are the mechanism: appends on this replica wake its streams directly, and appends on
other replicas arrive through PostgreSQL LISTEN/NOTIFY. A stream then reads the transcript only
when woken, or after a slow safety-net poll (`idle_poll_s`, jittered so streams never read
together). While the notifications are out (the LISTEN connection lost, or not yet made) the
streams poll every `poll_s` instead, and every stream is woken when they come back, since
notifications may have been missed meanwhile.

On SQLite the session process is the transcript's only writer (the worker's updates and every
say reach it over gRPC), so its own wake-ups are complete: one session process per SQLite file;
more replicas need PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Awaitable, Callable

import psycopg
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import URL

from session.transcript import NOTIFY_CHANNEL
from violet.database import application_name

log = logging.getLogger(__name__)

IDLE_POLL_S = 30.0
# The safety-net poll is spread over this share of `idle_poll_s` either side.
IDLE_POLL_JITTER = 0.25
# Activity lines kept for a follower that has not read them; each replaces the last, so the
# oldest go first.
ACTIVITY_BACKLOG = 8
# The LISTEN connection's TCP keepalives: a server that vanished without closing the
# connection is noticed in about a minute, not at the next write.
LISTEN_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}

Connect = Callable[[str], Awaitable[psycopg.AsyncConnection[tuple[object, ...]]]]


async def connect_listener(conninfo: str) -> psycopg.AsyncConnection[tuple[object, ...]]:
    return await psycopg.AsyncConnection.connect(conninfo, autocommit=True)


def listener_conninfo(url: URL, replica: str) -> str:
    """The LISTEN connection's parameters: named after the replica in `pg_stat_activity`,
    with TCP keepalives."""
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"{application_name('session')}-listen-{replica}"[:63]
    return make_conninfo(conninfo, application_name=name, **LISTEN_KEEPALIVES)


class Feed:
    def __init__(
        self, poll_s: float, idle_poll_s: float = IDLE_POLL_S, *, notified: bool = True
    ) -> None:
        """`notified`: whether every append reaches this feed as a wake-up from the start
        (SQLite, one process); with PostgreSQL, only once the LISTEN connection is made."""
        self.poll_s = poll_s
        self.idle_poll_s = idle_poll_s
        self.notified = notified
        self._signals: dict[str, asyncio.Event] = {}
        self._activity: dict[str, set[asyncio.Queue[str]]] = {}
        self.closed = False

    def signal(self, conversation_id: str) -> asyncio.Event:
        """Take this before reading, then wait on it: a growth after the read sets it."""
        return self._signals.setdefault(conversation_id, asyncio.Event())

    def publish(self, conversation_id: str) -> None:
        event = self._signals.pop(conversation_id, None)
        if event is not None:
            event.set()

    def subscribe(self, conversation_id: str) -> asyncio.Queue[str]:
        """A follower's queue of activity lines; they are not stored, only passed on."""
        queue: asyncio.Queue[str] = asyncio.Queue(ACTIVITY_BACKLOG)
        self._activity.setdefault(conversation_id, set()).add(queue)
        return queue

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[str]) -> None:
        followers = self._activity.get(conversation_id, set())
        followers.discard(queue)
        if not followers:
            # Nobody follows it here any more: nothing waits on its signal either.
            self._activity.pop(conversation_id, None)
            self._signals.pop(conversation_id, None)

    def announce(self, conversation_id: str, line: str) -> None:
        for queue in self._activity.get(conversation_id, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(line)
        self.publish(conversation_id)

    def wake_all(self) -> None:
        """Every follower reads the transcript again."""
        signals, self._signals = self._signals, {}
        for event in signals.values():
            event.set()

    def close(self) -> None:
        """Ends every follower's wait: the replica is going away and devices move elsewhere."""
        self.closed = True
        self.wake_all()

    def next_poll_s(self) -> float:
        """How long a follower waits for a wake-up before it reads anyway."""
        if not self.notified:
            return self.poll_s
        return self.idle_poll_s * random.uniform(1 - IDLE_POLL_JITTER, 1 + IDLE_POLL_JITTER)

    async def wait(self, event: asyncio.Event) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), self.next_poll_s())

    def _notifications(self, up: bool) -> None:
        """Followers switch to the fast poll at once when notifications go, and read again
        when they come back (what was sent meanwhile is lost)."""
        if up != self.notified:
            self.notified = up
            self.wake_all()

    def _received(self, payload: str) -> None:
        if payload.startswith("{"):
            activity = json.loads(payload)
            self.announce(activity["conversation"], activity["activity"])
        else:
            self.publish(payload)

    async def listen_postgres(self, conninfo: str, connect: Connect = connect_listener) -> None:
        """Runs until cancelled, turning NOTIFYs into wake-ups; reconnects after failures."""
        try:
            while True:
                try:
                    async with await connect(conninfo) as conn:
                        await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                        self._notifications(up=True)
                        async for notification in conn.notifies():
                            self._received(notification.payload)
                except psycopg.Error as error:
                    log.warning(
                        "transcript notifications lost; polling until back",
                        extra={"error": str(error)},
                    )
                self._notifications(up=False)
                await asyncio.sleep(self.poll_s)
        finally:
            self._notifications(up=False)
