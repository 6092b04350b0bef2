"""Erasing a person in the worker, on a real store (SQLite and PostgreSQL, through the service's
own role): writers of theirs on any replica write nothing afterwards, new work of theirs is
refused while the erase runs, and their running work here stops. Trimming their finished work
past the retention horizon, leaving conversations that still run. And the checklist of
tables."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Column, Row, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.support.postgres import fresh_schema
from tests.support.waiting import eventually
from violet import database
from violet.identity import acting_for
from violet.models import ContentBlock, ModelMessage, ToolCall
from violet.models import tools as t
from violet.person_data import Horizon
from worker.__main__ import migrate
from worker.folders import Folders
from worker.person_data import TABLES, WorkData
from worker.runner import WorkRunner
from worker.settings import WorkerSettings
from worker.store import WorkStore
from worker.store.approvals import Approval
from worker.store.erasures import BeingErased, refuse_while_erasing
from worker.store.outbox import Send
from worker.store.requests import Request
from worker.store.work_sessions import StaleWorkSession, WorkSession, WorkSessionGone
from worker.tables import (
    approvals,
    metadata,
    outbox,
    work_messages,
    work_requests,
    work_sessions,
)
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


# The trim of finished work past the operator's retention horizon.

T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)
HORIZON = T0 + timedelta(hours=2)


@dataclass
class Moving:
    """The clock the store reads, moved by the test."""

    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Moving:
    return Moving()


@pytest.fixture
def timed(db: async_sessionmaker[AsyncSession], clock: Moving) -> WorkStore:
    return WorkStore(db, clock)


def tool_call(request: Request, name: str) -> ContentBlock:
    return {"type": "tool_use", "id": f"toolu_{request.id}", "name": name, "input": {}}


async def begun(
    store: WorkStore, person: str, text: str, topic: str = "", tool: str = t.RUN_PYTHON
) -> tuple[WorkSession, Request]:
    """A request of the person's in the work session for `topic` (new when empty), begun, with
    the model's tool call stored, as the agent's steps store them."""
    with acting_for(person):
        topic = await store.requests.start(person, topic, text, title=text)
        work = await store.work_sessions.load(topic, "here")
        request = await store.requests.current(topic)
        assert request is not None
        await store.steps.begin(work, request, {"role": "user", "content": text})
        await store.steps.record_reply(work, request, [tool_call(request, tool)])
        return work, request


async def finished(store: WorkStore, work: WorkSession, request: Request) -> None:
    """The request's tool result and closing words stored, and the request done."""
    call_id = f"toolu_{request.id}"
    with acting_for(work.person):
        if call_id not in work.held:
            await store.steps.hold_result(work, call_id, {"content": "1", "is_error": False})
        result: ContentBlock = {"type": "tool_result", "tool_use_id": call_id, "content": "1"}
        await store.steps.record_results(work, request, {"role": "user", "content": [result]})
        closing: ModelMessage = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
        await store.steps.finish(work, request, f"did {request.text}", [], {}, [closing])


async def held_for_approval(store: WorkStore, work: WorkSession, request: Request) -> Approval:
    with acting_for(work.person):
        return await store.steps.hold_for_approval(
            work, request, f"toolu_{request.id}", "send_email", {}, "Shall I?", {}
        )


async def approved(store: WorkStore, work: WorkSession, approval: Approval) -> None:
    """The person's yes, and the email's outcome held as its call's result."""
    with acting_for(work.person):
        assert await store.approvals.answer(work.person, approval.id, approved=True)
        await store.steps.settle(work, approval, {"content": '{"sent": true}', "is_error": False})


async def all_sent(store: WorkStore) -> None:
    for outgoing in await store.outbox.due():
        with acting_for(outgoing.person):
            await store.outbox.sent(outgoing.id)


async def rows_of(db: async_sessionmaker[AsyncSession], person: str) -> dict[str, list[Row]]:
    """The person's rows in every table of the worker's but the erase marks, read as them."""
    theirs = select(work_sessions.c.id).where(work_sessions.c.person == person)
    queries = {
        "work_sessions": select(work_sessions).where(work_sessions.c.person == person),
        "work_messages": select(work_messages)
        .where(work_messages.c.session_id.in_(theirs))
        .order_by(work_messages.c.session_id, work_messages.c.position),
        "work_requests": select(work_requests).where(work_requests.c.person == person),
        "approvals": select(approvals).where(approvals.c.person == person),
        "outbox": select(outbox).where(outbox.c.person == person),
    }
    with acting_for(person):
        async with db() as read:
            return {table: list(await read.execute(query)) for table, query in queries.items()}


def total(rows: dict[str, list[Row]]) -> int:
    return sum(len(found) for found in rows.values())


async def trim(store: WorkStore, person: str, before: datetime | None) -> int:
    held = WorkData(store, None, None)  # type: ignore[arg-type]
    erased = await held.trim(person, Horizon(work_before=before))
    assert (erased.vectors, erased.files) == (0, 0)
    return erased.rows


async def test_a_trim_removes_finished_work_before_the_horizon_and_keeps_the_rest(
    timed: WorkStore, db: async_sessionmaker[AsyncSession], clock: Moving
) -> None:
    store = timed
    work, first = await begun(store, ANN, "calculate 1+1")
    await finished(store, work, first)
    other, lone = await begun(store, ANN, "calculate 2+2")  # a work session of its own
    await finished(store, other, lone)
    bobs, bobs_request = await begun(store, BOB, "calculate 3+3")
    await finished(store, bobs, bobs_request)
    clock.now = T0 + timedelta(hours=1)
    work, emailed = await begun(store, ANN, "email ann@example.org", work.id, t.SEND_EMAIL)
    await approved(store, work, await held_for_approval(store, work, emailed))
    await finished(store, work, emailed)
    clock.now = T0 + timedelta(hours=3)  # past the horizon
    work, recent = await begun(store, ANN, "calculate 4+4", work.id)
    await finished(store, work, recent)
    work, still_open = await begun(store, ANN, "email ann@example.net", work.id, t.SEND_EMAIL)
    waiting = await held_for_approval(store, work, still_open)
    await all_sent(store)

    before, bobs_before = await rows_of(db, ANN), await rows_of(db, BOB)
    assert await trim(store, ANN, None) == 0
    assert await rows_of(db, ANN) == before
    removed = await trim(store, ANN, HORIZON)
    after = await rows_of(db, ANN)
    assert removed == total(before) - total(after) > 0

    assert [r.id for r in after["work_requests"]] == [recent.id, still_open.id]
    assert [a.id for a in after["approvals"]] == [waiting.id]  # the answered one went
    assert {s.id: s.title for s in after["work_sessions"]} == {
        s.id: s.title for s in before["work_sessions"]
    }  # the topics stay, the emptied one too
    assert all(o.created_at >= HORIZON for o in after["outbox"])
    assert {f"result:{recent.id}"} <= {o.key for o in after["outbox"]}
    messages = [m for m in after["work_messages"] if m.session_id == work.id]
    assert [m.position for m in messages] == list(range(len(messages)))
    assert {m.request_id for m in messages} == {recent.id, still_open.id}
    assert json.loads(messages[0].content) == {"role": "user", "content": "calculate 4+4"}
    assert not [m for m in after["work_messages"] if m.session_id == other.id]
    assert await rows_of(db, BOB) == bobs_before

    assert await trim(store, ANN, HORIZON) == 0
    assert await rows_of(db, ANN) == after


async def test_a_copy_loaded_before_a_trim_writes_nothing_and_the_work_goes_on_reloaded(
    timed: WorkStore, clock: Moving
) -> None:
    store = timed
    work, first = await begun(store, ANN, "calculate 1+1")
    await finished(store, work, first)
    clock.now = T0 + timedelta(hours=3)
    work, still_open = await begun(store, ANN, "email ann@example.org", work.id, t.SEND_EMAIL)
    approval = await held_for_approval(store, work, still_open)
    assert await trim(store, ANN, HORIZON) > 0

    with acting_for(ANN), pytest.raises(StaleWorkSession):
        await store.steps.settle(work, approval, {"content": "{}", "is_error": False})
    with acting_for(ANN):
        work = await store.work_sessions.load(work.id, "here")
    assert work.messages[0] == {"role": "user", "content": "email ann@example.org"}
    await approved(store, work, approval)
    await finished(store, work, still_open)
    work, later = await begun(store, ANN, "calculate 5+5", work.id)
    await finished(store, work, later)
    with acting_for(ANN):
        stored = await store.work_sessions.read(ANN, work.id)
    assert stored is not None and stored.messages == work.messages
    assert [message["role"] for message in stored.messages] == ["user", "assistant"] * 4


async def test_a_work_session_running_now_is_left_for_the_next_pass(
    timed: WorkStore, clock: Moving
) -> None:
    store = timed
    work, first = await begun(store, ANN, "calculate 1+1")
    await finished(store, work, first)
    clock.now = T0 + timedelta(hours=3)
    lease = store.work_sessions.lease("elsewhere", 60.0)
    with acting_for(ANN):
        assert await lease.try_acquire(work.id)
    assert await trim(store, ANN, HORIZON) == 0
    with acting_for(ANN):
        assert await store.requests.outcomes(work.id) == [("calculate 1+1", "did calculate 1+1")]
        await lease.release(work.id)
    assert await trim(store, ANN, HORIZON) > 0
    with acting_for(ANN):
        assert await store.requests.outcomes(work.id) == []
