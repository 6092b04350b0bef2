"""A lease gives a row to one holder at a time: others wait until it is released or expires,
and the time it expires by is the clock's, so a test can move it on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from session.conversations import Conversations
from session.turn_lock import turn_lock
from violet import database
from violet.clock import as_utc
from violet.database import Database

LEASE_S = 30.0


class SetClock:
    def __init__(self) -> None:
        self.moment = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    url = make_url(f"sqlite:///{tmp_path / 'session.db'}")
    database.migrate(url, "session.migrations", "alembic_version_session")
    db = database.open_database(url)
    yield db
    await db.dispose()


async def test_a_held_lease_waits_for_its_expiry_or_its_release(
    db: Database,
) -> None:
    clock = SetClock()
    conversation = await Conversations(db, clock).conversation_of("ana")
    first, second = turn_lock(db, "a", LEASE_S, clock), turn_lock(db, "b", LEASE_S, clock)
    assert await first.try_acquire(conversation.id)
    assert await first.try_acquire(conversation.id)  # the holder renews its own lease
    assert not await second.try_acquire(conversation.id)
    clock.advance(LEASE_S - 1)
    assert not await second.try_acquire(conversation.id)
    clock.advance(2)
    assert await second.try_acquire(conversation.id)  # the first holder's lease ran out
    await second.release(conversation.id)
    assert await first.try_acquire(conversation.id)


async def test_holding_says_whether_the_lease_was_taken_and_gives_it_back(
    db: Database,
) -> None:
    clock = SetClock()
    conversation = await Conversations(db, clock).conversation_of("ana")
    first, second = turn_lock(db, "a", LEASE_S, clock), turn_lock(db, "b", LEASE_S, clock)
    async with first.holding(conversation.id) as held:
        assert held
        async with second.holding(conversation.id) as also_held:
            assert not also_held
    assert await second.try_acquire(conversation.id)


async def test_a_lease_given_back_by_the_holders_own_work_is_not_taken_again_by_renewal(
    db: Database,
) -> None:
    clock = SetClock()  # stands still: no lease expires here
    conversation = await Conversations(db, clock).conversation_of("ana")
    renewed_often = turn_lock(db, "a", 0.03, clock)  # renewed every 10 ms
    async with renewed_often.held(conversation.id) as holding:
        await db.run(renewed_often.release_on, conversation.id)
        holding.given_back = True
        await asyncio.sleep(0.1)  # renewals come and go meanwhile
        assert await turn_lock(db, "b", LEASE_S, clock).try_acquire(conversation.id)
    # Nor does the block's end give back what another holder has taken since.
    assert not await turn_lock(db, "c", LEASE_S, clock).try_acquire(conversation.id)


async def test_renewal_extends_a_lease_still_held(db: Database) -> None:
    clock = SetClock()
    conversation = await Conversations(db, clock).conversation_of("ana")
    renewed_often = turn_lock(db, "a", 0.03, clock)
    async with renewed_often.held(conversation.id):
        assert await renewed_often.try_acquire(conversation.id)
        clock.advance(0.02)
        await asyncio.sleep(0.1)  # renewed after the clock moved on: expires 30 ms from now
        clock.advance(0.02)
        assert not await turn_lock(db, "b", LEASE_S, clock).try_acquire(conversation.id)


def test_a_moment_without_a_zone_is_read_as_utc() -> None:
    naive = datetime(2026, 5, 1, 9, 0)
    assert as_utc(naive) == datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    assert as_utc(None) is None
