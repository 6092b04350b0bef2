"""Card vectors in the vector store: one point per card, sentence model and embedded field (its
`kind`, one of VECTOR_KINDS), with the person in the payload; every search is filtered by person.

A card stored before the router read a second model lacks that model's vectors, so its cosines
read 0 until the card's next update (every work turn updates its card)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from router.cards import Card
from router.embedding import Embedders, Vector, card_vectors
from router.features import SENTENCE_MODELS, SIMILARITIES, VECTOR_KINDS, vector_kind
from violet.vectors import VectorPoint, VectorStore

_POINTS = uuid.UUID("8f6d0c3e-5f1b-4d0e-9a51-2f4a0c7b9e11")


def point_id(person: str, topic: str, kind: str) -> str:
    return str(uuid.uuid5(_POINTS, f"{person}\x1f{topic}\x1f{kind}"))


class CardIndex:
    def __init__(self, store: VectorStore, embedders: Embedders) -> None:
        self._store = store
        self._embedders = embedders

    async def put(self, person: str, card: Card) -> None:
        """Embeds the card and replaces its vectors; a field now empty loses its vector."""
        (vectors,) = await asyncio.to_thread(card_vectors, self._embedders, [card])
        points = [
            VectorPoint(point_id(person, card.topic, kind), person, kind, vector)
            for kind, vector in vectors.items()
        ]
        emptied = [point_id(person, card.topic, k) for k in VECTOR_KINDS if k not in vectors]
        await self._store.upsert(points)
        await self._store.delete(person, emptied)

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
