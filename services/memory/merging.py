"""One item per fact: the same fact said again merges, a new value supersedes the old one.

Facts joined by the same words, the same subject, or vectors that say the same form a group. Its
newest fact stays; each other one gives way to it, kept in SQL as history (`superseded_by`):
merged when it said the same (the newest takes its sources), superseded when it said another
value ("I moved to Lyon" supersedes "I live in Paris"), and then its turns leave recall with it.
Capture settles each new fact this way at once (words and subject); the quiet consolidation and
the nightly pass settle again with vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.indexing import reindex
from memory.passages import PassageQueue
from memory.provenance import normalise
from memory.store import Item, MemoryStore, PersonMemory
from violet.vectors import VectorStore


@dataclass(frozen=True)
class Step:
    older: str
    newer: str
    merge: bool


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


async def give_way(memory: PersonMemory, steps: Sequence[Step]) -> list[str]:
    """Carries the steps out in the caller's transaction; returns the ids that left recall."""
    left: list[str] = []
    for step in steps:
        left += await memory.supersede(step.older, step.newer, merge=step.merge)
    return left


async def drop_vectors(
    store: MemoryStore, vectors: VectorStore, passages: PassageQueue, person: str, left: list[str]
) -> None:
    """Brings the vectors in line once items left recall (a turn item's context changes too)."""
    if left:
        await vectors.delete(person, left)
        await reindex(store, person, passages, vectors, [], left)
        await store.vectors_stored(person, left)


async def settle(
    store: MemoryStore,
    vectors: VectorStore,
    passages: PassageQueue,
    person: str,
    steps: Sequence[Step],
) -> list[str]:
    """Carries the steps out; returns the ids that left recall (their vectors are gone too)."""
    left = await store.run(person, lambda memory: give_way(memory, steps))
    await drop_vectors(store, vectors, passages, person, left)
    return left
