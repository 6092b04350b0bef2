"""Card and request vectors from the shared embedder.

Each non-empty card field is embedded as a stored passage; the whole card's vector is the
normalised sum of its field vectors. Requests are embedded as queries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from router.cards import FIELDS, WHOLE, Card
from router.features import SIMILARITIES
from violet.embedder import TextEmbedder

Vector = NDArray[np.float32]


def card_vectors(embedder: TextEmbedder, cards: Sequence[Card]) -> list[dict[str, Vector]]:
    """Per card, a vector for each non-empty field and for the whole card."""
    texts = [(i, name, card.field(name)) for i, card in enumerate(cards) for name in FIELDS]
    texts = [(i, name, text) for i, name, text in texts if text.strip()]
    embedded = embedder.embed([text for _, _, text in texts])
    found: list[dict[str, Vector]] = [{} for _ in cards]
    for (i, name, _), vector in zip(texts, embedded, strict=True):
        found[i][name] = vector
    for vectors in found:
        if vectors:
            total = np.sum(list(vectors.values()), axis=0)
            vectors[WHOLE] = (total / np.linalg.norm(total)).astype(np.float32)
    return found


def similarities(request: Vector, vectors: Sequence[dict[str, Vector]]) -> NDArray[np.float64]:
    """The request's cosine with each card's SIMILARITIES (0 where a field is empty)."""
    return np.array(
        [
            [float(card[name] @ request) if name in card else 0.0 for name in SIMILARITIES]
            for card in vectors
        ],
        dtype=np.float64,
    ).reshape(len(vectors), len(SIMILARITIES))
