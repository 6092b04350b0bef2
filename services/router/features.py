"""What routing measures between a request and each active card, and about the request alone.

Card features (one row per card) feed the choice model; the request's own features feed the
opening classifier ("does this request open new work?"). Similarities come from the vector
store: for each sentence model, one cosine per embedded card field and one for the whole card.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

from router import dialogue, lexical
from router.cards import FIELDS, WHOLE, Card

SIMILARITIES = (*FIELDS, WHOLE)
# The sentence models whose cosines routing reads: the shared multilingual embedder, and an
# English model whose cosines rank cards better on the routing cases (docs/routing.md).
SENTENCE_MODELS = ("e5", "minilm")


def vector_kind(model: str, name: str) -> str:
    """The kind of a card's vector in the store; the shared embedder's keep their bare names."""
    return name if model == SENTENCE_MODELS[0] else f"{model}_{name}"


VECTOR_KINDS = tuple(vector_kind(model, name) for model in SENTENCE_MODELS for name in SIMILARITIES)
_CUES = ("asks", "confirms", "closes")
# How the request answers the card's last outcome (router.dialogue): the details asked for and
# given, a request pointing back at what was offered, and every pair of the two sides' acts.
DIALOGUE_FEATURES = (
    *(f"answers_{detail}" for detail in dialogue.DETAILS),
    "answers_any",
    "leaves_unanswered",
    "offer_x_refers",
    *(f"{said}_x_{did}" for said in dialogue.REQUEST_ACTS for did in dialogue.OUTCOME_ACTS),
)
CARD_FEATURES = (
    *(f"cos_{kind}" for kind in VECTOR_KINDS),
    "bm25",
    "bm25_relative",
    "entity_hits",
    "most_recent",
    "log_recency_rank",
    "log_age_hours",
    "most_recent_x_reply",
    "most_recent_x_opening",
    *(f"outcome_{cue}" for cue in _CUES),
    *(f"opening_x_outcome_{cue}" for cue in _CUES),
    *DIALOGUE_FEATURES,
)
# Besides the request's embedding.
OPENING_FEATURES = ("reads_as_reply", "log_words")


@dataclass(frozen=True)
class Request:
    text: str
    vector: NDArray[np.float32]


def card_features(
    request: Request,
    cards: Sequence[Card],
    similarities: NDArray[np.float64],
    now: datetime,
    opening: float,
) -> NDArray[np.float64]:
    """One row per card, columns as CARD_FEATURES. `similarities` holds the request's cosine
    with each card's VECTOR_KINDS, a row per card (0 where a field is empty); `opening` is the
    opening classifier's logit for the request."""
    count = len(cards)
    ages_h = np.array([max((now - c.last_active).total_seconds(), 0.0) / 3600 for c in cards])
    recency_rank = ages_h.argsort(kind="stable").argsort()
    most_recent = (recency_rank == 0).astype(np.float64)
    bm25 = np.array(lexical.bm25(request.text, [c.words() for c in cards]))
    did = [dialogue.outcome_acts(c.last_outcome) for c in cards]
    cues = np.array([[cue in acts for cue in _CUES] for acts in did], dtype=np.float64)
    cues = cues.reshape(count, len(_CUES))  # (0, 3) when there are no cards
    reply = float(lexical.reads_as_reply(request.text))
    columns = [
        *similarities.T,
        bm25,
        bm25 / max(float(bm25.max(initial=0.0)), 1e-9),
        np.array([lexical.entity_hits(request.text, c.entities) for c in cards]),
        most_recent,
        np.log1p(recency_rank),
        np.log1p(ages_h),
        most_recent * reply,
        most_recent * opening,
        *cues.T,
        *(cues.T * opening),
        *_answering(request.text, cards, did).T,
    ]
    return np.stack(columns, axis=1).astype(np.float64).reshape(count, len(CARD_FEATURES))


def _answering(
    request: str, cards: Sequence[Card], did: Sequence[frozenset[str]]
) -> NDArray[np.float64]:
    """DIALOGUE_FEATURES, a row per card; `did` holds each card's outcome acts."""
    given = dialogue.given_details(request)
    said = dialogue.request_acts(request)
    refers = dialogue.refers_back(request)
    rows = []
    for card, acts in zip(cards, did, strict=True):
        asked = dialogue.asked_details(card.last_outcome)
        answers = [float(d in asked and d in given) for d in dialogue.DETAILS]
        rows.append(
            [
                *answers,
                max(answers),
                float(bool(asked) and not asked & given),
                float("offers" in acts and refers),
                *(
                    float(s in said and d in acts)
                    for s in dialogue.REQUEST_ACTS
                    for d in dialogue.OUTCOME_ACTS
                ),
            ]
        )
    return np.array(rows, dtype=np.float64).reshape(len(cards), len(DIALOGUE_FEATURES))


def opening_features(request: Request) -> NDArray[np.float64]:
    """The request's embedding, OPENING_FEATURES, then the constant 1."""
    words = len(lexical.words(request.text))
    extra = [float(lexical.reads_as_reply(request.text)), math.log1p(words)]

    return np.concatenate([request.vector.astype(np.float64), extra, [1.0]])
