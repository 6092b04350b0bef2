"""Recall: the few items of one person's memory that answer a message.

Ranking (`memory.ranking`) scores every item in the person's recall: BM25 and dense similarity
fused, so it needs the whole set. The set is read from SQL on every call (so a forget on any
replica counts at once); its ranking index and vectors are kept in process while the set stays
the same, and vectors come from the vector store, filtered by the person.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory.queries import RecentQueries
from memory.ranking import MAX_RECALL, MemoryCandidate, RecallIndex, RecallQuery
from memory.store import Item, MemoryStore
from violet.vectors import StoredVectors, VectorStore

# People whose ranking index stays in memory; the least recently recalled go first.
CACHED_PEOPLE = 256


@dataclass(frozen=True)
class Recalled:
    item: Item
    score: float


@dataclass(frozen=True)
class _Index:
    fingerprint: str
    items: list[Item]
    ranking: RecallIndex


class Recaller:
    def __init__(self, store: MemoryStore, vectors: VectorStore, queries: RecentQueries) -> None:
        self._store = store
        self._vectors = vectors
        self._queries = queries
        self._indexes: OrderedDict[str, _Index] = OrderedDict()
        # Bumped by drop(): an index built across a change is used once, not kept.
        self._generation: dict[str, int] = {}

    async def recall(self, person: str, query: str, k: int) -> list[Recalled]:
        """The k items (at most `MAX_RECALL`) that best answer `query`, best first."""
        if not 1 <= k <= MAX_RECALL:
            raise ValueError(f"recall gives 1 to {MAX_RECALL} items, not {k}")
        if not query.strip():
            return []
        vector, index = await asyncio.gather(
            self._queries.vector(person, query), self._index_of(person)
        )
        if not index.items:
            return []
        scores = await asyncio.to_thread(index.ranking.scores, RecallQuery(query, vector))
        return _best(index.items, scores, k)

    def drop(self, person: str) -> None:
        """Forgets the cached index (after the person's memory changed on this replica)."""
        self._indexes.pop(person, None)
        self._generation[person] = self._generation.get(person, 0) + 1

    async def _index_of(self, person: str) -> _Index:
        generation = self._generation.get(person, 0)
        async with self._store.of(person) as memory:
            ids = await memory.active_ids()
        cached = self._indexes.get(person)
        if cached and cached.fingerprint == _fingerprint(ids):
            self._indexes.move_to_end(person)
            return cached
        async with self._store.of(person) as memory:
            items = await memory.active_items()
        stored = await self._vectors.scroll(person)
        fingerprint = _fingerprint(sorted(item.id for item in items))
        index = await asyncio.to_thread(_build, fingerprint, items, stored)
        complete = len(index.items) == len(items)  # else an item still waits for its vectors
        if complete and generation == self._generation.get(person, 0):
            self._indexes[person] = index
            while len(self._indexes) > CACHED_PEOPLE:
                self._indexes.popitem(last=False)
        return index


def _fingerprint(ids: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _build(fingerprint: str, items: Sequence[Item], stored: Sequence[StoredVectors]) -> _Index:
    vectors = {point.id: point for point in stored}
    texts = {item.id: item.text for item in items}
    # An item whose vectors are not stored yet (a restore under way, or lost ones the nightly
    # pass repairs) is left out.
    indexed = [item for item in items if item.id in vectors]
    candidates = [
        MemoryCandidate(
            id=item.id,
            text=item.text,
            speaker=item.speaker,
            created_at=item.created_at,
            vector=vectors[item.id].vector,
            # Only a turn still in recall is read with the next one.
            previous_text=texts.get(item.previous_item or ""),
            context_vector=vectors[item.id].context_vector,
        )
        for item in indexed
    ]
    return _Index(fingerprint, indexed, RecallIndex(candidates))


def _best(items: Sequence[Item], scores: np.ndarray, k: int) -> list[Recalled]:
    """The k best, each saying something new: a fact and the turn it was made from say the
    same, so only the better of the two is kept."""
    chosen: list[Recalled] = []
    covered: set[str] = set()
    for i in np.argsort(-scores, kind="stable"):
        item = items[int(i)]
        if item.id in covered:
            continue
        chosen.append(Recalled(item, float(scores[i])))
        covered.update((item.id, *item.turn_items))
        covered.update(other.id for other in items if item.id in other.turn_items)
        if len(chosen) == k:
            break
    return chosen
