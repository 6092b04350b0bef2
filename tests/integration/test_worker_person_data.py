"""A person's work, approvals and documents taken and erased through the worker's
`violet.v1.PersonData`, as a real process on SQLite and on PostgreSQL: the export holds what the
person asked, was asked and has, of theirs alone; an erase leaves no row or file of theirs, and
no one else's touched; a second erase removes nothing, and the person starts again from empty."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import create_engine, text

from tests.integration.test_worker_service import WorkerUnderTest, worker_under_test
from tests.support.postgres import fresh_schema
from tests.support.waiting import eventually
from violet.person_data import Horizon
from violet.v1 import documents_pb2, documents_pb2_grpc, persons_pb2, persons_pb2_grpc
from worker.tables import metadata

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
SECTIONS = ("documents", "work", "approvals")
# The columns that say whose a row is: the person, or the work session it belongs to.
OWNERS = ("person", "session_id", "topic")
# Topic and approval ids, tool call ids and tool names: never in an export.
INTERNAL = re.compile(r"\bt_[0-9a-f]{16}\b|\bap_[0-9a-f]{16}\b|toolu_|run_python|write_document")

MARK_ERASURE = "INSERT INTO work_erasures (person, started_at) VALUES (:p, CURRENT_TIMESTAMP)"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
async def worker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[WorkerUnderTest]:
    with contextlib.ExitStack() as cleanup:
        env = {"VIOLET_WORK_SWEEP_S": "0.5"}
        if request.param == "postgres":
            env["VIOLET_DATABASE_URL"] = cleanup.enter_context(fresh_schema())
        home = tmp_path_factory.mktemp(f"person-data-{request.param}")
        async with worker_under_test(home, env=env) as started:
            yield started


def someone(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def person_data(worker: WorkerUnderTest) -> persons_pb2_grpc.PersonDataStub:
    channel = grpc.aio.insecure_channel(worker.stack.address("worker"))
    return persons_pb2_grpc.PersonDataStub(channel)


async def fill(worker: WorkerUnderTest, person: str, word: str) -> None:
    """A note, a note deleted, a calculation, an email sent on a yes and one still asked."""
    for request in (f"write a note {word}: milk and bread", f"write a note old {word}: pears"):
        await worker.peers.wait("result", await worker.start_work(person, request))
    documents = documents_pb2_grpc.DocumentsStub(
        grpc.aio.insecure_channel(worker.stack.address("worker"))
    )
    await documents.Delete(
        documents_pb2.DocumentRequest(name=f"note-old-{word}.md"),
        metadata=worker.metadata(person),
        timeout=10,
    )
    await worker.peers.wait("result", await worker.start_work(person, "calculate 17*23"))
    sent = await worker.start_work(person, f"send an email to {word}@example.org saying hi")
    asked = await worker.peers.wait("approval", sent)
    await worker.answer(person, asked.approval.approval, approved=True)
    await worker.peers.wait("result", sent)
    held = await worker.start_work(person, f"send an email to {word}@example.net saying later")
    await worker.peers.wait("approval", held)


async def export(worker: WorkerUnderTest, person: str) -> list[persons_pb2.ExportRecord]:
    stream = person_data(worker).Export(
        persons_pb2.ExportRequest(), metadata=worker.metadata(person), timeout=10
    )
    return [record async for record in stream]


async def erase(worker: WorkerUnderTest, person: str) -> persons_pb2.EraseReply:
    return await person_data(worker).Erase(
        persons_pb2.EraseRequest(), metadata=worker.metadata(person), timeout=30
    )


def valid(section: str, record: dict[str, Any]) -> bool:
    """Whether the record is an item of its section in the archive; a document's with the
    archive file the session names for it."""
    if section == "documents":
        assert "file" not in record
        record = {**record, "file": f"documents/{record['name']}"}
    item = {"$defs": SCHEMA["$defs"], **SCHEMA["properties"][section]["items"]}
    return Draft202012Validator(item).is_valid(record)


def by_section(records: list[persons_pb2.ExportRecord]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        found.setdefault(record.section, []).append(json.loads(record.json))
    return found


def rows_of(worker: WorkerUnderTest, person: str) -> set[tuple[str, str]]:
    """(table, primary key) of every row of the person's in every table of the worker, found by
    the person or by one of their work sessions; read past row-level security."""
    theirs = {r.id for r in worker.rows("SELECT id FROM work_sessions WHERE person = :p", p=person)}
    found = set()
    for table in metadata.sorted_tables:
        owners = [name for name in OWNERS if name in table.c]
        if table.name == "work_sessions":
            owners.append("id")
        assert owners, f"{table.name}: say which column ties its rows to a person"
        key = [column.name for column in table.primary_key]
        for row in worker.rows(f"SELECT * FROM {table.name}"):
            values = row._mapping
            if any(values[name] == person or values[name] in theirs for name in owners):
                found.add((table.name, str([values[name] for name in key])))
    return found


def files_of(worker: WorkerUnderTest, person: str) -> dict[str, bytes]:
    folder = worker.folder(person)
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def insert_erasure_mark(worker: WorkerUnderTest, person: str) -> None:
    """As an erase that stopped halfway leaves it."""
    url = worker.stack.database_url("worker").replace("postgresql://", "postgresql+psycopg://")
    engine = create_engine(url)
    try:
        with engine.begin() as db:
            db.execute(
                text(MARK_ERASURE),
                {"p": person},
            )
    finally:
        engine.dispose()


async def test_the_export_holds_the_persons_work_approvals_and_documents_alone(
    worker: WorkerUnderTest,
) -> None:
    ann, bob = someone("ann"), someone("bob")
    await fill(worker, ann, "ferry")
    await fill(worker, bob, "garden")

    records = await export(worker, ann)
    order = [record.section for record in records]
    assert sorted(set(order), key=order.index) == list(SECTIONS)  # each section together
    sections = by_section(records)
    for section, found in sections.items():
        assert all(valid(section, record) for record in found), section

    documents = {(d["name"], d["deleted"]): d for d in sections["documents"]}
    assert set(documents) == {("note-ferry.md", False), ("note-old-ferry.md", True)}
    [note] = [r for r in records if json.loads(r.json).get("name") == "note-ferry.md"]
    assert b"milk and bread" in note.content
    assert documents["note-ferry.md", False]["size"] == len(note.content)

    work = sections["work"]
    assert [w["asked"] for w in work][0] == "write a note ferry: milk and bread"
    assert [w["state"] for w in work] == ["done", "done", "done", "done", "waiting"]
    assert "391" in work[2]["result"] and work[2]["finished_at"]
    assert work[-1]["result"] is None and work[-1]["finished_at"] is None
    assert [w["asked_at"] for w in work] == sorted(w["asked_at"] for w in work)

    approvals = sections["approvals"]
    assert [a["answer"] for a in approvals] == ["yes", "waiting"]
    assert "ferry@example.org" in approvals[0]["question"] and approvals[0]["answered_at"]

    everything = " ".join(record.json for record in records)
    assert "garden" not in everything  # nothing of bob's
    assert not INTERNAL.search(everything)


async def test_an_erase_leaves_nothing_of_the_person_and_touches_no_one_else(
    worker: WorkerUnderTest,
) -> None:
    ann, bob = someone("ann"), someone("bob")
    await fill(worker, ann, "ferry")
    await fill(worker, bob, "garden")
    bobs_rows, bobs_files = rows_of(worker, bob), files_of(worker, bob)
    assert rows_of(worker, ann) and files_of(worker, ann)

    erased = await erase(worker, ann)
    assert erased.rows >= 15 and erased.files == 2 and erased.vectors == 0
    assert rows_of(worker, ann) == set()
    assert not worker.folder(ann).exists()
    assert rows_of(worker, bob) == bobs_rows and files_of(worker, bob) == bobs_files

    again = await erase(worker, ann)
    assert (again.rows, again.vectors, again.files) == (0, 0, 0)
    assert await export(worker, ann) == []

    topic = await worker.start_work(ann, "calculate 2+3")
    await worker.peers.wait("result", topic)
    assert [w["asked"] for w in by_section(await export(worker, ann))["work"]] == ["calculate 2+3"]


async def test_new_work_is_refused_until_an_erase_left_halfway_is_finished(
    worker: WorkerUnderTest,
) -> None:
    ann = someone("ann")
    sent = await worker.start_work(ann, "send an email to ann@example.org saying hi")
    asked = await worker.peers.wait("approval", sent)
    insert_erasure_mark(worker, ann)

    for refused in (
        worker.start_work(ann, "calculate 1+1"),
        worker.answer(ann, asked.approval.approval, approved=True),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refusal:
            await refused
        assert refusal.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    assert (await erase(worker, ann)).rows > 0
    assert rows_of(worker, ann) == set()
    assert not worker.smtp.to("ann@example.org")
    topic = await worker.start_work(ann, "calculate 1+1")
    await worker.peers.wait("result", topic)


async def trim(
    worker: WorkerUnderTest, person: str, before: datetime | None
) -> persons_pb2.EraseReply:
    return await person_data(worker).Trim(
        Horizon(work_before=before).request(), metadata=worker.metadata(person), timeout=30
    )


def requests_of(worker: WorkerUnderTest, topic: str) -> list[tuple[int, str]]:
    found = worker.rows(
        "SELECT id, text FROM work_requests WHERE session_id = :t ORDER BY id", t=topic
    )
    return [(row.id, row.text) for row in found]


def conversation(worker: WorkerUnderTest, topic: str) -> list[tuple[int, Any]]:
    """(position, message) of the topic's model conversation, in order."""
    query = "SELECT position, content FROM work_messages WHERE session_id = :t ORDER BY position"
    return [(row.position, json.loads(row.content)) for row in worker.rows(query, t=topic)]


def unsent(worker: WorkerUnderTest, person: str) -> int:
    query = "SELECT count(*) AS n FROM outbox WHERE person = :p AND sent_at IS NULL"
    return int(worker.rows(query, p=person)[0].n)


async def test_a_trim_removes_work_finished_before_the_horizon_and_the_topic_goes_on(
    worker: WorkerUnderTest,
) -> None:
    ann, bob = someone("ann"), someone("bob")
    await fill(worker, bob, "garden")
    topic = await worker.start_work(ann, "calculate 17*23")
    await worker.peers.wait("result", topic)
    await worker.start_work(ann, "send an email to ferry@example.org saying hi", topic)
    asked = await worker.peers.wait("approval", topic)
    await worker.answer(ann, asked.approval.approval, approved=True)
    await worker.peers.wait("result", topic, count=2)
    await asyncio.sleep(1.1)  # the horizon travels in whole seconds
    horizon = datetime.now(UTC)
    await worker.start_work(ann, "calculate 2+3", topic)
    await worker.peers.wait("result", topic, count=3)
    await worker.start_work(ann, "send an email to ferry@example.net saying later", topic)
    held = await worker.peers.wait("approval", topic, count=2)
    await eventually(lambda: unsent(worker, ann) == 0, "everything of ann's sent")
    old = requests_of(worker, topic)[:2]
    annes_rows, bobs_rows = rows_of(worker, ann), rows_of(worker, bob)

    nothing = await trim(worker, ann, None)
    assert (nothing.rows, rows_of(worker, ann)) == (0, annes_rows)
    trimmed = await trim(worker, ann, horizon)
    assert trimmed.rows == len(annes_rows - rows_of(worker, ann)) > 0
    assert (trimmed.vectors, trimmed.files) == (0, 0)
    assert worker.statuses(topic) == (["done", "waiting"], ["waiting"])
    assert [text for _, text in requests_of(worker, topic)][0] == "calculate 2+3"
    keys = {row.key for row in worker.rows("SELECT key FROM outbox WHERE person = :p", p=ann)}
    assert not keys & {f"result:{id_}" for id_, _ in old}
    messages = conversation(worker, topic)
    assert [position for position, _ in messages] == list(range(len(messages)))
    assert messages[0][1] == {"role": "user", "content": "calculate 2+3"}
    assert worker.rows("SELECT title FROM work_sessions WHERE id = :t", t=topic)
    assert rows_of(worker, bob) == bobs_rows

    again = await trim(worker, ann, horizon)
    assert again.rows == 0

    # The copy the worker holds loaded was loaded before the trim: the work goes on all the same.
    await worker.answer(ann, held.approval.approval, approved=True)
    await worker.smtp.wait_for("ferry@example.net")
    await worker.peers.wait("result", topic, count=4)
    await worker.start_work(ann, "calculate 3+4", topic)
    assert "7" in (await worker.peers.wait("result", topic, count=5)).result.text
    messages = conversation(worker, topic)
    assert [position for position, _ in messages] == list(range(len(messages)))
    work = by_section(await export(worker, ann))["work"]
    assert [w["asked"] for w in work] == [
        "calculate 2+3",
        "send an email to ferry@example.net saying later",
        "calculate 3+4",
    ]
