"""Recall: the few items of one person's memory that answer a message.

Ranking (`memory.ranking`) scores every item in the person's recall: BM25 and dense similarity
fused, so it needs the whole set. Each replica keeps the person's ranking index in process and
keeps it current from the person's memory version (`memory.store`): a recall reads that one
small row, and when the version moved, only the items changed since, with their vectors fetched
by id from the vector store. So a forget on any replica counts at the next recall on every one,
and a capture costs the next recall a few items, not the whole memory. Recall reads in
transactions that take no lock, so it never waits behind capture's writes.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from numpy.typing import NDArray

from memory.queries import RecentQueries
from memory.ranking import MAX_RECALL, MemoryCandidate, RecallIndex, RecallQuery
from memory.store import TOLD, Item, MemoryStore, MemoryVersion, PersonMemory
from memory.told import fits
from violet.told import may_recall_told
from violet.vectors import StoredVectors, VectorStore

log = logging.getLogger(__name__)

# People whose ranking index stays in memory; the least recently recalled go first.
CACHED_PEOPLE = 256
# Told records ranked before the kind a question names puts some of them first.
TOLD_CONSIDERED = 6
# The best this many are ordered first; the rest only when those run out.
_FIRST_BEST = 32
# Memories readied ahead of a recall (`Recaller.prepare`): how many load at once, and how many
# may wait. Beyond that a hello readies nothing (in a reconnect storm, say): the person's first
# recall loads their memory itself.
PREPARING_AT_ONCE = 2
PREPARING_AT_MOST = 64


@dataclass(frozen=True)
class Recalled:
    item: Item
    score: float


@dataclass
class _PersonIndex:
    """One person's memory as recall keeps it: every item in recall, and the ranking index of
    those whose vectors are stored."""

    epoch: str
    version: int
    items: dict[str, Item] = field(default_factory=dict)
    ranking: RecallIndex = field(default_factory=RecallIndex)
    # Items in recall whose vectors were not stored yet (a turn captured while its query's vector
    # was not at hand, a restore under way, or lost ones the nightly pass repairs): ranked on
    # their words meanwhile, and asked for again whenever the version moves.
    waiting: set[str] = field(default_factory=set)
    # The turns read after each item, and the facts made from each turn.
    followers: dict[str, set[str]] = field(default_factory=dict)
    facts_of_turn: dict[str, set[str]] = field(default_factory=dict)

    def current(self, version: MemoryVersion) -> bool:
        # Storing an item's vectors advances the version (`MemoryStore.vectors_stored`): items
        # still waiting are asked for when it moves, not at every recall.
        return (self.epoch, self.version) == (version.epoch, version.version)

    def follows(self, version: MemoryVersion) -> bool:
        """Whether the changes since this index are still listed."""
        return self.epoch == version.epoch and self.version >= version.listed_from

    def apply(
        self,
        version: int,
        changed: Collection[str],
        rows: Sequence[Item],
        stored: Iterable[StoredVectors],
    ) -> None:
        """Brings the index to `version`: `changed` names every item changed since (those
        missing from `rows` are deleted), `stored` holds the vectors of the changed and waiting
        items found in the vector store."""
        now = {row.id: row for row in rows if row.active}
        touched = set(changed) | self.waiting
        # An item is read beside its neighbours: the one before it and its follower.
        neighbours = self._previous_of(touched)
        for item_id in touched:
            self._unlink(item_id)
        for item in now.values():
            self._link(item)
        neighbours |= self._previous_of(touched)
        neighbours |= {f for item_id in touched for f in self.followers.get(item_id, ())}
        touched |= neighbours
        fetched = {point.id: point for point in stored}
        self.waiting.clear()
        vectors = {item_id: self._vectors_of(item_id, fetched.get(item_id)) for item_id in touched}
        for item_id in sorted(touched):
            self._index(item_id, vectors)
        self.version = version

    def _previous_of(self, item_ids: Iterable[str]) -> set[str]:
        found = (self.items.get(item_id) for item_id in item_ids)
        return {item.previous_item for item in found if item and item.previous_item}

    def _unlink(self, item_id: str) -> None:
        item = self.items.pop(item_id, None)
        if item is None:
            return
        if item.previous_item:
            self.followers.get(item.previous_item, set()).discard(item.id)
        for turn in item.turn_items:
            self.facts_of_turn.get(turn, set()).discard(item.id)

    def _link(self, item: Item) -> None:
        self.items[item.id] = item
        if item.previous_item:
            self.followers.setdefault(item.previous_item, set()).add(item.id)
        for turn in item.turn_items:
            self.facts_of_turn.setdefault(turn, set()).add(item.id)

    def _vectors_of(self, item_id: str, stored: StoredVectors | None) -> _Vectors | None:
        """The item's vectors: just fetched, or (its row changed, not its vectors, or a
        neighbour's did) those indexed already."""
        if stored is not None:
            return _Vectors(stored.vector, stored.context_vector)
        indexed = self.ranking.get(item_id)
        if indexed is not None and indexed.vector is not None:
            return _Vectors(indexed.vector, indexed.context_vector)
        return None

    def _follower(self, item_id: str) -> Item | None:
        """The first turn read after the item, among those in recall."""
        found = [self.items[f] for f in self.followers.get(item_id, ()) if f in self.items]
        return min(found, key=lambda f: (f.created_at, f.id), default=None)

    def _index(self, item_id: str, touched: Mapping[str, _Vectors | None]) -> None:
        item = self.items.get(item_id)
        if item is None:
            self.ranking.remove(item_id)
            return
        own = touched[item_id]
        if own is None:
            # Ranked on its words until its vectors are stored, and asked for at each recall.
            self.waiting.add(item_id)
        previous = self.items.get(item.previous_item or "")
        follower = self._follower(item_id)
        after = (touched[follower.id] if follower and follower.id in touched else None) or (
            self._vectors_of(follower.id, None) if follower else None
        )
        self.ranking.put(
            MemoryCandidate(
                id=item.id,
                text=item.text,
                speaker=item.speaker,
                created_at=item.created_at,
                vector=own.vector if own else None,
                previous_text=previous.text if previous else None,
                context_vector=own.context if own else None,
                previous_id=previous.id if previous else None,
                next_id=follower.id if follower else None,
                next_context_vector=after.context if after else None,
            )
        )


@dataclass(frozen=True)
class _Vectors:
    vector: NDArray[np.float32]
    context: NDArray[np.float32] | None


class Recaller:
    def __init__(self, store: MemoryStore, vectors: VectorStore, queries: RecentQueries) -> None:
        self._store = store
        self._vectors = vectors
        self._queries = queries
        self._indexes: OrderedDict[str, _PersonIndex] = OrderedDict()
        # One update of a person's index at a time, and no ranking on it while one runs.
        self._locks: dict[str, asyncio.Lock] = {}
        # Updates started by `prepare`, one per person at most.
        self._preparing: dict[str, asyncio.Task[None]] = {}
        self._preparing_slots = asyncio.Semaphore(PREPARING_AT_ONCE)

    async def recall(self, person: str, query: str, k: int) -> list[Recalled]:
        """The k items (at most `MAX_RECALL`) about the person that best answer `query`, best
        first. Told records are never among them."""
        return (await self.recall_with_told(person, query, k, 0))[0]

    async def recall_with_told(
        self, person: str, query: str, k: int, told: int
    ) -> tuple[list[Recalled], list[Recalled]]:
        """The k best items about the person, and beside them the `told` best told records
        (`memory.told`), each best first. Told records come only for words that may be
        answered by them (`violet.told.may_recall_told`): none for a question about the
        person, whatever `told` asks."""
        if not 1 <= k <= MAX_RECALL:
            raise ValueError(f"recall gives 1 to {MAX_RECALL} items, not {k}")
        if not query.strip():
            return [], []
        told = told if may_recall_told(query) else 0
        # The update runs to its end even when this recall is given up (its deadline passed):
        # a long memory loading on a replica new to the person is ready for the next try.
        vector, index = await asyncio.gather(
            self._queries.vector(person, query), asyncio.shield(self._update(person))
        )
        while index is not None:
            async with self._lock(person):
                # Ranked only as the index still stands: not one another update replaced.
                if self._indexes.get(person) is index:
                    if not len(index.ranking):
                        return [], []
                    scores = await asyncio.to_thread(
                        index.ranking.scores, RecallQuery(query, vector)
                    )
                    items, records = _best(index, scores, k, TOLD_CONSIDERED if told else 0)
                    return items, _fitting_first(query, records)[:told]
            index = await asyncio.shield(self._update(person))
        return [], []

    def prepare(self, person: str) -> None:
        """Brings the person's index up to date in the background (as they open the app), so
        that their first recall finds it loaded. One is under way per person at most."""
        if person in self._preparing or len(self._preparing) >= PREPARING_AT_MOST:
            return
        task = asyncio.create_task(self._prepared(person))
        self._preparing[person] = task
        task.add_done_callback(lambda _: self._preparing.pop(person, None))

    async def _prepared(self, person: str) -> None:
        try:
            async with self._preparing_slots:
                await self._update(person)
        except Exception:  # only a head start is lost: the first recall loads the memory itself
            log.warning("a memory could not be readied ahead of its recall", exc_info=True)

    async def drop(self, person: str) -> None:
        """Lets go of what this replica keeps of the person: their ranking index and the vectors
        of their recent queries. An update under way ends first; any later one finds no memory
        of theirs unless it is new."""
        async with self._lock(person):
            self._forget(person)
        self._queries.drop(person)
        lock = self._locks.get(person)
        if lock is not None and not lock.locked():
            del self._locks[person]

    async def _update(self, person: str) -> _PersonIndex | None:
        async with self._lock(person):
            return await self._index_of(person)

    def _lock(self, person: str) -> asyncio.Lock:
        return self._locks.setdefault(person, asyncio.Lock())

    async def _index_of(self, person: str) -> _PersonIndex | None:
        cached = self._indexes.get(person)
        read = await self._store.read(person, partial(_read_for, cached=cached))
        if read is None:  # no memory, or all of it forgotten
            self._forget(person)
            return None
        version, changed, rows = read
        if cached and cached.current(version):
            self._indexes.move_to_end(person)
            return cached
        if cached is None or changed is None:
            index = _PersonIndex(version.epoch, version.version)
            changed = {row.id for row in rows}
            stored = await self._vectors.scroll(person)
        else:
            index = cached
            stored = await self._vectors.retrieve(person, [row.id for row in rows if row.active])
        await asyncio.to_thread(index.apply, version.version, changed, rows, stored)
        self._keep(person, index)
        return index

    def _keep(self, person: str, index: _PersonIndex) -> None:
        self._indexes[person] = index
        self._indexes.move_to_end(person)
        while len(self._indexes) > CACHED_PEOPLE:
            evicted, _ = self._indexes.popitem(last=False)
            lock = self._locks.get(evicted)
            if lock is not None and not lock.locked():
                del self._locks[evicted]

    def _forget(self, person: str) -> None:
        self._indexes.pop(person, None)


async def _read_for(
    memory: PersonMemory, cached: _PersonIndex | None
) -> tuple[MemoryVersion, set[str] | None, list[Item]] | None:
    """What the person's index needs, read in one transaction (under the person's lock, so
    `cached` does not change meanwhile): the version, and the items changed since `cached` with
    those it still waits for, or, with None for the changes, every item in recall. None when
    the person has no memory."""
    # With an index, its changes come in the same read as the version.
    found = await memory.version_and_changes(cached.version) if cached else None
    version = found.version if found else await memory.version()
    if version is None:
        return None
    if cached and cached.current(version):
        return version, set(), []
    if cached and found and cached.follows(version):
        rows = found.items
        waiting = cached.waiting - {row.id for row in rows}
        rows += await memory.items(waiting) if waiting else []
        return version, set(found.changed), rows
    return version, None, await memory.active_items()


def _best(
    index: _PersonIndex, scores: NDArray[np.float64], k: int, told: int
) -> tuple[list[Recalled], list[Recalled]]:
    """The k best items about the person, each saying something new (a fact and the turn it
    was made from say the same, so only the better of the two is kept), and the `told` best
    told records, apart."""
    chosen: list[Recalled] = []
    chosen_told: list[Recalled] = []
    covered: set[str] = set()
    candidates = index.ranking.candidates
    for seen, position in enumerate(_best_first(scores, candidates, index.items)):
        # A told record below the first best is not worth sorting the rest for.
        if len(chosen) == k and (len(chosen_told) == told or seen >= _FIRST_BEST):
            break
        item = index.items[candidates[position].id]
        if item.kind == TOLD:
            if len(chosen_told) < told:
                chosen_told.append(Recalled(item, float(scores[position])))
            continue
        if item.id in covered or len(chosen) == k:
            continue
        chosen.append(Recalled(item, float(scores[position])))
        covered.update((item.id, *item.turn_items))
        covered.update(index.facts_of_turn.get(item.id, ()))
    return chosen, chosen_told


def _fitting_first(question: str, records: list[Recalled]) -> list[Recalled]:
    """Told records of the kind the question names (a page, a document, a sum) first, each
    group best first."""
    return sorted(records, key=lambda r: not fits(question, r.item))


def _best_first(
    scores: NDArray[np.float64], candidates: Sequence[MemoryCandidate], items: Mapping[str, Item]
) -> Iterator[int]:
    """Positions by score, best first; equal scores oldest first (then by id), as the items
    come from SQL. Only the first few are sorted unless more are asked for."""

    def order(positions: Iterable[int]) -> list[int]:
        def key(position: int) -> tuple[float, object, str]:
            item = items[candidates[position].id]
            return (-float(scores[position]), item.created_at, item.id)

        return sorted(positions, key=key)

    if len(scores) > _FIRST_BEST:
        threshold = np.partition(scores, len(scores) - _FIRST_BEST)[len(scores) - _FIRST_BEST]
        first = np.flatnonzero(scores >= threshold)
        yield from order(int(p) for p in first)
        rest = np.flatnonzero(scores < threshold)
        yield from order(int(p) for p in rest)
    else:
        yield from order(range(len(scores)))
