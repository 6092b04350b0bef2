"""Recall on two replicas of one database: each keeps its index current from the person's memory
version, reading only what changed, and never waits behind a capture's write."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import pytest

from memory import recall
from memory.queries import RecentQueries
from memory.recall import Recaller
from memory.runtime import Memory
from memory.settings import MemorySettings
from memory.store import MemoryStore, PersonMemory, open_memory_database
from tests.support import memory as memory_support
from tests.support.memory import captured, said
from violet import database
from violet.embedder import get_embedder
from violet.vectors import StoredVectors, VectorStore

settings = memory_support.settings
memory = memory_support.memory


@dataclass
class CountingVectors:
    """The vector store, counting what recall asks of it."""

    store: VectorStore
    scrolls: int = 0
    retrieved: list[list[str]] = field(default_factory=list)

    async def scroll(self, person: str) -> list[StoredVectors]:
        self.scrolls += 1
        return await self.store.scroll(person)

    async def retrieve(self, person: str, ids: Sequence[str]) -> list[StoredVectors]:
        self.retrieved.append(sorted(ids))
        return await self.store.retrieve(person, ids)


@pytest.fixture
async def other(settings: MemorySettings, memory: Memory) -> AsyncIterator[Recaller]:
    """Recall on a second replica: its own engine on the same database, the same vectors."""
    db = open_memory_database(database.service_database(settings, "memory"))
    yield Recaller(MemoryStore(db), memory.vectors, RecentQueries(get_embedder()))
    await db.dispose()


async def texts(recaller: Recaller, person: str, query: str) -> list[str]:
    return [r.item.text for r in await recaller.recall(person, query, 3)]


async def test_a_forget_on_one_replica_counts_at_the_next_recall_on_another(
    memory: Memory, other: Recaller
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1), said("I like tea", 3))
    assert any("Miso" in text for text in await texts(other, "ann", "what is my cat called?"))
    fact = next(f for f in await memory.page.facts("ann") if "Miso" in f.text)
    await memory.page.forget("ann", fact.id)
    assert not any("Miso" in t for t in await texts(other, "ann", "what is my cat called?"))
    await memory.page.restore("ann", fact.id)
    assert any("Miso" in t for t in await texts(other, "ann", "what is my cat called?"))


async def test_a_capture_on_one_replica_is_recalled_by_another_that_had_its_index(
    memory: Memory, other: Recaller
) -> None:
    await captured(memory, "ann", said("I like tea", 1))
    assert await texts(other, "ann", "what is my cat called?")
    await captured(memory, "ann", said("My cat is called Miso", 3))
    assert any("Miso" in t for t in await texts(other, "ann", "what is my cat called?"))


async def test_a_new_value_replaces_the_old_one_on_the_other_replica(
    memory: Memory, other: Recaller
) -> None:
    await captured(memory, "ann", said("I live in Paris", 1))
    assert any("Paris" in t for t in await texts(other, "ann", "where do I live?"))
    await captured(memory, "ann", said("I live in Lyon", 3))
    recalled = await texts(other, "ann", "where do I live?")
    assert any("Lyon" in t for t in recalled)
    assert not any("Paris" in t for t in recalled)


async def test_forgetting_everything_empties_the_other_replica_and_a_new_memory_starts_clean(
    memory: Memory, other: Recaller
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    assert await texts(other, "ann", "cat")
    await memory.page.forget_everything("ann")
    assert await texts(other, "ann", "cat") == []
    await captured(memory, "ann", said("My dog is called Pixel", 1))
    recalled = await texts(other, "ann", "what is my pet called?")
    assert recalled
    assert not any("Miso" in t for t in recalled)


async def test_a_recall_reads_no_vectors_when_nothing_changed_and_only_the_changed_ones_after(
    memory: Memory, settings: MemorySettings
) -> None:
    await captured(memory, "ann", said("I like tea", 1), said("My cat is called Miso", 3))
    counting = CountingVectors(memory.vectors)
    db = open_memory_database(database.service_database(settings, "memory"))
    recaller = Recaller(MemoryStore(db), counting, RecentQueries(get_embedder()))  # type: ignore[arg-type]
    try:
        await recaller.recall("ann", "cat", 3)
        await recaller.recall("ann", "tea", 3)
        assert (counting.scrolls, counting.retrieved) == (1, [])
        await captured(memory, "ann", said("I take my coffee black", 5))
        await recaller.recall("ann", "coffee", 3)
        active = await memory.store.read("ann", PersonMemory.active_items)
        everything = {item.id for item in active}
        assert counting.scrolls == 1
        assert len(counting.retrieved) == 1
        assert 0 < len(counting.retrieved[0]) < len(everything)
        assert any("coffee" in t for t in await texts(recaller, "ann", "coffee"))
    finally:
        await db.dispose()


async def test_recall_does_not_wait_for_a_capture_holding_the_write_lock(
    memory: Memory, other: Recaller
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    written, recalled = threading.Event(), threading.Event()

    async def write_until_recalled(writing: PersonMemory) -> None:
        await writing.record_changes(["an-item-being-written"])
        written.set()
        recalled.wait(10)  # on the worker thread, holding the write lock

    writer = asyncio.create_task(memory.store.run("ann", write_until_recalled))
    try:
        assert await asyncio.to_thread(written.wait, 10)
        # On SQLite the writer holds the database's write lock until it commits: a recall that
        # queued behind it would wait out the busy timeout and fail.
        assert any("Miso" in t for t in await texts(other, "ann", "what is my cat called?"))
        assert not writer.done()
    finally:
        recalled.set()
        await writer


@dataclass
class SlowVectors(CountingVectors):
    """A vector store whose scroll takes a while, like a long memory loading."""

    delay_s: float = 0.3

    async def scroll(self, person: str) -> list[StoredVectors]:
        await asyncio.sleep(self.delay_s)
        return await super().scroll(person)


@pytest.fixture
async def slow_replica(
    settings: MemorySettings, memory: Memory
) -> AsyncIterator[tuple[Recaller, SlowVectors]]:
    """A replica that has not seen anyone yet, on a slow vector store."""
    vectors = SlowVectors(memory.vectors)
    db = open_memory_database(database.service_database(settings, "memory"))
    yield Recaller(MemoryStore(db), vectors, RecentQueries(get_embedder())), vectors  # type: ignore[arg-type]
    await db.dispose()


async def test_prepare_loads_the_memory_before_the_first_recall(
    memory: Memory, slow_replica: tuple[Recaller, SlowVectors]
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    recaller, vectors = slow_replica
    recaller.prepare("ann")
    recaller.prepare("ann")  # a second hello while the first loads queues nothing more
    await asyncio.sleep(vectors.delay_s * 3)
    assert vectors.scrolls == 1
    assert any("Miso" in t for t in await texts(recaller, "ann", "what is my cat called?"))
    assert (vectors.scrolls, vectors.retrieved) == (1, [])


async def test_a_recall_given_up_while_memory_loads_leaves_it_loaded_for_the_next(
    memory: Memory, slow_replica: tuple[Recaller, SlowVectors]
) -> None:
    await captured(memory, "ann", said("My cat is called Miso", 1))
    recaller, vectors = slow_replica
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(recaller.recall("ann", "cat", 3), vectors.delay_s / 3)
    await asyncio.sleep(vectors.delay_s * 2)
    assert any("Miso" in t for t in await texts(recaller, "ann", "what is my cat called?"))
    assert vectors.scrolls == 1


async def test_beyond_the_readying_bound_a_hello_readies_nothing_and_recall_loads_itself(
    memory: Memory, slow_replica: tuple[Recaller, SlowVectors], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall, "PREPARING_AT_MOST", 1)
    await captured(memory, "ann", said("My cat is called Miso", 1))
    await captured(memory, "bob", said("My dog is called Rex", 1))
    recaller, vectors = slow_replica
    recaller.prepare("ann")
    recaller.prepare("bob")
    await asyncio.sleep(vectors.delay_s * 3)
    assert vectors.scrolls == 1
    assert any("Rex" in t for t in await texts(recaller, "bob", "what is my dog called?"))
    assert vectors.scrolls == 2
