"""Card vectors in the vector store: one point per card and embedded field (its `kind`), with
the person in the payload; every search is filtered by person."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from router.cards import Card
from router.embedding import Vector, card_vectors
from router.features import SIMILARITIES
from violet.embedder import TextEmbedder
from violet.vectors import VectorPoint, VectorStore

_POINTS = uuid.UUID("8f6d0c3e-5f1b-4d0e-9a51-2f4a0c7b9e11")


def point_id(person: str, topic: str, kind: str) -> str:
    return str(uuid.uuid5(_POINTS, f"{person}\x1f{topic}\x1f{kind}"))


class CardIndex:
    def __init__(self, store: VectorStore, embedder: TextEmbedder) -> None:
        self._store = store
        self._embedder = embedder

    async def put(self, person: str, card: Card) -> None:
        """Embeds the card and replaces its vectors; a field now empty loses its vector."""
        (vectors,) = await asyncio.to_thread(card_vectors, self._embedder, [card])
        points = [
            VectorPoint(point_id(person, card.topic, kind), person, kind, vector)
            for kind, vector in vectors.items()
        ]
        emptied = [point_id(person, card.topic, k) for k in SIMILARITIES if k not in vectors]
        await self._store.upsert(points)
        await self._store.delete(person, emptied)

    async def similarities(
        self, person: str, request: Vector, cards: Sequence[Card], known: int
    ) -> NDArray[np.float64]:
        """The request's cosine with each card's SIMILARITIES, a row per card (0 where a card
        has no such vector). `known` is how many cards the person has in all, so that every
        one of theirs is scored, whatever its age."""
        found = np.zeros((len(cards), len(SIMILARITIES)))
        where = {
            point_id(person, card.topic, kind): (row, column)
            for row, card in enumerate(cards)
            for column, kind in enumerate(SIMILARITIES)
        }
        searches = [
            self._store.search(person, request, max(known, 1), kind) for kind in SIMILARITIES
        ]
        for neighbours in await asyncio.gather(*searches):
            for neighbour in neighbours:
                if neighbour.id in where:
                    found[where[neighbour.id]] = neighbour.score
        return found
