"""Wakes the streams that follow a conversation when its transcript grows.

Appends on this replica wake them directly; appends on other replicas arrive through
PostgreSQL LISTEN/NOTIFY; a short poll covers everything else (SQLite shared by processes,
a lost notification), so no message depends on a notification arriving.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

import psycopg
from sqlalchemy.engine import URL

from session.transcript import NOTIFY_CHANNEL

log = logging.getLogger(__name__)


class Feed:
    def __init__(self, poll_s: float) -> None:
        self.poll_s = poll_s
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
        queue: asyncio.Queue[str] = asyncio.Queue()
        self._activity.setdefault(conversation_id, set()).add(queue)
        return queue

    def unsubscribe(self, conversation_id: str, queue: asyncio.Queue[str]) -> None:
        followers = self._activity.get(conversation_id, set())
        followers.discard(queue)
        if not followers:
            self._activity.pop(conversation_id, None)

    def announce(self, conversation_id: str, line: str) -> None:
        for queue in self._activity.get(conversation_id, ()):
            queue.put_nowait(line)
        self.publish(conversation_id)

    def close(self) -> None:
        """Ends every follower's wait: the replica is going away and devices move elsewhere."""
        self.closed = True
        for event in self._signals.values():
            event.set()
        self._signals.clear()

    async def wait(self, event: asyncio.Event) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), self.poll_s)

    def _received(self, payload: str) -> None:
        if payload.startswith("{"):
            activity = json.loads(payload)
            self.announce(activity["conversation"], activity["activity"])
        else:
            self.publish(payload)

    async def listen_postgres(self, url: URL) -> None:
        """Runs until cancelled, turning NOTIFYs into wake-ups; reconnects after failures."""
        conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    async for notification in conn.notifies():
                        self._received(notification.payload)
            except psycopg.Error as error:
                log.warning(
                    "transcript notifications lost; polling until back", extra={"error": str(error)}
                )
                await asyncio.sleep(self.poll_s)
