"""A person's memory, taken, erased and trimmed (`violet.v1.PersonData`), on SQLite and
PostgreSQL, with the embedded vector store and with qdrant-client's: the export holds what the
memory page lists of the person alone, an erase leaves no row, vector or writer of theirs behind,
and no one else's touched, and a trim takes what memory copied of transcript messages that are
gone, never a fact the person kept."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
from jsonschema import Draft202012Validator
from qdrant_client import AsyncQdrantClient
from sqlalchemy import create_engine, select

import memory.runtime
from memory.__main__ import resources
from memory.capture import Capturer
from memory.deeds import Deed
from memory.indexing import reindex
from memory.queries import RecentQueries
from memory.runtime import Memory, migrate, open_memory
from memory.settings import MemorySettings
from memory.sources import Source
from memory.store import NewTurn, PersonMemory
from memory.tables import captured_turns, memory_items, metadata
from tests.support.memory import ScriptedOrigin, captured, said
from tests.support.postgres import fresh_schema
from tests.support.waiting import eventually
from violet import database
from violet.embedder import get_embedder
from violet.identity import issue_internal_token, issue_token
from violet.person_data import Erased, Horizon
from violet.tasks import cancel_all
from violet.v1 import persons_pb2, persons_pb2_grpc
from violet.vectors import QdrantVectorStore, VectorStore

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
SECRET = "a-test-secret-long-enough-for-tokens-0123456789"
FERRY = Source(page="https://ferry.example/times", title="Ferry times")
NOTES = Source(document="notes-ferry.md")
CAT = "My cat is called Miso, and I take my coffee with oat milk"
DOG = "My dog is called Rex, and I take my tea with honey"
FERRY_TOLD = 'The page "Ferry times" says: the first ferry leaves at 9:40 from pier 3.'
NOTES_TOLD = "Your notes say the ferry back leaves at 17:15 from pier 5, so you have time."
SUM = Deed(done="calculated", asked="what is 17*23?", expression="17*23", value="391")


def new_person(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def told(turn: NewTurn, text: str, *sources: Source) -> NewTurn:
    return replace(turn, violet_answer=text, told=text, told_sources=sources)


# SQL and vector stores: each database and each vector store at least once; the erase itself
# on every pair.
STORES = ["sqlite-edge", "postgres-qdrant-client"]
EVERY_PAIR = [*STORES, "sqlite-qdrant-client", "postgres-edge"]


async def local_qdrant(_settings: object, dimension: int, name: str) -> VectorStore:
    with warnings.catch_warnings():  # local mode says payload indexes need a server
        warnings.simplefilter("ignore", UserWarning)
        return await QdrantVectorStore.open(
            AsyncQdrantClient(location=":memory:"), dimension, f"violet_{name}"
        )


@pytest.fixture(params=STORES)
def settings(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[MemorySettings]:
    sql, vectors = str(request.param).split("-", 1)
    if vectors == "qdrant-client":
        monkeypatch.setattr(memory.runtime, "open_vector_store", local_qdrant)
    with contextlib.ExitStack() as cleanup:
        url = cleanup.enter_context(fresh_schema()) if sql == "postgres" else ""
        chosen = MemorySettings(home=tmp_path, database_url=url, qdrant_url="", secret=SECRET)
        migrate(chosen)
        yield chosen


@pytest.fixture
async def opened(settings: MemorySettings) -> AsyncIterator[Memory]:
    async with open_memory(settings) as parts:
        yield parts


async def fill(parts: Memory, person: str, words: str) -> None:
    """Facts of the person's and of Violet's, told records with a page and a document, and a
    fact forgotten on the memory page."""
    await captured(
        parts,
        person,
        said(words, 1),
        told(said("When does the ferry leave?", 3), FERRY_TOLD, FERRY, NOTES),
        said("", 5, answer="", deeds=(SUM,)),
        told(said("And back?", 7), NOTES_TOLD, NOTES),
        said("I like basil on my pizza", 9),
    )
    basil = next(item for item in await parts.page.facts(person) if "basil" in item.text)
    await parts.page.forget(person, basil.id)


class GatedOrigin(ScriptedOrigin):
    """A fast model that answers once its gate opens (closed at first), counting its answers."""

    def __init__(self) -> None:
        super().__init__(self._count)
        self.answered = 0
        self.gate.clear()

    def _count(self) -> list[dict]:
        self.answered += 1
        return [{"text": CAT, "origin": "you", "quote": CAT}]


async def exported(parts: Memory, person: str) -> list[tuple[str, dict[str, Any]]]:
    return [(record.section, record.fields) async for record in parts.person_data.export(person)]


def valid(section: str, record: dict[str, Any]) -> bool:
    item = {"$defs": SCHEMA["$defs"], **SCHEMA["properties"][section]["items"]}
    return Draft202012Validator(item).is_valid(record)


def owner_rows(settings: MemorySettings) -> list[tuple[str, str, str]]:
    """Every value in every table of the service, as (table, column, value), read as the tables'
    owner (past row-level security)."""
    engine = create_engine(database.sync_url(settings, "memory"))
    try:
        with engine.connect() as db:
            return [
                (table.name, column, str(value))
                for table in metadata.sorted_tables
                for row in db.execute(select(table))
                for column, value in row._mapping.items()
            ]
    finally:
        engine.dispose()


def naming(rows: list[tuple[str, str, str]], person: str, ids: set[str]) -> list[str]:
    """The cells that hold the person or an id of one of their items, in any column (a person,
    an item, a parent item, the items a fact was made from)."""
    return [
        f"{table}.{column}"
        for table, column, value in rows
        if person in value or any(item_id in value for item_id in ids)
    ]


def items_of(settings: MemorySettings, person: str) -> set[str]:
    engine = create_engine(database.sync_url(settings, "memory"))
    try:
        with engine.connect() as db:
            found = db.scalars(select(memory_items.c.id).where(memory_items.c.person == person))
            return set(found)
    finally:
        engine.dispose()


async def vector_ids(parts: Memory, person: str) -> set[str]:
    return {point.id for point in await parts.vectors.scroll(person)}


async def vector_count(parts: Memory, person: str, at_least: int) -> bool:
    return len(await vector_ids(parts, person)) >= at_least


async def version_of(parts: Memory, person: str) -> str | None:
    version = await parts.store.read(person, PersonMemory.version)
    return version.epoch if version else None


async def nothing_left_of(parts: Memory, settings: MemorySettings, person: str) -> None:
    assert naming(owner_rows(settings), person, set()) == []
    assert await vector_ids(parts, person) == set()
    assert await exported(parts, person) == []


async def test_the_export_holds_what_the_memory_page_lists_of_the_person_alone(
    settings: MemorySettings, opened: Memory
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    await fill(opened, ann, CAT)
    await fill(opened, bob, DOG)

    records = await exported(opened, ann)
    assert [section for section, _ in records] == ["remembered"] * 3 + ["told"] * 2
    assert all(valid(section, record) for section, record in records)
    listed = sorted(await opened.page.facts(ann), key=lambda item: (item.created_at, item.id))
    assert [record for section, record in records if section == "remembered"] == [
        {"text": item.text, "remembered_at": item.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")}
        for item in listed
    ]
    assert "I worked out 17*23 = 391." in [item.text for item in listed]
    assert [record for section, record in records if section == "told"] == [
        {
            "text": FERRY_TOLD,
            "told_at": "2025-03-03T09:03:00Z",
            "sources": [
                {"page": FERRY.page, "title": FERRY.title},
                {"document": NOTES.document, "title": ""},
            ],
        },
        {
            "text": NOTES_TOLD,
            "told_at": "2025-03-03T09:07:00Z",
            "sources": [{"document": NOTES.document, "title": ""}],
        },
    ]
    everything = json.dumps(records)
    assert "basil" not in everything, "a forgotten fact is no longer kept"
    assert CAT not in everything, "the person's own messages are the session's conversation"
    assert "Rex" not in everything and bob not in everything
    assert not any(item_id in everything for item_id in items_of(settings, ann))


@pytest.mark.parametrize("settings", EVERY_PAIR, indirect=True)
async def test_an_erase_leaves_no_row_or_vector_of_the_person_and_the_others_untouched(
    settings: MemorySettings, opened: Memory
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    await fill(opened, ann, CAT)
    await fill(opened, bob, DOG)
    anns_items = items_of(settings, ann)
    assert naming(owner_rows(settings), ann, anns_items)
    bobs_rows = naming(owner_rows(settings), bob, set())
    bobs_vectors = await vector_ids(opened, bob)
    bobs_export = await exported(opened, bob)
    assert await opened.recaller.recall(ann, "what is my cat called?", 3)
    before = await version_of(opened, ann)

    erased = await opened.person_data.erase(ann)

    assert erased.rows >= len(anns_items) and erased.vectors > 0
    assert naming(owner_rows(settings), ann, anns_items) == []
    assert await vector_ids(opened, ann) == set()
    assert await opened.recaller.recall(ann, "what is my cat called?", 3) == []
    assert naming(owner_rows(settings), bob, set()) == bobs_rows
    assert await vector_ids(opened, bob) == bobs_vectors
    assert await exported(opened, bob) == bobs_export
    assert await opened.person_data.erase(ann) == Erased(rows=0, vectors=0)

    await captured(opened, ann, said("I take my tea with honey", 11))
    assert [record["text"] for _, record in await exported(opened, ann)] == [
        "I take my tea with honey"
    ]
    assert await version_of(opened, ann) != before, "a new memory, in a new epoch"


async def test_a_capture_pass_under_way_is_stopped_and_leaves_nothing(
    settings: MemorySettings,
) -> None:
    model = GatedOrigin()
    async with open_memory(settings, model=model) as parts:
        ann = new_person("ann")
        await parts.capturer.accept(ann, said(CAT, 1))
        await eventually(lambda: vector_ids(parts, ann), "the turn item stored")

        await parts.person_data.erase(ann)
        model.gate.set()
        await parts.capturer.settled(ann)
        await nothing_left_of(parts, settings, ann)
        assert model.answered == 0, "the pass ended at the erase"


async def test_a_quiet_consolidation_under_way_is_stopped_and_the_sweep_goes_on(
    settings: MemorySettings,
) -> None:
    model = GatedOrigin()
    async with open_memory(settings, model=model) as parts:
        ann = new_person("ann")
        # Stored, its capture pass left to the sweep.
        await parts.store.run(ann, partial(PersonMemory.add_turn, turn=said(CAT, 1)))
        sweep = asyncio.create_task(parts.consolidator.consolidate_when_quiet(0.01, 0.05))
        try:
            await eventually(lambda: vector_ids(parts, ann), "the sweep's turn item stored")

            await parts.person_data.erase(ann)
            model.gate.set()
            await nothing_left_of(parts, settings, ann)
            bob = new_person("bob")
            await parts.store.run(bob, partial(PersonMemory.add_turn, turn=said(DOG, 1)))
            await eventually(lambda: model.answered, "bob's turn made by the sweep")
            assert model.answered == 1, "the consolidation of ann ended at the erase"
        finally:
            await cancel_all([sweep])


async def test_a_capture_pass_of_another_replica_keeps_nothing_once_the_erase_ran(
    settings: MemorySettings, opened: Memory
) -> None:
    """Another replica's pass is not stopped by the erase: it finds its turn gone, and removes
    the vectors it stored."""
    model = GatedOrigin()
    queries = RecentQueries(get_embedder())
    other = Capturer(opened.store, opened.vectors, opened.passages, queries, model)
    ann = new_person("ann")
    await captured(opened, ann, said("I like basil on my pizza", 1))
    await other.accept(ann, said(CAT, 3))
    await eventually(lambda: vector_count(opened, ann, 3), "the other replica's turn item stored")

    await opened.person_data.erase(ann)
    model.gate.set()
    await other.settled(ann)
    await nothing_left_of(opened, settings, ann)
    assert model.answered == 1, "the other replica's pass went on"


async def test_work_that_read_before_the_erase_and_writes_after_it_leaves_nothing(
    settings: MemorySettings, opened: Memory
) -> None:
    """A forget or a consolidation on another replica: it read the items before the erase, and
    stores their vectors and records their change after it."""
    ann = new_person("ann")
    await captured(opened, ann, said(CAT, 1))
    read = await opened.store.read(ann, PersonMemory.active_items)

    await opened.person_data.erase(ann)
    await reindex(opened.store, ann, opened.passages, opened.vectors, read, [])
    await opened.store.vectors_stored(ann, [item.id for item in read])
    await nothing_left_of(opened, settings, ann)


async def test_a_capture_committing_as_the_erase_starts_is_erased_with_the_rest(
    settings: MemorySettings, opened: Memory
) -> None:
    ann = new_person("ann")
    stored, erase_started = threading.Event(), threading.Event()

    async def capture_under_way(capturing: PersonMemory) -> int | None:
        turn = await capturing.add_turn(said(CAT, 1))
        stored.set()
        erase_started.wait(10)  # on the worker thread, in the capture's transaction
        return turn

    capture = asyncio.create_task(opened.store.run(ann, capture_under_way))
    assert await asyncio.to_thread(stored.wait, 10)
    erasing = asyncio.create_task(opened.person_data.erase(ann))
    done, _ = await asyncio.wait([erasing], timeout=0.5)
    erase_started.set()
    assert not done, "the erase waits for the capture under way"
    assert await capture is not None
    erased = await erasing
    assert erased.rows == 2  # the captured turn, and the person among those with memory
    await nothing_left_of(opened, settings, ann)


async def test_an_erase_stopped_halfway_refuses_captures_until_called_again(
    settings: MemorySettings, opened: Memory
) -> None:
    ann = new_person("ann")
    await captured(opened, ann, said(CAT, 1))
    vectors = len(await vector_ids(opened, ann))
    # Stopped after its rows went, before its vectors did.
    await opened.store.begin_erasure(ann)
    assert await opened.store.run(ann, PersonMemory.erase_everything) > 0

    await opened.capturer.accept(ann, said(DOG, 3))
    await opened.capturer.settled(ann)
    assert naming(owner_rows(settings), ann, set()) == ["memory_erasures.person"]

    assert await opened.person_data.erase(ann) == Erased(rows=0, vectors=vectors)
    await nothing_left_of(opened, settings, ann)
    await captured(opened, ann, said(DOG, 5))
    assert len(await exported(opened, ann)) == 2


@pytest.mark.parametrize("settings", ["sqlite-edge", "postgres-edge"], indirect=True)
async def test_the_service_serves_person_data_for_the_person_of_the_token_alone(
    settings: MemorySettings,
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    async with open_memory(settings) as parts:
        await fill(parts, ann, CAT)
        await fill(parts, bob, DOG)
        expected = await exported(parts, ann)
    async with resources(settings) as hosted:
        server = grpc.aio.server()
        assert "violet.v1.PersonData" in hosted.register(server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = persons_pb2_grpc.PersonDataStub(channel)
                as_ann = (("authorization", f"Bearer {issue_internal_token(ann, SECRET)}"),)
                records = [
                    (record.section, json.loads(record.json))
                    async for record in stub.Export(persons_pb2.ExportRequest(), metadata=as_ann)
                ]
                assert records == expected
                as_device = (("authorization", f"Bearer {issue_token(ann, SECRET)}"),)
                for metadata_sent in ((), as_device):
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.Erase(persons_pb2.EraseRequest(), metadata=metadata_sent)
                    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
                erased = await stub.Erase(persons_pb2.EraseRequest(), metadata=as_ann)
                assert erased.rows > 0 and erased.vectors > 0 and erased.files == 0
                again = await stub.Erase(persons_pb2.EraseRequest(), metadata=as_ann)
                assert (again.rows, again.vectors, again.files) == (0, 0, 0)
                left = stub.Export(persons_pb2.ExportRequest(), metadata=as_ann)
                assert [record async for record in left] == []
        finally:
            await server.stop(None)
    assert naming(owner_rows(settings), bob, set())


# The seq the transcript lets go up to in `fill`: the cat turn (1, 2) and the ferry turn (3, 4).
TRIMMED_THROUGH = 4


def item_rows(settings: MemorySettings, person: str) -> dict[str, dict[str, Any]]:
    """The person's items by id, read as the tables' owner."""
    engine = create_engine(database.sync_url(settings, "memory"))
    try:
        with engine.connect() as db:
            rows = db.execute(select(memory_items).where(memory_items.c.person == person))
            return {row.id: dict(row._mapping) for row in rows}
    finally:
        engine.dispose()


def captured_seqs(settings: MemorySettings, person: str) -> list[list[int]]:
    engine = create_engine(database.sync_url(settings, "memory"))
    try:
        with engine.connect() as db:
            rows = db.execute(
                select(captured_turns.c.source_seqs)
                .where(captured_turns.c.person == person)
                .order_by(captured_turns.c.id)
            )
            return [list(row.source_seqs) for row in rows]
    finally:
        engine.dispose()


def made_of(rows: dict[str, dict[str, Any]], text: str, kind: str) -> str:
    [found] = [i for i, row in rows.items() if row["kind"] == kind and text in row["text"]]
    return found


async def recalled_ids(parts: Memory, person: str, query: str) -> set[str]:
    items, told_records = await parts.recaller.recall_with_told(person, query, 5, 3)
    return {recalled.item.id for recalled in [*items, *told_records]}


@pytest.mark.parametrize("settings", EVERY_PAIR, indirect=True)
async def test_a_trim_takes_the_turns_and_told_records_of_gone_messages_and_keeps_the_facts(
    settings: MemorySettings, opened: Memory
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    await fill(opened, ann, CAT)
    await fill(opened, bob, DOG)
    before = item_rows(settings, ann)
    cat_turn, ferry_turn = made_of(before, CAT, "turn"), made_of(before, "ferry", "turn")
    ferry_told, back_turn = made_of(before, FERRY_TOLD, "told"), made_of(before, "back", "turn")
    cat = made_of(before, "cat", "fact")
    assert before[cat]["turn_items"] == [cat_turn]
    assert before[back_turn]["previous_item"] == ferry_turn
    trimmed = {cat_turn, ferry_turn, ferry_told}
    facts = {i for i, row in before.items() if row["kind"] == "fact"}
    bobs_rows = naming(owner_rows(settings), bob, set())
    bobs_vectors = await vector_ids(opened, bob)
    remembered = [r for r in await exported(opened, ann) if r[0] == "remembered"]
    # The ranking index is loaded before the trim: it learns of it from the recorded changes.
    assert ferry_turn in await recalled_ids(opened, ann, "When does the ferry leave?")

    erased = await opened.person_data.trim(ann, Horizon(transcript_through_seq=TRIMMED_THROUGH))

    assert erased == Erased(rows=len(trimmed) + 2, vectors=len(trimmed))  # and 2 captured turns
    after = item_rows(settings, ann)
    assert set(after) == set(before) - trimmed
    assert facts <= set(after), "facts stay, even one made from a trimmed turn"
    assert after[back_turn]["previous_item"] is None
    assert captured_seqs(settings, ann) == [[5, 6], [7, 8], [9, 10]]
    stored = await vector_ids(opened, ann)
    assert not stored & trimmed
    assert {back_turn, made_of(before, NOTES_TOLD, "told")} <= stored
    for query in ("what is my cat called?", "When does the ferry leave?"):
        recalled = await recalled_ids(opened, ann, query)
        assert recalled and not recalled & trimmed
    assert cat in await recalled_ids(opened, ann, "what is my cat called?")
    assert [r for r in await exported(opened, ann) if r[0] == "remembered"] == remembered
    assert [r["text"] for s, r in await exported(opened, ann) if s == "told"] == [NOTES_TOLD]
    assert naming(owner_rows(settings), bob, set()) == bobs_rows
    assert await vector_ids(opened, bob) == bobs_vectors

    assert await opened.person_data.trim(ann, Horizon(TRIMMED_THROUGH)) == Erased()
    assert await opened.person_data.trim(ann, Horizon(0)) == Erased()
    assert set(item_rows(settings, ann)) == set(after)


async def test_a_fact_made_from_a_trimmed_turn_is_forgotten_restored_and_consolidated(
    settings: MemorySettings, opened: Memory
) -> None:
    ann = new_person("ann")
    await fill(opened, ann, CAT)
    cat = made_of(item_rows(settings, ann), "cat", "fact")
    await opened.person_data.trim(ann, Horizon(TRIMMED_THROUGH))

    assert cat not in {item.id for item in (await opened.page.forget(ann, cat)).facts}
    assert cat not in await recalled_ids(opened, ann, "what is my cat called?")
    assert cat in {item.id for item in (await opened.page.restore(ann, cat)).facts}
    assert cat in await recalled_ids(opened, ann, "what is my cat called?")
    report = await opened.consolidator.sleep(undo_window=timedelta(days=30))
    assert (report.withdrawn, report.failed) == (0, [])
    assert cat in {item.id for item in await opened.page.facts(ann)}

    # The basil fact was forgotten with its turn (`fill`): the turn goes, the fact comes back.
    basil = made_of(item_rows(settings, ann), "basil", "fact")
    assert (await opened.person_data.trim(ann, Horizon(10))).rows > 0
    assert "turn" not in {row["kind"] for row in item_rows(settings, ann).values()}
    assert basil in {item.id for item in (await opened.page.restore(ann, basil)).facts}
    assert basil in await recalled_ids(opened, ann, "what do I like on my pizza?")


async def test_a_turn_still_waiting_for_its_facts_stays_until_a_trim_after_they_are_made(
    settings: MemorySettings,
) -> None:
    model = GatedOrigin()
    async with open_memory(settings, model=model) as parts:
        ann = new_person("ann")
        await parts.capturer.accept(ann, said(CAT, 1))
        await eventually(lambda: vector_ids(parts, ann), "the turn item stored")

        assert await parts.person_data.trim(ann, Horizon(2)) == Erased()
        model.gate.set()
        await parts.capturer.settled(ann)
        [fact] = await parts.page.facts(ann)
        assert await parts.person_data.trim(ann, Horizon(2)) == Erased(rows=2, vectors=1)
        assert [item.id for item in await parts.page.facts(ann)] == [fact.id]
        assert await vector_ids(parts, ann) == {fact.id}


@pytest.mark.parametrize("settings", ["sqlite-edge", "postgres-edge"], indirect=True)
async def test_the_service_trims_for_the_person_of_the_token_alone(
    settings: MemorySettings,
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    async with open_memory(settings) as parts:
        await fill(parts, ann, CAT)
        await fill(parts, bob, DOG)
    bobs_rows = naming(owner_rows(settings), bob, set())
    trim = Horizon(TRIMMED_THROUGH).request()
    async with resources(settings) as hosted:
        server = grpc.aio.server()
        hosted.register(server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = persons_pb2_grpc.PersonDataStub(channel)
                as_device = (("authorization", f"Bearer {issue_token(ann, SECRET)}"),)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.Trim(trim, metadata=as_device)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
                as_ann = (("authorization", f"Bearer {issue_internal_token(ann, SECRET)}"),)
                trimmed = await stub.Trim(trim, metadata=as_ann)
                assert (trimmed.rows, trimmed.vectors, trimmed.files) == (5, 3, 0)
                again = await stub.Trim(trim, metadata=as_ann)
                assert (again.rows, again.vectors, again.files) == (0, 0, 0)
        finally:
            await server.stop(None)
    assert naming(owner_rows(settings), bob, set()) == bobs_rows
