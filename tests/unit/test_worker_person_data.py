"""Erasing a person in the worker, on a real store (SQLite and PostgreSQL, through the service's
own role): writers of theirs on any replica write nothing afterwards, new work of theirs is
refused while the erase runs, and their running work here stops. And the checklist of tables."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import Column, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.support.postgres import fresh_schema
from tests.support.waiting import eventually
from violet import database
from violet.identity import acting_for
from violet.models import ToolCall
from violet.models import tools as t
from worker.__main__ import migrate
from worker.folders import Folders
from worker.person_data import TABLES
from worker.runner import WorkRunner
from worker.settings import WorkerSettings
from worker.store import WorkStore
from worker.store.erasures import BeingErased, refuse_while_erasing
from worker.store.outbox import Send
from worker.store.requests import Request
from worker.store.work_sessions import WorkSession, WorkSessionGone
from worker.tables import metadata, outbox, work_requests, work_sessions
from worker.toolbox import Asker, Toolbox

ANN, BOB = "ann", "bob"
SECTIONS = {"work", "approvals"}  # the worker's sections that come from its tables


def test_every_table_is_either_exported_or_said_to_be_internal() -> None:
    assert set(TABLES) == set(metadata.tables)
    for table, fate in TABLES.items():
        assert fate in SECTIONS or fate.startswith("internal: "), table


@pytest.fixture(params=["sqlite", "postgres"])
async def db(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    with contextlib.ExitStack() as cleanup:
        url = cleanup.enter_context(fresh_schema()) if request.param == "postgres" else ""
        settings = WorkerSettings(home=tmp_path, database_url=url)
        migrate(settings)
        engine = database.service_engine(settings, "worker")
        yield database.sessionmaker(engine)
        await engine.dispose()


@pytest.fixture
def store(db: async_sessionmaker[AsyncSession]) -> WorkStore:
    return WorkStore(db)


async def new_work(store: WorkStore, person: str, text: str = "calculate 1+1") -> WorkSession:
    """A work session of the person's with one request, loaded as a replica running it would."""
    with acting_for(person):
        topic = await store.requests.start(person, "", text, title=text)
        return await store.work_sessions.load(topic, "other-replica")


async def erase(store: WorkStore, person: str) -> int:
    with acting_for(person):
        await store.erasures.begin(person)
        removed = await store.erasures.remove_rows(person)
        await store.erasures.end(person)
    return removed


async def count(db: async_sessionmaker[AsyncSession], person: str, column: Column[str]) -> int:
    """The person's rows in the column's table."""
    with acting_for(person):
        async with db() as read:
            return int(await read.scalar(select(func.count()).where(column == person)) or 0)


def a_request(work_session: WorkSession) -> Request:
    return Request(1, work_session.id, work_session.person, "x", "running", 0)


async def test_a_step_of_erased_work_on_another_replica_writes_nothing(
    store: WorkStore, db: async_sessionmaker[AsyncSession]
) -> None:
    running = await new_work(store, ANN)
    kept = await new_work(store, BOB)
    assert await erase(store, ANN) > 0

    with acting_for(ANN):
        request = await store.requests.current(running.id)
        assert request is None  # its request went with it
        with pytest.raises(WorkSessionGone):
            await store.steps.begin(running, a_request(running), {"role": "user", "content": "x"})
        with pytest.raises(WorkSessionGone):
            await store.steps.finish(running, a_request(running), "done", [], {}, [])
    # The finish would have written a card and a result to the outbox: none is there.
    assert await count(db, ANN, outbox.c.person) == 0
    assert await count(db, ANN, work_sessions.c.person) == 0
    with acting_for(BOB):
        assert await store.requests.current(kept.id) is not None


async def test_an_erase_waits_for_a_step_under_way_and_removes_what_it_wrote(
    store: WorkStore, db: async_sessionmaker[AsyncSession]
) -> None:
    running = await new_work(store, ANN)
    with acting_for(ANN):
        async with db() as tx, tx.begin():
            await store.work_sessions.bump(tx, running)
            erasing = asyncio.create_task(erase(store, ANN))
            await asyncio.sleep(0.3)
            assert not erasing.done()  # the step holds its work session's row
            await store.outbox.enqueue(tx, running, Send("result", "result:1", {"text": "x"}))
        await erasing
    assert await count(db, ANN, outbox.c.person) == 0
    assert await count(db, ANN, work_requests.c.person) == 0


async def test_new_work_is_refused_while_an_erase_is_under_way(
    store: WorkStore, db: async_sessionmaker[AsyncSession]
) -> None:
    await new_work(store, ANN)
    with acting_for(ANN):
        await store.erasures.begin(ANN)  # and then the erase stopped, as a crash would
        with pytest.raises(BeingErased):
            await store.requests.start(ANN, "", "calculate 2+2", title="sum")
        with pytest.raises(BeingErased):
            await store.approvals.answer(ANN, "ap_anything", approved=True)
    await new_work(store, BOB)  # someone else's is taken meanwhile

    assert await erase(store, ANN) > 0  # the next erase finishes it
    await new_work(store, ANN)
    assert await count(db, ANN, work_sessions.c.person) == 1


async def test_a_request_checked_before_the_erase_began_is_erased_with_the_rest(
    store: WorkStore, db: async_sessionmaker[AsyncSession]
) -> None:
    with acting_for(ANN):
        async with db() as tx, tx.begin():
            await refuse_while_erasing(tx, ANN)
            erasing = asyncio.create_task(erase(store, ANN))
            await asyncio.sleep(0.3)
            assert not erasing.done()  # the erase's mark waits for the request's transaction
            topic = await store.work_sessions.open(tx, ANN, "", "late", store.clock())
            await tx.execute(
                work_requests.insert().values(
                    session_id=topic,
                    person=ANN,
                    text="late",
                    status="pending",
                    steps=0,
                    created_at=store.clock(),
                )
            )
        assert await erasing == 2
    assert await count(db, ANN, work_sessions.c.person) == 0


async def test_a_document_write_of_erased_work_makes_no_folder(
    store: WorkStore, tmp_path: Path
) -> None:
    folders = Folders(tmp_path / "workspaces")
    toolbox = Toolbox(
        web=None,
        folders=folders,
        sandbox=None,
        limits=None,
        mailer=None,
        store=store,
        other_work=None,
    )  # type: ignore[arg-type]
    running = await new_work(store, ANN)
    asker = Asker(running.id, ANN, ["write a note"])
    write = ToolCall("toolu_1", t.WRITE_DOCUMENT, {"name": "note-a.md", "content": "milk"})
    with acting_for(ANN):
        assert not (await toolbox.run(write, asker)).is_error  # type: ignore[union-attr]
    await erase(store, ANN)
    assert folders.remove(ANN) == 1

    with acting_for(ANN), pytest.raises(WorkSessionGone):
        await toolbox.run(write, asker)
    reads = (ToolCall("toolu_2", t.LIST_DOCUMENTS, {}), ToolCall("toolu_3", t.READ_DOCUMENT, {}))
    for reading in reads:
        with acting_for(ANN):
            await toolbox.run(reading, asker)
    assert list((tmp_path / "workspaces").iterdir()) == []


class Stuck:
    """A work step that runs until it is cancelled."""

    def __init__(self) -> None:
        self.started: set[str] = set()

    async def advance(self, work_session: WorkSession) -> bool:
        self.started.add(work_session.id)
        await asyncio.Event().wait()
        return False


class Idle:
    """A work session with nothing to do: loaded, and kept so until it is idle long enough."""

    async def advance(self, work_session: WorkSession) -> bool:
        return False


async def test_stopping_a_persons_work_cancels_it_here_and_keeps_nothing_of_theirs(
    store: WorkStore, db: async_sessionmaker[AsyncSession]
) -> None:
    agent = Stuck()
    runner = WorkRunner(
        store=store,
        agent=agent,  # type: ignore[arg-type]
        replica="here",
        per_person=2,
        overall=4,
        idle_s=300.0,
        lease_s=30.0,
    )
    theirs, other = await new_work(store, ANN), await new_work(store, BOB)
    runner.wake(theirs.id, ANN)
    runner.wake(other.id, BOB)
    await eventually(lambda: agent.started == {theirs.id, other.id}, "both running")

    async with runner.stopped_for(ANN):
        assert theirs.id not in runner._tasks and other.id in runner._tasks
        runner.wake(theirs.id, ANN)  # as the sweep would
        assert theirs.id not in runner._tasks
        with acting_for(ANN):
            async with db() as read:
                lease = await read.scalar(
                    select(work_sessions.c.lease_holder).where(work_sessions.c.id == theirs.id)
                )
        assert lease is None  # handed back as it ended
    assert all(kept.work_session.person != ANN for kept in runner._loaded.values())
    assert ANN not in runner._per_person
    await runner.stop(0.1)


async def test_a_copy_of_erased_work_loaded_on_another_replica_is_let_go(
    store: WorkStore,
) -> None:
    runner = WorkRunner(
        store=store,
        agent=Idle(),  # type: ignore[arg-type]
        replica="there",
        per_person=2,
        overall=4,
        idle_s=300.0,
        lease_s=30.0,
    )
    theirs, other = await new_work(store, ANN), await new_work(store, BOB)
    for work in (theirs, other):
        runner.wake(work.id, work.person)
    await eventually(lambda: not runner._tasks, "both steps taken, both copies kept loaded")
    await erase(store, ANN)
    await runner.unload_idle()
    assert set(runner._loaded) == {other.id}
    await runner.stop(0.1)


@pytest.fixture
def folders(tmp_path: Path) -> Folders:
    return Folders(tmp_path / "workspaces")


def test_removing_a_folder_counts_its_files_and_leaves_others(folders: Folders) -> None:
    documents = folders.documents(ANN)
    documents.write("note-a.md", "a")
    documents.write("note-b.md", "b")
    documents.delete("note-b.md")
    folders.documents(BOB).write("note-c.md", "c")
    assert folders.remove(ANN) == 2
    assert not folders.of(ANN, create=False).root.exists()
    assert folders.documents(BOB, create=False).names() == ["note-c.md"]
    assert folders.remove(ANN) == 0
