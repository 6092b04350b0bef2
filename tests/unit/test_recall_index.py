"""A person's recall index kept current change by change ranks exactly as one read anew: items
come, leave and come back, and each turn is read beside the turn before it and its follower."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory.ranking import RecallQuery
from memory.recall import _best, _PersonIndex
from memory.store import FACT, TURN, Item
from violet.vectors import StoredVectors

DIM = 8
START = datetime(2024, 1, 1, tzinfo=UTC)
WORDS = ["cat", "tea", "paris", "piano", "river", "may", "book", "sister", "yesterday", "week"]
QUERIES = ["When did Ana see her sister?", "piano by the river", "Ben and the cat", "book"]


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


class Memory:
    """What SQL and the vector store hold of one person, changed at random."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.items: dict[str, Item] = {}
        self.vectors: dict[str, StoredVectors] = {}
        self.last_turn: str | None = None
        self.made = 0

    def item(self, kind: str, previous: str | None, turns: tuple[str, ...]) -> Item:
        self.made += 1
        text = " ".join(self.rng.choice(WORDS, size=int(self.rng.integers(1, 6))))
        at = START + timedelta(minutes=self.made)
        return Item(
            f"item-{self.made:03d}", "ann", kind, text, "you", text,
            str(self.rng.choice(["Ana", "Ben"])), (self.made,), turns, previous,
            None, None, at, at,
        )  # fmt: skip

    def store_vectors(self, item_id: str) -> None:
        context = unit(self.rng.normal(size=DIM)) if self.rng.random() < 0.7 else None
        self.vectors[item_id] = StoredVectors(
            item_id, self.items[item_id].kind, unit(self.rng.normal(size=DIM)), context
        )

    def followers(self, item_id: str) -> list[str]:
        return [i.id for i in self.items.values() if i.previous_item == item_id]

    def change(self) -> set[str]:
        """One change, as capture, the page and the nightly pass make them; the ids changed."""
        action = self.rng.random()
        if not self.items or action < 0.45:
            previous = self.last_turn if self.rng.random() < 0.8 else None
            turn = self.item(TURN, previous, ())
            self.items[turn.id] = turn
            self.last_turn = turn.id
            if self.rng.random() < 0.9:  # else its vectors come later
                self.store_vectors(turn.id)
            if self.rng.random() < 0.3:
                fact = self.item(FACT, None, (turn.id,))
                self.items[fact.id] = fact
                self.store_vectors(fact.id)
                return {turn.id, fact.id}
            return {turn.id}
        item_id = str(self.rng.choice(sorted(self.items)))
        item = self.items[item_id]
        if action < 0.6:
            self.store_vectors(item_id)  # vectors that were missing, or stored again
            return {item_id}
        if action < 0.9:  # a forget or a restore: the followers are read again without it
            forgotten = None if item.forgotten_at else item.updated_at
            self.items[item_id] = replace(item, forgotten_at=forgotten)
            again = [f for f in self.followers(item_id) if f in self.vectors]
            for follower in again:
                self.store_vectors(follower)
            return {item_id, *again}
        del self.items[item_id]  # deleted for good
        self.vectors.pop(item_id, None)
        return {item_id}

    def read_anew(self, version: int) -> _PersonIndex:
        index = _PersonIndex("epoch", 0)
        active = [item for item in self.items.values() if item.active]
        stored = [self.vectors[i.id] for i in active if i.id in self.vectors]
        index.apply(version, {item.id for item in active}, active, stored)
        return index


def catch_up(index: _PersonIndex, memory: Memory, version: int, changed: set[str]) -> None:
    """What recall does when the version moved: read the changed and waiting items only."""
    wanted = changed | index.waiting
    rows = [memory.items[i] for i in sorted(wanted) if i in memory.items]
    stored = [memory.vectors[r.id] for r in rows if r.active and r.id in memory.vectors]
    index.apply(version, changed, rows, stored)


def assert_ranks_alike(kept: _PersonIndex, anew: _PersonIndex, rng: np.random.Generator) -> None:
    assert kept.items.keys() == anew.items.keys()
    assert kept.waiting == anew.waiting
    if not len(anew.ranking):
        assert not len(kept.ranking)
        return
    for text in QUERIES:
        query = RecallQuery(text, unit(rng.normal(size=DIM)))
        scores = []
        for index in (kept, anew):
            ids = [c.id for c in index.ranking.candidates]
            scores.append(dict(zip(ids, index.ranking.scores(query), strict=True)))
        assert scores[0].keys() == scores[1].keys()
        ids = sorted(scores[1])
        np.testing.assert_allclose(
            [scores[0][i] for i in ids], [scores[1][i] for i in ids], rtol=1e-6, atol=1e-6
        )
        for index, by_id in zip((kept, anew), scores, strict=True):
            assert len(by_id) == len(index.ranking)
        best = [
            [r.item.id for r in _best(index, index.ranking.scores(query), 5, 0)[0]]
            for index in (kept, anew)
        ]
        assert best[0] == best[1]


@pytest.mark.parametrize("seed", range(8))
def test_an_index_kept_current_ranks_as_one_read_anew(seed: int) -> None:
    rng = np.random.default_rng(seed)
    memory = Memory(rng)
    kept = _PersonIndex("epoch", 0)
    for version in range(1, 121):
        catch_up(kept, memory, version, memory.change())
        if version % 8 == 0:
            assert_ranks_alike(kept, memory.read_anew(version), rng)
    assert_ranks_alike(kept, memory.read_anew(121), rng)


def test_a_turn_is_read_beside_the_turn_before_it_and_its_follower() -> None:
    memory = Memory(np.random.default_rng(3))
    first = memory.item(TURN, None, ())
    second = memory.item(TURN, first.id, ())
    for item in (first, second):
        memory.items[item.id] = item
        memory.store_vectors(item.id)
    index = _PersonIndex("epoch", 0)
    catch_up(index, memory, 1, {first.id})
    assert index.ranking.get(first.id).next_id is None  # type: ignore[union-attr]

    catch_up(index, memory, 2, {second.id})

    before, after = index.ranking.get(first.id), index.ranking.get(second.id)
    assert before is not None and after is not None
    assert before.next_id == second.id
    assert before.next_context_vector is memory.vectors[second.id].context_vector
    assert after.previous_id == first.id and after.previous_text == first.text
