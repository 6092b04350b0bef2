"""The memory page: what the person sees of their memory, and what they can take back.

The page lists facts (the provenance-checked items), in plain words, newest first, and apart
from them what Violet told the person (`memory.told`), newest first. Forgetting one takes it
out of recall at once on every replica (the change advances the person's memory version),
vectors too, together with the turns it was made from (which would otherwise bring it back);
Restore undoes that. Forgetting everything deletes every item,
turn and captured turn of the person for good.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from memory.indexing import reindex
from memory.passages import PassageQueue
from memory.store import FACT, TOLD, Item, MemoryStore, PersonMemory
from violet.vectors import VectorStore


class UnknownItem(LookupError):
    """The id names none of the person's items."""


@dataclass(frozen=True)
class Page:
    """What the memory page shows: what Violet remembers about the person, and apart from it
    what she told them."""

    facts: list[Item]
    told: list[Item]


class MemoryPage:
    def __init__(
        self,
        store: MemoryStore,
        vectors: VectorStore,
        passages: PassageQueue,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._passages = passages

    async def facts(self, person: str) -> list[Item]:
        return (await self.listed(person)).facts

    async def listed(self, person: str) -> Page:
        return await self._store.read(person, _page)

    async def forget(self, person: str, item_id: str) -> Page:
        left = await self._store.run(person, partial(_forget, item_id=item_id))
        await self._vectors.delete(person, left)
        await reindex(self._store, person, self._passages, self._vectors, [], left, urgent=True)
        await self._store.vectors_stored(person, left)
        return await self.listed(person)

    async def restore(self, person: str, item_id: str) -> Page:
        back = await self._store.run(person, partial(_restore, item_id=item_id))
        await reindex(
            self._store,
            person,
            self._passages,
            self._vectors,
            back,
            [i.id for i in back],
            urgent=True,
        )
        await self._store.vectors_stored(person, [item.id for item in back])
        return await self.listed(person)

    async def forget_everything(self, person: str) -> Page:
        await self._store.run(person, lambda memory: memory.forget_everything())
        await self._vectors.delete_person(person)
        return Page([], [])


async def _page(memory: PersonMemory) -> Page:
    return Page(await memory.page(FACT), await memory.page(TOLD))


async def _forget(memory: PersonMemory, item_id: str) -> list[str]:
    """Forgets the item (unless it is forgotten already); the ids that left recall."""
    item = await memory.get(item_id)
    if item is None:
        raise UnknownItem(item_id)
    return await memory.forget(item) if item.forgotten_at is None else []


async def _restore(memory: PersonMemory, item_id: str) -> list[Item]:
    """Brings the item back (unless it is in recall); the items back in recall."""
    item = await memory.get(item_id)
    if item is None:
        raise UnknownItem(item_id)
    return await memory.restore(item) if item.forgotten_at is not None else []
