"""A person's memory, taken and erased (`violet.v1.PersonData`), on SQLite and PostgreSQL, with the
embedded vector store and with qdrant-client's: the export holds what the memory page lists of
the person alone, and an erase leaves no row, vector or writer of theirs behind, and no one
else's touched."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
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
from memory.person_data import Erased
from memory.queries import RecentQueries
from memory.runtime import Memory, migrate, open_memory
from memory.settings import MemorySettings
from memory.sources import Source
from memory.store import NewTurn
from memory.tables import memory_items, metadata
from tests.support.memory import ScriptedOrigin, captured, said
from tests.support.postgres import fresh_schema
from tests.support.waiting import eventually
from violet import database
from violet.embedder import get_embedder
from violet.identity import issue_internal_token, issue_token
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


@pytest.fixture(params=["sqlite", "postgres"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemorySettings]:
    with contextlib.ExitStack() as cleanup:
        url = cleanup.enter_context(fresh_schema()) if request.param == "postgres" else ""
        chosen = MemorySettings(home=tmp_path, database_url=url, qdrant_url="", secret=SECRET)
        migrate(chosen)
        yield chosen


async def local_qdrant(_settings: object, dimension: int, name: str) -> VectorStore:
    with warnings.catch_warnings():  # local mode says payload indexes need a server
        warnings.simplefilter("ignore", UserWarning)
        return await QdrantVectorStore.open(
            AsyncQdrantClient(location=":memory:"), dimension, f"violet_{name}"
        )


@pytest.fixture(params=["edge", "qdrant-client"])
def vector_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "qdrant-client":
        monkeypatch.setattr(memory.runtime, "open_vector_store", local_qdrant)
    return str(request.param)


@pytest.fixture
async def opened(settings: MemorySettings, vector_kind: str) -> AsyncIterator[Memory]:
    async with open_memory(settings) as parts:
        yield parts


async def fill(parts: Memory, person: str, words: str) -> None:
    """Facts of the person's and of Violet's, a told record with a page and a document, and a
    fact forgotten on the memory page."""
    await captured(
        parts,
        person,
        said(words, 1),
        told(said("When does the ferry leave?", 3), FERRY_TOLD, FERRY, NOTES),
        said("", 5, answer="", deeds=(SUM,)),
        told(said("And back?", 7), NOTES_TOLD, NOTES),
        said("I grow basil on my balcony", 9),
    )
    basil = next(i for i in await parts.page.facts(person) if "basil" in i.text)
    await parts.page.forget(person, basil.id)


async def exported(parts: Memory, person: str) -> list[tuple[str, dict[str, Any]]]:
    return [(section, record) async for section, record in parts.person_data.export(person)]


def valid(section: str, record: dict[str, Any]) -> bool:
    item = {"$defs": SCHEMA["$defs"], **SCHEMA["properties"][section]["items"]}
    return Draft202012Validator(item).is_valid(record)


def cells(settings: MemorySettings) -> list[tuple[str, str, str]]:
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


def item_ids(settings: MemorySettings, person: str) -> set[str]:
    engine = create_engine(database.sync_url(settings, "memory"))
    try:
        with engine.connect() as db:
            return set(db.scalars(select(memory_items.c.id).where(memory_items.c.person == person)))
    finally:
        engine.dispose()


def naming(found: list[tuple[str, str, str]], person: str, ids: set[str]) -> list[str]:
    """The cells that hold the person or an id of one of their items, in any column."""
    return [
        f"{table}.{column}"
        for table, column, value in found
        if person in value or any(item_id in value for item_id in ids)
    ]


async def vector_ids(parts: Memory, person: str) -> set[str]:
    return {point.id for point in await parts.vectors.scroll(person)}


async def test_the_export_holds_what_the_memory_page_lists_of_the_person_alone(
    opened: Memory,
) -> None:
    ann, bob = new_person("ann"), new_person("bob")
    await fill(opened, ann, CAT)
    await fill(opened, bob, DOG)

    records = await exported(opened, ann)
    assert [section for section, _ in records] == ["remembered"] * 3 + ["told"] * 2
    assert all(valid(section, record) for section, record in records)
    remembered = [record for section, record in records if section == "remembered"]
    assert [r["text"] for r in remembered] == [
        *sorted(i.text for i in (await opened.page.facts(ann)) if "17*23" not in i.text),
        "I worked out 17*23 = 391.",
    ]
    assert [r["remembered_at"] for r in remembered] == sorted(r["remembered_at"] for r in remembered)
    told_records = [record for section, record in records if section == "told"]
    assert told_records == [
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
    words = json.dumps(records)
    assert "basil" not in words, "a forgotten fact is not kept"
    assert CAT not in words, "the person's own messages are the session's conversation"
    assert "Rex" not in words and bob not in words
    assert not any(item_id in words for item_id in item_ids(opened_settings(opened), ann))


def opened_settings(parts: Memory) -> MemorySettings:
    return parts.person_data_settings  # type: ignore[attr-defined]
