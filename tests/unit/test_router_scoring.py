"""The scorer's product rule: a task of its own never continues a topic it shares nothing with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from router.cards import Card
from router.features import VECTOR_KINDS, Request
from router.scoring import Scorer, Weights

NOW = datetime(2024, 10, 16, 12, 0, tzinfo=UTC)
DIMENSION = 4
# Recency alone decides, as it nearly does for short requests in the trained weights.
RECENCY_ONLY = Weights(
    embedders=["words", "words"],
    dimension=DIMENSION,
    features=["most_recent"],
    mean=[0.0],
    scale=[1.0],
    card=[10.0],
    new=[0.0, 0.0],
    opening=[0.0] * (DIMENSION + 3),
)


def score(request: str) -> float:
    card = Card(
        topic="t_1",
        title="The weather in Oslo",
        summary="Looked up the weather in Oslo",
        entities=("Oslo",),
        last_request="look up the weather in Oslo",
        last_outcome="Oslo is cold and clear today.",
        last_active=NOW - timedelta(hours=1),
    )
    vector = np.full(DIMENSION, 0.5, dtype=np.float32)
    similarities = np.zeros((1, len(VECTOR_KINDS)))
    scorer = Scorer(RECENCY_ONLY, ["words", "words"], DIMENSION)
    return scorer.score(Request(request, vector), [card], similarities, NOW).scores[0]


def test_a_task_sharing_no_word_or_entity_with_the_recent_topic_opens_new_work() -> None:
    assert score("calculate 1234*2") < 0.01


def test_a_task_on_the_same_subject_continues_it() -> None:
    assert score("check the weather in Oslo again") > 0.99


def test_a_reply_continues_the_recent_topic_whatever_its_words() -> None:
    assert score("yes please, go ahead") > 0.99
