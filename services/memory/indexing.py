"""Embedding memory items into their vectors, off the event loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.passages import PassageQueue
from memory.ranking import contextual_text
from memory.store import TURN, Item, MemoryStore
from violet.vectors import VectorPoint, VectorStore


async def index_items(
    passages: PassageQueue,
    vectors: VectorStore,
    items: Sequence[Item],
    previous_texts: Mapping[str, str],
    urgent: bool = False,
) -> list[VectorPoint]:
    """Embeds and stores the items' vectors; a turn is also read after the turn before it
    (`previous_texts` by item id), so that a reply carries what it answers."""
    texts = [item.text for item in items]
    with_context = [i for i, item in enumerate(items) if item.kind == TURN]
    texts += [contextual_text(previous_texts.get(items[i].id), items[i].text) for i in with_context]
    embedded = await passages.embed(texts, urgent=urgent)
    context_of = {i: embedded[len(items) + n] for n, i in enumerate(with_context)}
    points = [
        VectorPoint(item.id, item.person, item.kind, embedded[i], context_of.get(i))
        for i, item in enumerate(items)
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
    await index_items(passages, vectors, again, previous_texts, urgent=urgent)
