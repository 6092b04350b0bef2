"""A `Database`'s sessions: SQLAlchemy's plain connections, each call on a worker thread."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, event, func, select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import IntegrityError

from violet import database
from violet.database import Database, Statements

metadata = MetaData()
notes = Table("notes", metadata, Column("id", Integer, primary_key=True), Column("text", String))

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    url = make_url(f"sqlite:///{tmp_path / 'notes.db'}")
    engine = create_engine(url)
    metadata.create_all(engine)
    engine.dispose()
    opened = database.open_database(url, pool_size=2, max_overflow=0)
    yield opened
    await opened.dispose()


async def count(db: Database) -> int:
    async with db() as reading:
        return int(await reading.scalar(select(func.count()).select_from(notes)))


async def test_a_transaction_commits_when_its_block_ends_and_a_read_sees_it(db: Database) -> None:
    async with db.begin() as tx:
        await tx.execute(notes.insert().values(id=1, text="milk"))
        await tx.execute(notes.insert().values(id=2, text="eggs"))
    async with db() as reading:
        rows = (await reading.execute(select(notes).order_by(notes.c.id))).all()
        texts = list(await reading.scalars(select(notes.c.text).order_by(notes.c.id)))
    assert [(row.id, row.text) for row in rows] == [(1, "milk"), (2, "eggs")]
    assert texts == ["milk", "eggs"]


async def test_a_failed_block_and_a_session_without_begin_leave_nothing(db: Database) -> None:
    with pytest.raises(IntegrityError):
        async with db() as tx, tx.begin():
            await tx.execute(notes.insert().values(id=1, text="milk"))
            await tx.execute(notes.insert().values(id=1, text="again"))
    async with db() as no_transaction:
        await no_transaction.execute(notes.insert().values(id=3, text="bread"))
    assert await count(db) == 0


async def test_changes_count_the_rows_they_touched(db: Database) -> None:
    async with db.begin() as tx:
        await tx.execute(notes.insert(), [{"id": n, "text": "x"} for n in range(1, 4)])
    async with db.begin() as tx:
        changed = await tx.execute(notes.update().where(notes.c.id > 1).values(text="y"))
    assert database.rows_changed(changed) == 2


async def test_each_call_runs_with_the_callers_context(db: Database) -> None:
    seen: list[tuple[str, bool]] = []

    def note(connection: object) -> None:
        seen.append((WHO.get(), threading.current_thread() is threading.main_thread()))

    token = WHO.set("ana")
    try:
        await asyncio.wrap_future(db.submit(note, None))
    finally:
        WHO.reset(token)
    assert seen == [("ana", False)]


async def test_more_sessions_than_connections_wait_their_turn(db: Database) -> None:
    # Two connections, eight sessions at once, each holding its connection across an await.
    async def write(n: int) -> None:
        async with db.begin() as tx:
            await tx.execute(select(notes.c.id))
            await asyncio.sleep(0.01)
            await tx.execute(notes.insert().values(id=n, text=str(n)))

    await asyncio.wait_for(asyncio.gather(*(write(n) for n in range(8))), 30)
    assert await count(db) == 8


async def test_a_cancelled_session_gives_its_connection_back_unharmed(db: Database) -> None:
    # The second holder is cancelled while its insert waits, on its thread, for SQLite's write
    # lock, which the first holds.
    started = asyncio.Event()

    async def hold() -> None:
        async with db.begin() as tx:
            await tx.execute(notes.insert().values(id=1, text="half"))
            started.set()
            await asyncio.sleep(60)

    holders = [asyncio.create_task(hold()) for _ in range(2)]
    await started.wait()
    await asyncio.sleep(0.05)
    for holder in holders:
        holder.cancel()
    await asyncio.gather(*holders, return_exceptions=True)
    # Both places are free again, and what the cancelled blocks did was rolled back.
    async with asyncio.timeout(10):
        async with db.begin() as first, db.begin() as second:
            await first.execute(select(notes.c.id))
            await second.execute(select(notes.c.id))
    assert await count(db) == 0


async def test_a_session_that_never_ran_a_statement_takes_no_connection(db: Database) -> None:
    for _ in range(5):
        async with db() as idle, idle.begin():
            pass
    assert await count(db) == 0


def add_notes(connection: Connection, *texts: str) -> int:
    for text in texts:
        connection.execute(notes.insert().values(text=text))
    return int(connection.scalar(select(func.count()).select_from(notes)) or 0)


async def test_work_run_in_one_trip_commits_as_a_whole(db: Database) -> None:
    assert await db.run(add_notes, "milk", "eggs") == 2
    rows = await db.execute(select(notes.c.text).order_by(notes.c.id))
    assert [row.text for row in rows] == ["milk", "eggs"]
    assert await db.scalar(select(func.count()).select_from(notes)) == 2


async def test_work_that_raises_leaves_nothing(db: Database) -> None:
    def add_then_fail(connection: Connection) -> None:
        add_notes(connection, "milk")
        connection.execute(notes.insert().values(id=1, text="again"))

    with pytest.raises(IntegrityError):
        await db.run(add_then_fail)
    assert await count(db) == 0


async def test_more_work_than_connections_waits_its_turn(db: Database) -> None:
    await asyncio.wait_for(asyncio.gather(*(db.run(add_notes, str(n)) for n in range(12))), 30)
    assert await count(db) == 12


async def test_work_whose_caller_is_cancelled_ends_as_a_whole(db: Database) -> None:
    # The first caller's work waits on its thread; its caller is cancelled meanwhile, and the
    # work still commits both of its notes. The second caller's work was queued behind both
    # places and never started: nothing of it is done.
    entered, release = threading.Event(), threading.Event()

    def slow(connection: Connection) -> None:
        add_notes(connection, "one")
        entered.set()
        release.wait(10)
        add_notes(connection, "two")

    def queued(connection: Connection) -> None:
        add_notes(connection, "never")

    started = asyncio.create_task(db.run(slow))
    blocker = asyncio.create_task(db.run(lambda connection: release.wait(10)))
    await asyncio.to_thread(entered.wait, 10)
    waiting = asyncio.create_task(db.run(queued))
    await asyncio.sleep(0.05)
    for task in (started, waiting):
        task.cancel()
    release.set()
    await asyncio.gather(started, blocker, waiting, return_exceptions=True)
    # The test waits until two works can run side by side, which needs both places free.
    both = threading.Barrier(2, timeout=10)
    await asyncio.gather(db.run(lambda _: both.wait()), db.run(lambda _: both.wait()))
    rows = await db.execute(select(notes.c.text).order_by(notes.c.id))
    assert [row.text for row in rows] == ["one", "two"]


async def test_a_cancelled_caller_goes_on_once_its_begun_work_has_ended(db: Database) -> None:
    # The caller's cleanup removes what its work adds. Were the cancellation to reach it while
    # the work still ran, the cleanup would run beside the work, on the other connection, and
    # find nothing yet to remove (a device's presence row left behind, say).
    entered, release = threading.Event(), threading.Event()

    def slow(connection: Connection) -> None:
        entered.set()
        release.wait(10)
        add_notes(connection, "left behind")

    async def caller() -> None:
        try:
            await db.run(slow)
        finally:
            await db.run(lambda connection: connection.execute(notes.delete()))

    task = asyncio.create_task(caller())
    await asyncio.to_thread(entered.wait, 10)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert await count(db) == 0


async def add_through(statements: Statements, *texts: str) -> int:
    """Work written against a session's statements."""
    for text in texts:
        await statements.execute(notes.insert().values(text=text))
    return int(await statements.scalar(select(func.count()).select_from(notes)))


async def test_session_work_run_through_in_one_trip_commits_as_a_whole(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips: list[object] = []
    to_thread = db.submit

    def counted(call: Callable[..., object], *args: object) -> Future[object]:
        trips.append(call)
        return to_thread(call, *args)

    monkeypatch.setattr(db, "submit", counted)
    assert await db.run_through(add_through, "milk", "eggs") == 2
    assert len(trips) == 1
    # The same work through a session: a trip for each statement, to commit and to close.
    async with db.begin() as session:
        assert await add_through(session, "bread") == 3
    assert len(trips) == 1 + 2 + 2
    assert await count(db) == 3


async def test_session_work_that_raises_or_awaits_anything_else_leaves_nothing(
    db: Database,
) -> None:
    async def add_then_fail(statements: Statements) -> None:
        await add_through(statements, "milk")
        await statements.execute(notes.insert().values(id=1, text="again"))

    async def add_then_wait(statements: Statements) -> None:
        await add_through(statements, "milk")
        await asyncio.sleep(0)

    with pytest.raises(IntegrityError):
        await db.run_through(add_then_fail)
    with pytest.raises(RuntimeError, match="awaited something other than its statements"):
        await db.run_through(add_then_wait)
    assert await count(db) == 0


async def test_execution_options_are_set_before_the_transaction_begins(db: Database) -> None:
    seen: list[object] = []

    def began(connection: Connection) -> None:
        seen.append(connection.get_execution_options().get("marked"))

    event.listen(db.engine, "begin", began)
    await db.run_through(add_through, "milk", options={"marked": "through"})
    await db.run(add_notes, "eggs")
    event.remove(db.engine, "begin", began)
    assert seen == ["through", None]
