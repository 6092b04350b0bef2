"""The feed that wakes a conversation's streams: wake-ups first, a slow safety-net poll while
notifications work, a fast one while they are out (the LISTEN connection on a real PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import psycopg
import pytest
from sqlalchemy.engine import make_url

from session.feed import ACTIVITY_BACKLOG, IDLE_POLL_JITTER, Feed, listener_conninfo
from session.transcript import NOTIFY_CHANNEL
from tests.support.postgres import require_postgres
from tests.support.waiting import eventually

POLL_S = 0.05
IDLE_POLL_S = 3600.0


def test_followers_read_on_the_slow_jittered_poll_while_notified_and_the_fast_one_while_not() -> (
    None
):
    feed = Feed(POLL_S, IDLE_POLL_S, notified=True)
    waits = {feed.next_poll_s() for _ in range(50)}
    assert all(
        IDLE_POLL_S * (1 - IDLE_POLL_JITTER) <= s <= IDLE_POLL_S * (1 + IDLE_POLL_JITTER)
        for s in waits
    )
    assert len(waits) > 1  # spread, so streams do not all read at once

    assert Feed(POLL_S, IDLE_POLL_S, notified=False).next_poll_s() == POLL_S


async def test_a_publish_wakes_every_follower_of_the_conversation_only() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    feed.subscribe("c_a"), feed.subscribe("c_b")
    a, b = feed.signal("c_a"), feed.signal("c_b")
    feed.publish("c_a")
    assert a.is_set() and not b.is_set()


async def test_a_slow_follower_keeps_only_the_newest_activity_lines() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    queue = feed.subscribe("c_a")
    for number in range(ACTIVITY_BACKLOG + 5):
        feed.announce("c_a", f"line {number}")
    lines = [queue.get_nowait() for _ in range(queue.qsize())]
    assert lines == [f"line {n}" for n in range(5, ACTIVITY_BACKLOG + 5)]


async def test_a_conversation_nobody_follows_leaves_nothing_behind() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    phone, laptop = feed.subscribe("c_a"), feed.subscribe("c_a")
    waiting = feed.signal("c_a")
    feed.unsubscribe("c_a", phone)
    assert feed.signal("c_a") is waiting  # the laptop still waits on it
    feed.unsubscribe("c_a", laptop)
    assert feed.signal("c_a") is not waiting
    feed.unsubscribe("c_a", feed.subscribe("c_a"))
    assert not feed._signals and not feed._activity


class Listener:
    """Connects the feed's LISTEN to the real server while `open` is set, and refuses to
    otherwise; remembers the live connection's backend, so a test can cut it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.backends: list[int] = []

    async def connect(self, conninfo: str) -> psycopg.AsyncConnection[tuple[object, ...]]:
        if not self.open.is_set():
            raise psycopg.OperationalError("connection refused (the test keeps it shut)")
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True)
        self.backends.append(conn.info.backend_pid)
        return conn


@pytest.fixture
async def listening() -> AsyncIterator[tuple[Feed, Listener, str]]:
    url = require_postgres()
    feed = Feed(POLL_S, IDLE_POLL_S, notified=False)
    listener = Listener()
    conninfo = listener_conninfo(make_url(url), "feed-test")
    task = asyncio.create_task(feed.listen_postgres(conninfo, listener.connect))
    try:
        yield feed, listener, url
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def notify(url: str, payload: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, payload))


async def test_an_append_on_another_replica_wakes_the_stream_through_listen(
    listening: tuple[Feed, Listener, str],
) -> None:
    feed, _, url = listening
    await eventually(lambda: feed.notified, "the LISTEN connection made")
    feed.subscribe("c_elsewhere")
    woken = feed.signal("c_elsewhere")
    await notify(url, "c_elsewhere")
    await asyncio.wait_for(woken.wait(), 10)


async def test_a_lost_listen_connection_falls_back_to_polling_and_recovers(
    listening: tuple[Feed, Listener, str],
) -> None:
    feed, listener, url = listening
    await eventually(lambda: feed.notified, "the LISTEN connection made")
    feed.subscribe("c_a")
    before_loss = feed.signal("c_a")

    listener.open.clear()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as admin:
        await admin.execute("SELECT pg_terminate_backend(%s)", (listener.backends[-1],))

    # Followers are woken to read, and poll fast while the notifications are out.
    await asyncio.wait_for(before_loss.wait(), 10)
    assert not feed.notified and feed.next_poll_s() == POLL_S
    while_lost = feed.signal("c_a")

    listener.open.set()
    await eventually(lambda: feed.notified, "the LISTEN connection made again")
    # Woken again: what was appended while nobody listened is read now.
    assert while_lost.is_set()
    assert feed.next_poll_s() >= IDLE_POLL_S * (1 - IDLE_POLL_JITTER)
    after = feed.signal("c_a")
    await notify(url, "c_a")
    await asyncio.wait_for(after.wait(), 10)
