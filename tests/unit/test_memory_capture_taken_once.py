"""Capture as the session's sender delivers it: at least once and in order, so taken once;
recallable the moment it is stored, whatever the background pass has still to do; bounded."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from memory import capture, runtime
from memory.capture import Backlogged
from memory.runtime import Memory, open_memory
from memory.settings import MemorySettings
from memory.store import TURN, PersonMemory
from tests.support import memory as memory_support
from tests.support.memory import ScriptedOrigin, said
from violet import fallbacks
from violet.clock import utc_now
from violet.embedder import Embedder, get_embedder

settings = memory_support.settings
memory = memory_support.memory


async def turn_items(memory: Memory, person: str) -> list[str]:
    items = await memory.store.read(person, lambda m: m.active_items(TURN))
    return [item.text for item in items]


async def test_a_capture_sent_again_stores_nothing_and_answers_as_the_first(
    memory: Memory,
) -> None:
    turn = said("My locker number is 4817", 5)
    assert await memory.capturer.accept("ann", turn)
    assert not await memory.capturer.accept("ann", turn)
    # Sent again after a later one arrived, too: captures come in order.
    assert await memory.capturer.accept("ann", said("I like tea", 7))
    assert not await memory.capturer.accept("ann", turn)
    await memory.capturer.settled("ann")

    assert sorted(await turn_items(memory, "ann")) == ["I like tea", "My locker number is 4817"]
    facts = [item.text for item in await memory.page.facts("ann")]
    assert facts.count("My locker number is 4817") == 1


async def test_the_same_seqs_of_another_person_are_theirs(memory: Memory) -> None:
    turn = said("My locker number is 4817", 5)
    assert await memory.capturer.accept("ann", turn)
    assert await memory.capturer.accept("bob", turn)


async def test_a_turn_answered_before_the_person_forgot_everything_is_not_taken(
    memory: Memory,
) -> None:
    owed = replace(said("My PIN is 1234", 3), answered_at=utc_now() - timedelta(seconds=5))
    await memory.page.forget_everything("ann")
    assert not await memory.capturer.accept("ann", owed)

    later = replace(said("I like tea", 5), answered_at=utc_now())
    assert await memory.capturer.accept("ann", later)
    await memory.capturer.settled("ann")
    assert await turn_items(memory, "ann") == ["I like tea"]


async def test_a_turn_is_recallable_the_moment_it_is_stored_while_its_pass_waits(
    settings: MemorySettings,
) -> None:
    model = ScriptedOrigin(lambda: [])
    model.gate.clear()  # the origin call does not answer: the pass waits on it
    async with open_memory(settings, model=model) as memory:
        await memory.recaller.recall("ann", "My locker number is 4817", 3)
        assert await memory.capturer.accept("ann", said("My locker number is 4817", 1))

        recalled = await memory.recaller.recall("ann", "what is my locker number?", 3)
        assert [r.item.text for r in recalled] == ["My locker number is 4817"]
        (stored,) = await memory.vectors.scroll("ann")  # its meaning too, not only its words
        assert stored.kind == TURN
        model.gate.set()
        await memory.capturer.settled("ann")


class BusyEmbedder:
    """The real embedder, as if every query would wait longer than recall waits; texts to be
    stored are held until `release` is set."""

    def __init__(self, embedder: Embedder) -> None:
        self.dim = embedder.dim
        self._embedder = embedder
        self.release = threading.Event()
        self.stored: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.release.wait()
        self.stored += texts
        return self._embedder.embed(texts)

    def embed_as_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.release.wait()
        self.stored += texts
        return self._embedder.embed_as_queries(texts)

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("a query is not embedded while the engine is too busy")

    def query_wait_s(self, text: str, ahead: int = 0) -> float:
        return 60.0


@pytest.mark.expects_fallbacks
async def test_with_the_embedder_too_busy_recall_ranks_on_words_and_the_pass_embeds_later(
    settings: MemorySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = BusyEmbedder(get_embedder())
    monkeypatch.setattr(runtime, "get_embedder", lambda: busy)
    before = fallbacks.counts()["recall_by_words"]
    async with open_memory(settings, model=ScriptedOrigin(lambda: [])) as memory:
        said_first = said("My locker number is 4817", 1)
        await memory.recaller.recall("ann", said_first.person_message, 3)
        assert await memory.capturer.accept("ann", said_first)
        assert await memory.capturer.accept("ann", said("The weather was lovely today", 3))

        # Stored on words alone: recallable before any vector is made.
        recalled = await memory.recaller.recall("ann", "what is my locker number?", 3)
        assert recalled[0].item.text == "My locker number is 4817"
        assert await memory.vectors.scroll("ann") == []

        busy.release.set()
        await memory.capturer.settled("ann")
        texts = {point.id for point in await memory.vectors.scroll("ann")}
        items = await memory.store.read("ann", lambda m: m.active_items(TURN))
        assert {item.id for item in items} <= texts  # both turns have their vectors now
        assert "My locker number is 4817" in busy.stored
    assert fallbacks.counts()["recall_by_words"] - before == 2


async def test_past_the_bound_of_waiting_turns_a_capture_is_refused_and_nothing_stored(
    settings: MemorySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "WAITING_TURNS_AT_MOST", 2)
    model = ScriptedOrigin(lambda: [])
    model.gate.clear()
    async with open_memory(settings, model=model) as memory:
        assert await memory.capturer.accept("ann", said("I like tea", 1))
        assert await memory.capturer.accept("ann", said("I like cats", 3))
        with pytest.raises(Backlogged):
            await memory.capturer.accept("ann", said("I live in Lyon", 5))
        assert sorted(await turn_items(memory, "ann")) == ["I like cats", "I like tea"]

        model.gate.set()
        await memory.capturer.settled("ann")
        # Sent again once the pass caught up: taken, in its place.
        assert await memory.capturer.accept("ann", said("I live in Lyon", 5))
        await memory.capturer.settled("ann")
        assert await memory.store.read("ann", PersonMemory.waiting_turns) == 0


async def test_two_deliveries_of_one_capture_at_once_store_it_once(memory: Memory) -> None:
    turn = said("My locker number is 4817", 5)
    taken = await asyncio.gather(*(memory.capturer.accept("ann", turn) for _ in range(2)))
    assert sorted(taken) == [False, True]
    await memory.capturer.settled("ann")
    assert await turn_items(memory, "ann") == ["My locker number is 4817"]
