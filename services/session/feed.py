"""Wakes the streams that follow a conversation when its transcript grows.

Wake-ups are the mechanism: appends on this replica wake its streams directly, and appends on
other replicas arrive through PostgreSQL LISTEN/NOTIFY. A stream then reads the transcript only
when woken, or after a slow safety-net poll (`idle_poll_s`, jittered so streams never read
together). While the notifications are out (the LISTEN connection lost, or not yet made) the
streams poll every `poll_s` instead, and every stream is woken when they come back, since
notifications may have been missed meanwhile.

A message stored on this replica is handed to its streams with the wake-up, so they need not
read it back. A stream reads the transcript whenever what it was handed might not be all that
is new: its first look, a wake-up that names no message or a message it was not handed (stored
on another replica), a gap in the numbers, a safety-net poll, or lost notifications.

On SQLite the session process is the transcript's only writer (the worker's updates and every
say reach it over gRPC), so its own wake-ups are complete: one session process per SQLite file;
more replicas need PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import URL

from session.transcript import NOTIFY_CHANNEL, Message, notified_seq
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


@dataclass(eq=False)
class Following:
    """One device's stream of a conversation, on this replica."""

    conversation_id: str
    # The number of the last message the device has.
    last: int
    # Messages stored on this replica since the stream last looked, by number.
    handed: dict[int, Message] = field(default_factory=dict)
    # Set when what was handed may not be all that is new: the transcript must be read.
    must_read: bool = True
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=ACTIVITY_BACKLOG))

    def news(self) -> list[Message] | None:
        """The messages after `last` when what was handed is all of them, in order; None when
        the transcript must be read. Either way, what was handed is taken."""
        handed, self.handed = self.handed, {}
        if self.must_read:
            self.must_read = False
            return None
        news = [handed[seq] for seq in sorted(handed) if seq > self.last]
        if any(message.seq != self.last + n for n, message in enumerate(news, start=1)):
            return None
        return news

    def take_lines(self) -> list[str]:
        lines = list(self.lines)
        self.lines.clear()
        return lines

    def stored(self, message: Message | None) -> None:
        if message is None:
            self.must_read = True
        else:
            self.handed[message.seq] = message

    def stored_elsewhere(self, seq: int | None) -> None:
        """A notification of a stored message: read, unless it is one this stream has."""
        if seq is None or (seq > self.last and seq not in self.handed):
            self.must_read = True


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
        self._following: dict[str, set[Following]] = {}
        self.closed = False

    def signal(self, conversation_id: str) -> asyncio.Event:
        """Take this before looking, then wait on it: a growth after the look sets it."""
        return self._signals.setdefault(conversation_id, asyncio.Event())

    def publish(self, conversation_id: str, stored: Message | None = None) -> None:
        """The conversation changed on this replica: `stored` is the message it stored, handed
        to the streams; without one they read the transcript (and see what changed)."""
        for following in self._following.get(conversation_id, ()):
            following.stored(stored)
        self._wake(conversation_id)

    def follow(self, conversation_id: str, last: int) -> Following:
        """A device's stream, from the message after `last`; its first look reads."""
        following = Following(conversation_id, last)
        self._following.setdefault(conversation_id, set()).add(following)
        return following

    def unfollow(self, following: Following) -> None:
        conversation_id = following.conversation_id
        followers = self._following.get(conversation_id, set())
        followers.discard(following)
        if not followers:
            # Nobody follows it here any more: nothing waits on its signal either.
            self._following.pop(conversation_id, None)
            self._signals.pop(conversation_id, None)

    def announce(self, conversation_id: str, line: str) -> None:
        """An activity line for the conversation's streams: passed on, never stored; a slow
        stream keeps only the newest."""
        for following in self._following.get(conversation_id, ()):
            following.lines.append(line)
        self._wake(conversation_id)

    def wake_all(self) -> None:
        """Every stream reads the transcript again."""
        for followers in self._following.values():
            for following in followers:
                following.must_read = True
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

    def _wake(self, conversation_id: str) -> None:
        event = self._signals.pop(conversation_id, None)
        if event is not None:
            event.set()

    async def wait(self, following: Following, event: asyncio.Event) -> None:
        """Until `event` is set, or the safety-net poll comes due (the stream then reads)."""
        try:
            await asyncio.wait_for(event.wait(), self.next_poll_s())
        except TimeoutError:
            following.must_read = True

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
            return
        conversation_id, seq = notified_seq(payload)
        for following in self._following.get(conversation_id, ()):
            following.stored_elsewhere(seq)
        self._wake(conversation_id)

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
