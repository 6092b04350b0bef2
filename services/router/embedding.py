"""Card and request vectors from the router's sentence models (features.SENTENCE_MODELS).

Each non-empty card field is embedded as a stored passage by each model; the whole card's
vector is the normalised sum of that model's field vectors. Requests are embedded as queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from router.cards import FIELDS, WHOLE, Card
from router.features import SENTENCE_MODELS, SIMILARITIES, VECTOR_KINDS, vector_kind
from router.minilm import MODEL_ID as MINILM_ID
from router.minilm import get_minilm
from violet.embedder import MODEL_ID as SHARED_ID
from violet.embedder import TextEmbedder, get_embedder

Vector = NDArray[np.float32]
# The embedder of each of SENTENCE_MODELS, by name.
Embedders = Mapping[str, TextEmbedder]


# What each of SENTENCE_MODELS is, in order: the weights record it.
MODEL_IDS = (SHARED_ID, MINILM_ID)


def opening_dimension(embedders: Embedders) -> int:
    """The size of opening_vector."""
    return sum(embedders[model].dim for model in SENTENCE_MODELS)


def shipped_embedders() -> dict[str, TextEmbedder]:
    """The shared embedder and the router's English model, loaded on first use."""
    return dict(zip(SENTENCE_MODELS, (get_embedder(), get_minilm()), strict=True))


def card_vectors(embedders: Embedders, cards: Sequence[Card]) -> list[dict[str, Vector]]:
    """Per card, a vector of each model for each non-empty field and for the whole card,
    keyed by VECTOR_KINDS."""
    found: list[dict[str, Vector]] = [{} for _ in cards]
    for model in SENTENCE_MODELS:
        texts = [(i, name, card.field(name)) for i, card in enumerate(cards) for name in FIELDS]
        texts = [(i, name, text) for i, name, text in texts if text.strip()]
        embedded = embedders[model].embed([text for _, _, text in texts])
        for (i, name, _), vector in zip(texts, embedded, strict=True):
            found[i][vector_kind(model, name)] = vector
        for vectors in found:
            fields = [
                vectors[vector_kind(model, n)] for n in FIELDS if vector_kind(model, n) in vectors
            ]
            if fields:
                total = np.sum(fields, axis=0)
                whole = (total / np.linalg.norm(total)).astype(np.float32)
                vectors[vector_kind(model, WHOLE)] = whole
    return found


def request_vectors(embedders: Embedders, text: str) -> dict[str, Vector]:
    return {model: embedders[model].embed_query(text) for model in SENTENCE_MODELS}


def opening_vector(requests: Mapping[str, Vector]) -> Vector:
    """What the opening classifier reads of a request: every model's vector, end to end."""
    return np.concatenate([requests[model] for model in SENTENCE_MODELS])


def similarities(
    requests: Mapping[str, Vector], vectors: Sequence[dict[str, Vector]]
) -> NDArray[np.float64]:
    """The request's cosine with each card's VECTOR_KINDS, each by the request's vector of the
    same model (0 where a field is empty)."""
    pairs = [
        (vector_kind(model, name), requests[model])
        for model in SENTENCE_MODELS
        for name in SIMILARITIES
    ]
    return np.array(
        [
            [float(card[kind] @ request) if kind in card else 0.0 for kind, request in pairs]
            for card in vectors
        ],
        dtype=np.float64,
    ).reshape(len(vectors), len(VECTOR_KINDS))
