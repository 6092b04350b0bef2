"""Embedding memory items into their vectors, off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from memory.context import shipped_map
from memory.passages import PassageQueue
from memory.store import TURN, Item, MemoryStore, PersonMemory
from violet.vectors import VectorPoint, VectorStore

Vector = NDArray[np.float32]


async def index_items(
    passages: PassageQueue,
    vectors: VectorStore,
    items: Sequence[Item],
    previous: Mapping[str, Item],
    known: Mapping[str, Vector] | None = None,
    urgent: bool = False,
    stored_first: bool = False,
) -> list[VectorPoint]:
    """Embeds and stores the items' vectors (all of one person's).

    A turn item's own vector is its text read as a query: the person's message is what recall
    embedded as the query of its turn, and `known` gives such vectors already made (by item id);
    with `stored_first`, an item whose vectors are stored keeps its own vector. A fact is a
    passage. A turn read after the turn before it (`previous`, by item id) also gets a context
    vector, made of the two turns' own vectors (`memory.context`): nothing more is embedded for
    it, but the turn before's own vector when neither this batch, `known` nor the vector store
    holds it."""
    if not items:
        return []
    person = items[0].person
    own: dict[str, Vector] = dict(known or {})
    batch = {item.id for item in items}
    before = {item.id: item for item in previous.values() if item.id not in batch}
    wanted = [item.id for item in items if stored_first and item.id not in own]
    wanted += [item_id for item_id in before if item_id not in own]
    if wanted:
        for point in await vectors.retrieve(person, wanted):
            own.setdefault(point.id, point.vector)
    facts = [item for item in items if item.kind != TURN and item.id not in own]
    turns = [item for item in items if item.kind == TURN and item.id not in own]
    turns += [item for item in before.values() if item.id not in own]
    as_passages, as_queries = await _embedded(passages, facts, turns, urgent)
    own.update(zip([item.id for item in facts], as_passages, strict=True))
    own.update(zip([item.id for item in turns], as_queries, strict=True))
    read_after = [item for item in items if item.kind == TURN and item.id in previous]
    context: dict[str, Vector] = {}
    if read_after:
        made = shipped_map(passages.dim).of(
            np.stack([own[previous[item.id].id] for item in read_after]),
            np.stack([own[item.id] for item in read_after]),
        )
        context = dict(zip([item.id for item in read_after], made, strict=True))
    points = [
        VectorPoint(item.id, item.person, item.kind, own[item.id], context.get(item.id))
        for item in items
    ]
    await vectors.upsert(points)
    return points


async def _embedded(
    passages: PassageQueue, facts: Sequence[Item], turns: Sequence[Item], urgent: bool
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """The facts' vectors as passages and the turns' as queries, together when both are asked
    for."""
    facts_texts, turns_texts = [item.text for item in facts], [item.text for item in turns]
    if facts_texts and turns_texts:
        return await asyncio.gather(
            passages.embed(facts_texts, urgent=urgent),
            passages.embed(turns_texts, as_queries=True, urgent=urgent),
        )
    none = np.zeros((0, passages.dim), dtype=np.float32)
    if facts_texts:
        return await passages.embed(facts_texts, urgent=urgent), none
    if turns_texts:
        return none, await passages.embed(turns_texts, as_queries=True, urgent=urgent)
    return none, none


async def reindex(
    store: MemoryStore,
    person: str,
    passages: PassageQueue,
    vectors: VectorStore,
    items: Sequence[Item],
    changed: Sequence[str],
    urgent: bool = False,
) -> None:
    """Stores the vectors of `items`, and makes again the context vectors of the turns read
    after a `changed` item, so that no vector still carries a turn that left recall (or misses
    one that came back). Own vectors already stored are kept."""
    again, previous = await store.read(person, partial(_to_index, items=items, changed=changed))
    stored = await index_items(passages, vectors, again, previous, urgent=urgent, stored_first=True)
    await _keep_only_of_items_still_there(store, vectors, person, [p.id for p in stored])


async def _to_index(
    memory: PersonMemory, items: Sequence[Item], changed: Sequence[str]
) -> tuple[list[Item], dict[str, Item]]:
    """`items` and the turns read after a `changed` item, with the items each is read after."""
    indexed = {item.id for item in items}
    again = [*items, *(f for f in await memory.followers(changed) if f.id not in indexed)]
    return again, await memory.previous_items(again)


async def _keep_only_of_items_still_there(
    store: MemoryStore, vectors: VectorStore, person: str, ids: Sequence[str]
) -> None:
    """Deletes the vectors just stored of items gone meanwhile (their person's memory erased or
    forgotten whole, on any replica). Those remove rows before vectors, so a vector stored after
    they removed the person's vectors is found here, its row gone."""
    if not ids:
        return
    there = {item.id for item in await store.read(person, lambda memory: memory.items(ids))}
    await vectors.delete(person, [item_id for item_id in ids if item_id not in there])
