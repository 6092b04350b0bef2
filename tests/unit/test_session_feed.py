"""The feed that wakes a conversation's streams: wake-ups first, a slow safety-net poll while
notifications work, a fast one while they are out (the LISTEN connection on a real PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest
from sqlalchemy.engine import make_url

from session.feed import ACTIVITY_BACKLOG, IDLE_POLL_JITTER, Feed, listener_conninfo
from session.transcript import NOTIFY_CHANNEL, Message, notified_seq
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
    feed.follow("c_a", 0), feed.follow("c_b", 0)
    a, b = feed.signal("c_a"), feed.signal("c_b")
    feed.publish("c_a")
    assert a.is_set() and not b.is_set()


def said(seq: int) -> Message:
    return Message(seq, "you", f"message {seq}", datetime(2026, 12, 4, tzinfo=UTC))


async def test_messages_stored_here_are_handed_over_in_order_and_need_no_read() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    phone, laptop = feed.follow("c_a", 4), feed.follow("c_a", 4)
    assert phone.news() is None  # the first look reads
    laptop.must_read = False
    feed.publish("c_a", said(6))
    feed.publish("c_a", said(5))
    assert phone.news() == [said(5), said(6)]
    assert laptop.news() == [said(5), said(6)]
    assert phone.news() == []  # taken


async def test_a_gap_in_the_numbers_or_a_wake_without_a_message_makes_the_stream_read() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    stream = feed.follow("c_a", 4)
    stream.must_read = False
    feed.publish("c_a", said(6))  # 5 was stored elsewhere
    assert stream.news() is None
    stream.last = 6
    feed.publish("c_a", said(7))
    feed.publish("c_a")  # a change with no message (a removal): read what changed
    assert stream.news() is None
    stream.last = 7
    feed.publish("c_a", said(7))  # already read
    assert stream.news() == []


async def test_a_notification_reads_unless_it_names_a_message_the_stream_has() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    stream = feed.follow("c_a", 4)
    stream.must_read = False
    feed.publish("c_a", said(5))
    feed._received("c_a 5")  # this replica's own append, coming back through LISTEN
    feed._received("c_a 4")
    assert stream.news() == [said(5)]
    stream.last = 5
    feed._received("c_a 6")  # stored on another replica
    assert stream.news() is None
    feed._received("c_a")  # a notification naming no message
    assert stream.news() is None
    assert notified_seq("c_a 12") == ("c_a", 12)


async def test_the_safety_net_poll_and_lost_notifications_make_every_stream_read() -> None:
    feed = Feed(POLL_S, POLL_S, notified=True)
    stream = feed.follow("c_a", 0)
    stream.must_read = False
    await feed.wait(stream, feed.signal("c_a"))  # nothing wakes it: the poll comes due
    assert stream.news() is None
    assert stream.news() == []
    feed.wake_all()
    assert stream.news() is None


async def test_a_slow_follower_keeps_only_the_newest_activity_lines() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    stream = feed.follow("c_a", 0)
    for number in range(ACTIVITY_BACKLOG + 5):
        feed.announce("c_a", f"line {number}")
    assert stream.take_lines() == [f"line {n}" for n in range(5, ACTIVITY_BACKLOG + 5)]
    assert stream.take_lines() == []


async def test_a_conversation_nobody_follows_leaves_nothing_behind() -> None:
    feed = Feed(POLL_S, IDLE_POLL_S)
    phone, laptop = feed.follow("c_a", 0), feed.follow("c_a", 0)
    waiting = feed.signal("c_a")
    feed.unfollow(phone)
    assert feed.signal("c_a") is waiting  # the laptop still waits on it
    feed.unfollow(laptop)
    assert feed.signal("c_a") is not waiting
    feed.unfollow(feed.follow("c_a", 0))
    assert not feed._signals and not feed._following


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
    stream = feed.follow("c_elsewhere", 0)
    stream.must_read = False
    woken = feed.signal("c_elsewhere")
    await notify(url, "c_elsewhere 1")
    await asyncio.wait_for(woken.wait(), 10)
    assert stream.news() is None  # another replica's message: read it


async def test_a_lost_listen_connection_falls_back_to_polling_and_recovers(
    listening: tuple[Feed, Listener, str],
) -> None:
    feed, listener, url = listening
    await eventually(lambda: feed.notified, "the LISTEN connection made")
    feed.follow("c_a", 0)
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
