"""Embedding memory items into their vectors, off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from memory.passages import PassageQueue
from memory.ranking import contextual_text
from memory.store import TURN, Item, MemoryStore
from violet.vectors import VectorPoint, VectorStore

Vector = NDArray[np.float32]


async def index_items(
    passages: PassageQueue,
    vectors: VectorStore,
    items: Sequence[Item],
    previous_texts: Mapping[str, str],
    known: Mapping[str, Vector] | None = None,
    urgent: bool = False,
) -> list[VectorPoint]:
    """Embeds and stores the items' vectors.

    A turn item's own vector is its text read as a query: the person's message is what recall
    embedded as the query of its turn, and `known` gives such vectors already made (by item id).
    A turn is also read after the turn before it (`previous_texts` by item id), as a passage, so
    that a reply carries what it answers. A fact is a passage."""
    known = known or {}
    turns = [item for item in items if item.kind == TURN]
    unknown = [item for item in turns if item.id not in known]
    stored = [item for item in items if item.kind != TURN]
    in_context = [contextual_text(previous_texts.get(item.id), item.text) for item in turns]
    as_passages, as_queries = await asyncio.gather(
        passages.embed([item.text for item in stored] + in_context, urgent=urgent),
        passages.embed([item.text for item in unknown], as_queries=True, urgent=urgent),
    )
    own = {
        **dict(zip([item.id for item in stored], as_passages[: len(stored)], strict=True)),
        **dict(zip([item.id for item in unknown], as_queries, strict=True)),
        **known,
    }
    context_of = dict(zip([item.id for item in turns], as_passages[len(stored) :], strict=True))
    points = [
        VectorPoint(item.id, item.person, item.kind, own[item.id], context_of.get(item.id))
        for item in items
    ]
    await vectors.upsert(points)
    return points


async def reindex(
    store: MemoryStore,
    person: str,
    passages: PassageQueue,
    vectors: VectorStore,
    items: Sequence[Item],
    changed: Sequence[str],
    urgent: bool = False,
) -> None:
    """Stores the vectors of `items`, and embeds again the turns read after a `changed` item,
    so that no vector still carries a turn that left recall (or misses one that came back)."""
    async with store.of(person) as memory:
        indexed = {item.id for item in items}
        again = [*items, *(f for f in await memory.followers(changed) if f.id not in indexed)]
        previous_texts = await memory.previous_texts(again)
    stored = await index_items(passages, vectors, again, previous_texts, urgent=urgent)
    await _keep_only_of_items_still_there(store, vectors, person, [p.id for p in stored])


async def _keep_only_of_items_still_there(
    store: MemoryStore, vectors: VectorStore, person: str, ids: Sequence[str]
) -> None:
    """Deletes the vectors just stored of items gone meanwhile (their person's memory erased or
    forgotten whole, on any replica). Those remove rows before vectors, so a vector stored after
    they removed the person's vectors is found here, its row gone."""
    if not ids:
        return
    async with store.reading(person) as memory:
        there = {item.id for item in await memory.items(ids)}
    await vectors.delete(person, [item_id for item_id in ids if item_id not in there])
