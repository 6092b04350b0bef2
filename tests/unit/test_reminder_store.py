"""The person's reminders as the session keeps them: set, listed and cancelled within their own
conversation, at most `MOST_OPEN` open, and each occurrence fired once, whichever replica gets
there first, late ones once and moved on past now. On SQLite and on PostgreSQL as the service's
role under row-level security, where replicas racing matters most."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy import text as text_clause

from session import erasure
from session.conversations import Conversations
from session.reminders import store
from session.reminders.store import MOST_OPEN, Due, Reminder, Reminders, TooMany
from session.reminders.times import TimeRefused, schedule
from session.tables import reminders, updates
from tests.support.session_db import session_settings
from violet import database
from violet.database import Database
from violet.identity import acting_for
from violet.settings import CommonSettings

NOW = datetime(2026, 12, 6, 14, 0, tzinfo=UTC)
AT_14_30 = datetime(2026, 12, 6, 14, 30, tzinfo=UTC)
ZONE = "Europe/Lisbon"  # UTC+0 in December: wall times read as UTC here
ANA, BOB = "ana", "bob"


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Place:
    settings: CommonSettings
    db: Database
    clock: Clock
    reminders: Reminders
    conversation: str  # ana's


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Place]:
    with session_settings(request.param, tmp_path) as settings:
        db = database.service_database(settings, "session")
        clock = Clock()
        try:
            with acting_for(ANA):
                conversation = await Conversations(db).conversation_of(ANA)
                yield Place(settings, db, clock, Reminders(db, clock), conversation.id)
        finally:
            await db.dispose()


async def add(
    place: Place, at: str, repeat: str = "", text: str = "call Sam", work: bool = False
) -> Reminder:
    return await place.reminders.add(place.conversation, text, work, schedule(at, ZONE, repeat))


def due_now(place: Place, reminder: Reminder) -> Due:
    return Due(reminder.id, place.conversation, ANA)


async def told(place: Place) -> list[tuple[str, str, datetime | None]]:
    rows = await place.db.execute(select(updates.c.kind, updates.c.text, updates.c.due_at))
    return [(row.kind, row.text, row.due_at) for row in rows]


async def next_at(place: Place, reminder: Reminder) -> datetime | None:
    return await place.db.scalar(select(reminders.c.next_at).where(reminders.c.id == reminder.id))


async def stored(place: Place) -> int:
    return int(await place.db.scalar(select(func.count()).select_from(reminders)))


async def due_ids(place: Place) -> list[str]:
    # The firing loop asks across people, acting for nobody.
    with acting_for(""):
        return [found.id for found in await place.reminders.due(10)]


@contextlib.contextmanager
def in_lockstep() -> Iterator[list[int]]:
    """Two firings each read the reminder before either moves it on, so both reach the
    compare-and-set (left alone, the second often reads after the first committed). Yields the
    rows each compare-and-set changed."""
    barrier, read, changed = threading.Barrier(2, timeout=10), store._reminder, store.rows_changed
    moved: list[int] = []

    def in_step(row: object) -> Reminder:
        barrier.wait()
        return read(row)

    def counted(result):  # type: ignore[no-untyped-def]
        moved.append(changed(result))
        return moved[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_reminder", in_step)
        patch.setattr(store, "rows_changed", counted)
        yield moved


async def test_open_lists_the_conversations_reminders_soonest_first(place: Place) -> None:
    later = await add(place, "2026-12-08T09:00", text="book the vet")
    sooner = await add(place, "2026-12-07T09:00", "FREQ=DAILY")
    listed = await place.reminders.open(place.conversation)
    assert [(r.id, r.text, r.next_at) for r in listed] == [
        (sooner.id, "call Sam", datetime(2026, 12, 7, 9, tzinfo=UTC)),
        (later.id, "book the vet", datetime(2026, 12, 8, 9, tzinfo=UTC)),
    ]
    assert listed[0].schedule == sooner.schedule


async def test_a_cancelled_reminder_is_no_longer_open_and_cannot_be_cancelled_again(
    place: Place,
) -> None:
    kept, cancelled = await add(place, "2026-12-07T09:00"), await add(place, "2026-12-08T09:00")
    found = await place.reminders.cancel(place.conversation, cancelled.id)
    assert found is not None and found.id == cancelled.id
    assert [r.id for r in await place.reminders.open(place.conversation)] == [kept.id]
    assert await place.reminders.cancel(place.conversation, cancelled.id) is None


async def test_another_conversations_reminder_is_not_found_to_cancel(place: Place) -> None:
    anas = await add(place, "2026-12-07T09:00")
    with acting_for(BOB):
        bobs = (await Conversations(place.db).conversation_of(BOB)).id
        assert await place.reminders.cancel(bobs, anas.id) is None
    assert [r.id for r in await place.reminders.open(place.conversation)] == [anas.id]


async def test_the_101st_open_reminder_is_refused_with_nothing_stored(place: Place) -> None:
    for _ in range(MOST_OPEN):
        await add(place, "2026-12-07T09:00")
    with pytest.raises(TooMany):
        await add(place, "2026-12-07T10:00")
    assert await stored(place) == MOST_OPEN


async def test_a_past_time_is_refused_with_nothing_stored(place: Place) -> None:
    with pytest.raises(TimeRefused):
        await add(place, "2026-12-06T13:00")
    assert await stored(place) == 0


async def test_a_due_one_off_fires_once_and_closes(place: Place) -> None:
    reminder = await add(place, "2026-12-06T14:30")
    assert await due_ids(place) == []
    place.clock.now = NOW + timedelta(minutes=30)
    assert await due_ids(place) == [reminder.id]
    fired = await place.reminders.fire(due_now(place, reminder))
    assert fired.told and fired.work is None
    assert await told(place) == [
        ("reminder", "call Sam", datetime(2026, 12, 6, 14, 30, tzinfo=UTC))
    ]
    assert await place.reminders.open(place.conversation) == []
    assert not (await place.reminders.fire(due_now(place, reminder))).told
    assert len(await told(place)) == 1
    assert await due_ids(place) == []


async def test_a_recurring_reminder_moves_to_its_next_occurrence(place: Place) -> None:
    reminder = await add(place, "2026-12-06T21:00", "FREQ=DAILY")
    place.clock.now = datetime(2026, 12, 6, 21, 0, 5, tzinfo=UTC)
    assert (await place.reminders.fire(due_now(place, reminder))).told
    assert await next_at(place, reminder) == datetime(2026, 12, 7, 21, tzinfo=UTC)
    assert await due_ids(place) == []


async def test_two_firings_of_one_occurrence_at_once_tell_it_once(place: Place) -> None:
    racing = [await add(place, "2026-12-06T14:30", "FREQ=DAILY") for _ in range(5)]
    place.clock.now = NOW + timedelta(minutes=30)
    for reminder in racing:
        with in_lockstep() as moved:
            fired = await asyncio.gather(
                *(place.reminders.fire(due_now(place, reminder)) for _ in "ab")
            )
        assert sorted(f.told for f in fired) == [False, True]
        assert sorted(moved) == [0, 1]
    assert len(await told(place)) == len(racing)


async def test_two_replicas_firing_one_occurrence_at_once_tell_it_once(place: Place) -> None:
    racing = [await add(place, "2026-12-06T14:30") for _ in range(5)]
    place.clock.now = NOW + timedelta(minutes=30)
    other = database.service_database(place.settings, "session")
    try:
        replicas = [place.reminders, Reminders(other, place.clock)]
        for reminder in racing:
            with in_lockstep() as moved:
                due = due_now(place, reminder)
                fired = await asyncio.gather(*(replica.fire(due) for replica in replicas))
            assert sorted(f.told for f in fired) == [False, True]
            assert sorted(moved) == [0, 1]
    finally:
        await other.dispose()
    assert len(await told(place)) == len(racing)
    assert await place.reminders.open(place.conversation) == []


async def test_a_reminder_fired_late_fires_once_and_moves_on_past_now(place: Place) -> None:
    reminder = await add(place, "2026-12-06T21:00", "FREQ=DAILY")
    # The stack was down for three days and a half: three occurrences missed.
    place.clock.now = datetime(2026, 12, 10, 8, tzinfo=UTC)
    assert await due_ids(place) == [reminder.id]
    assert (await place.reminders.fire(due_now(place, reminder))).told
    assert await told(place) == [("reminder", "call Sam", datetime(2026, 12, 6, 21, tzinfo=UTC))]
    assert await next_at(place, reminder) == datetime(2026, 12, 10, 21, tzinfo=UTC)
    assert await due_ids(place) == []


async def test_scheduled_work_is_owed_until_it_is_started(place: Place) -> None:
    reminder = await add(place, "2026-12-06T14:30", "FREQ=DAILY", "look up the tides", work=True)
    place.clock.now = NOW + timedelta(minutes=30)
    occurrence = AT_14_30
    fired = await place.reminders.fire(due_now(place, reminder))
    assert not fired.told and fired.work is not None
    assert (fired.work[0].id, fired.work[1]) == (reminder.id, occurrence)
    assert await told(place) == []  # work tells its own result, later
    # Not started yet (the worker away): the next look finds it owed, the same occurrence.
    assert await due_ids(place) == [reminder.id]
    again = await place.reminders.fire(due_now(place, reminder))
    assert again.work is not None and again.work[1] == occurrence
    assert await next_at(place, reminder) == occurrence + timedelta(days=1)
    async with place.db() as tx, tx.begin():
        await place.reminders.work_started_on(tx, reminder.id, occurrence)
    assert await due_ids(place) == []
    assert (await place.reminders.fire(due_now(place, reminder))).work is None


@pytest.mark.postgres
@pytest.mark.parametrize("place", ["postgres"], indirect=True)
async def test_a_person_erased_while_their_reminder_fires_leaves_nothing_behind(
    place: Place,
) -> None:
    """The firing holds the reminder's row while it writes what is owed; an erase that comes
    meanwhile waits for it, and then removes what it wrote too."""
    reminder = await add(place, "2026-12-06T14:30", "FREQ=DAILY")
    place.clock.now = NOW + timedelta(minutes=30)
    holding, go = threading.Event(), threading.Event()
    stamped = store.carrier

    def held_a_moment() -> dict[str, str]:  # between moving the reminder on and the update
        holding.set()
        go.wait(10)
        return stamped()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "carrier", held_a_moment)
        firing = asyncio.create_task(place.reminders.fire(due_now(place, reminder)))
        await asyncio.to_thread(holding.wait, 10)
        erasing = asyncio.create_task(erase_ana(place))
        await until_a_statement_waits_for_a_lock(place)
        go.set()
        assert (await firing).told
        await erasing
    with acting_for(ANA):
        assert await told(place) == []
        assert await stored(place) == 0


async def erase_ana(place: Place) -> None:
    with acting_for(ANA):
        async with place.db() as tx, tx.begin():
            await erasure._erase_own(tx, ANA, place.conversation)


async def until_a_statement_waits_for_a_lock(place: Place) -> None:
    waiting = text_clause(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND datname = current_database()"
    )
    for _ in range(500):
        if await place.db.scalar(waiting):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the erase never waited for the firing")
