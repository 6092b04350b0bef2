"""Card vectors in the vector store: one point per card, sentence model and embedded field (its
`kind`, one of VECTOR_KINDS), with the person in the payload; every search is filtered by person.

A card stored before the router read a second model lacks that model's vectors, so its cosines
read 0 until the card's next update (every work turn updates its card)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from router.cards import Card
from router.embedding import Embedders, Vector, card_vectors
from router.features import SENTENCE_MODELS, SIMILARITIES, VECTOR_KINDS, vector_kind
from violet.vectors import VectorPoint, VectorStore

_POINTS = uuid.UUID("8f6d0c3e-5f1b-4d0e-9a51-2f4a0c7b9e11")


def point_id(person: str, topic: str, kind: str) -> str:
    return str(uuid.uuid5(_POINTS, f"{person}\x1f{topic}\x1f{kind}"))


@dataclass(frozen=True)
class EmbeddedCard:
    """A card's vectors, made before they are stored; `emptied` are the ids of its fields now
    empty, whose vectors go."""

    person: str
    points: list[VectorPoint]
    emptied: list[str]


class CardIndex:
    def __init__(self, store: VectorStore, embedders: Embedders) -> None:
        self._store = store
        self._embedders = embedders

    async def embed(self, person: str, card: Card) -> EmbeddedCard:
        (vectors,) = await asyncio.to_thread(card_vectors, self._embedders, [card])
        points = [
            VectorPoint(point_id(person, card.topic, kind), person, kind, vector)
            for kind, vector in vectors.items()
        ]
        emptied = [point_id(person, card.topic, k) for k in VECTOR_KINDS if k not in vectors]
        return EmbeddedCard(person, points, emptied)

    async def put(self, card: EmbeddedCard) -> None:
        """Replaces the card's vectors; a field now empty loses its vector."""
        await self._store.upsert(card.points)
        await self._store.delete(card.person, card.emptied)

    async def erase(self, person: str, topics: Sequence[str]) -> int:
        """Removes the vectors of the person's cards on `topics`; how many there were."""
        ids = [point_id(person, topic, kind) for topic in topics for kind in VECTOR_KINDS]
        found = await self._store.retrieve(person, ids)
        await self._store.delete(person, ids)
        return len(found)

    async def erase_rest(self, person: str) -> int:
        """Removes every other vector of the person's (a card's whose row is already gone);
        how many there were. Few are: called after `erase` of each of their cards."""
        rest = await self._store.scroll(person)
        await self._store.delete_person(person)
        await self._store.purge()
        return len(rest)

    async def similarities(
        self, person: str, requests: dict[str, Vector], cards: Sequence[Card], known: int
    ) -> NDArray[np.float64]:
        """The request's cosine with each card's VECTOR_KINDS, a row per card (0 where a card
        has no such vector), each by the request's vector of the same model. `known` is how
        many cards the person has in all, so that every one of theirs is scored, whatever its
        age."""
        found = np.zeros((len(cards), len(VECTOR_KINDS)))
        where = {
            point_id(person, card.topic, kind): (row, column)
            for row, card in enumerate(cards)
            for column, kind in enumerate(VECTOR_KINDS)
        }
        searches = [
            self._store.search(person, requests[model], max(known, 1), vector_kind(model, name))
            for model in SENTENCE_MODELS
            for name in SIMILARITIES
        ]
        for neighbours in await asyncio.gather(*searches):
            for neighbour in neighbours:
                if neighbour.id in where:
                    found[where[neighbour.id]] = neighbour.score
        return found
