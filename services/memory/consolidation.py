"""Consolidation: when a person has gone quiet, their facts are tidied.

- Duplicates merge: the same fact said again (the same words, the same subject and value, or
  vectors nearly the same) becomes one item, the newest, carrying every source.
- A newer fact supersedes an older one on the same subject with another value ("I moved to
  Lyon" supersedes "I live in Paris"), and the older one's turns leave recall with it.
Superseded items stay in SQL as history (`superseded_by`); only their vectors go.

The nightly sleep pass does the same for everyone, then compacts: forgotten items past the undo
window are deleted for good, and the vector store is brought in line with SQL.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory.capture import Capturer
from memory.indexing import Embeddings, reindex
from memory.provenance import normalise
from memory.recall import Recaller
from memory.store import FACT, Item, MemoryStore, now
from violet.vectors import VectorStore

log = logging.getLogger(__name__)

CONSOLIDATION_LEASE = timedelta(minutes=5)
# Cosine of two facts' vectors from which they say the same thing. The embedder's cosines are
# high for any two short sentences: "I prefer tea" and "I prefer coffee" are at 0.95, "I like
# green tea" and "I love green tea" at 0.99.
SAME_FACT_COSINE = 0.97
NEIGHBOURS = 4


@dataclass(frozen=True)
class Step:
    older: str
    newer: str
    merge: bool


@dataclass
class Sleep:
    people: int = 0
    merged: int = 0
    superseded: int = 0
    purged: int = 0
    repaired: int = 0
    failed: list[str] = field(default_factory=list)


def plan(facts: Sequence[Item], alike: Mapping[str, set[str]]) -> list[Step]:
    """Which facts give way to which. `alike` names, per fact, the facts whose vectors say the
    same. Facts joined by the same words, the same subject, or alike vectors form a group; its
    newest fact stays, the others merge into it (same value) or are superseded (another)."""
    by_id = {fact.id: fact for fact in facts}
    group = {fact.id: fact.id for fact in facts}

    def root(item_id: str) -> str:
        while group[item_id] != item_id:
            group[item_id] = group[group[item_id]]
            item_id = group[item_id]
        return item_id

    def join(a: str, b: str) -> None:
        group[root(a)] = root(b)

    # Facts said under different names (two people in one conversation) never meet.
    first_of: dict[tuple[str, str, str], str] = {}
    for fact in facts:
        for kind, value in (("words", normalise(fact.text)), ("subject", fact.subject or "")):
            if value:
                join(fact.id, first_of.setdefault((kind, fact.speaker, value), fact.id))
        for other in alike.get(fact.id, ()):
            if other in by_id and _compatible(fact, by_id[other]):
                join(fact.id, other)

    members: dict[str, list[Item]] = {}
    for fact in facts:
        members.setdefault(root(fact.id), []).append(fact)
    steps = []
    for grouped in members.values():
        newest = max(grouped, key=lambda fact: (fact.created_at, fact.updated_at))
        for fact in grouped:
            if fact is not newest:
                steps.append(Step(fact.id, newest.id, _same(fact, newest, alike)))
    return steps


def _compatible(a: Item, b: Item) -> bool:
    """Alike vectors join two facts only when no subject or speaker tells them apart."""
    return a.subject == b.subject and a.speaker == b.speaker


def _same(a: Item, b: Item, alike: Mapping[str, set[str]]) -> bool:
    if normalise(a.text) == normalise(b.text):
        return True
    if a.subject and a.subject == b.subject:
        return a.subject_value == b.subject_value
    return b.id in alike.get(a.id, ()) or a.id in alike.get(b.id, ())


class Consolidator:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        embeddings: Embeddings,
        capturer: Capturer,
        recaller: Recaller,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._embeddings = embeddings
        self._capturer = capturer
        self._recaller = recaller

    async def consolidate(self, person: str) -> list[Step]:
        """Makes the items of any turn still waiting, then merges and supersedes facts."""
        await self._capturer.extract(person)
        async with self._store.of(person) as memory:
            facts = await memory.active_items(FACT)
        steps = plan(facts, await self._alike(person, facts))
        left: list[str] = []
        async with self._store.of(person) as memory:
            for step in steps:
                left += await memory.supersede(step.older, step.newer, merge=step.merge)
            if not await memory.has_waiting_turns():
                await memory.drop_extracted_turns()
        if left:
            await asyncio.to_thread(self._vectors.delete, person, left)
            await reindex(self._store, person, self._embeddings, self._vectors, [], left)
            self._recaller.drop(person)
        return steps

    async def consolidate_when_quiet(self, quiet_s: float, sweep_s: float) -> None:
        """Runs until cancelled: consolidates each person idle for `quiet_s` since they spoke."""
        while True:
            await asyncio.sleep(sweep_s)
            try:
                for person in await self._store.quiet_people(now() - timedelta(seconds=quiet_s)):
                    await self._consolidate_claimed(person)
            except Exception:  # a database hiccup: the next sweep tries again
                log.exception("quiet consolidation failed")

    async def _consolidate_claimed(self, person: str) -> None:
        started = now()
        if await self._store.claim_consolidation(person, started + CONSOLIDATION_LEASE):
            await self.consolidate(person)
            await self._store.consolidated(person, started)

    async def sleep(self, undo_window: timedelta) -> Sleep:
        """The nightly pass over everyone: consolidate, purge, repair, compact."""
        report = Sleep()
        for person in await self._store.people():
            report.people += 1
            try:
                steps = await self.consolidate(person)
                report.merged += sum(step.merge for step in steps)
                report.superseded += sum(not step.merge for step in steps)
                report.purged += await self._purge(person, now() - undo_window)
                report.repaired += await self._repair(person)
            except Exception:
                log.exception("sleep pass failed for a person", extra={"person": person})
                report.failed.append(person)
        await asyncio.to_thread(self._vectors.compact)
        return report

    async def _alike(self, person: str, facts: Sequence[Item]) -> dict[str, set[str]]:
        """For each fact, the person's other facts whose vectors say nearly the same."""
        if len(facts) < 2:
            return {}
        stored = {
            point.id: point.vector
            for point in await asyncio.to_thread(self._vectors.scroll, person)
            if point.kind == FACT
        }
        alike: dict[str, set[str]] = {}
        for fact in facts:
            if fact.id not in stored:
                continue
            near = await asyncio.to_thread(
                self._vectors.search, person, stored[fact.id], NEIGHBOURS, FACT
            )
            alike[fact.id] = {n.id for n in near if n.id != fact.id and n.score >= SAME_FACT_COSINE}
        return alike

    async def _purge(self, person: str, before: datetime) -> int:
        async with self._store.of(person) as memory:
            purged = await memory.purge_forgotten(before)
        await asyncio.to_thread(self._vectors.delete, person, purged)
        return len(purged)

    async def _repair(self, person: str) -> int:
        """Brings the person's vectors in line with SQL: vectors for exactly the items in recall."""
        stored = {point.id for point in await asyncio.to_thread(self._vectors.scroll, person)}
        async with self._store.of(person) as memory:
            active = await memory.active_items()
        missing = [item for item in active if item.id not in stored]
        stray = sorted(stored - {item.id for item in active})
        await asyncio.to_thread(self._vectors.delete, person, stray)
        await reindex(self._store, person, self._embeddings, self._vectors, missing, stray)
        return len(missing) + len(stray)
