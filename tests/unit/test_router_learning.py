"""The router's pure parts: lexical signals, the two small models, the shipped weights."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from router import lexical
from router.cards import Card
from router.embedding import MODEL_IDS
from router.features import CARD_FEATURES, VECTOR_KINDS, Request, card_features
from router.learning import Choice, fit_choice, fit_logistic, sigmoid
from router.scoring import Scorer, Weights, WeightsMismatch
from router.training import auroc, calibration_error

NOW = datetime(2024, 10, 16, 12, 0, tzinfo=UTC)


def card(topic: str, outcome: str = "Done.", hours_ago: float = 1.0, **fields: str) -> Card:
    return Card(
        topic=topic,
        title=fields.get("title", topic),
        summary=fields.get("summary", ""),
        entities=tuple(fields.get("entities", "").split(",")) if fields.get("entities") else (),
        last_request=fields.get("last_request", ""),
        last_outcome=outcome,
        last_active=NOW - timedelta(hours=hours_ago),
    )


def test_bm25_prefers_the_document_sharing_rare_words() -> None:
    scores = lexical.bm25(
        "book the flights to Seattle",
        ["Flights to Seattle on Friday", "A table at a restaurant", "Songs by Drake"],
    )
    assert scores[0] > 0 and scores[1] == scores[2] == 0


def test_entity_hits_count_partly_named_entities_in_part() -> None:
    assert lexical.entity_hits("play Joe Bonamassa", ["Joe Bonamassa", "Blues"]) == 1.0
    assert lexical.entity_hits("anything by Bonamassa?", ["Joe Bonamassa"]) == 0.5


@pytest.mark.parametrize("request_text", ["Yes, book it.", "What genre is that?", "ok"])
def test_short_or_answer_like_requests_read_as_replies(request_text: str) -> None:
    assert lexical.reads_as_reply(request_text)


def test_a_long_request_that_asks_for_something_is_not_a_reply() -> None:
    assert not lexical.reads_as_reply("I would like to book a table at an Italian restaurant")


def test_card_features_mark_recency_and_cross_the_opening_logit() -> None:
    cards = [card("old", hours_ago=30), card("new", hours_ago=1)]
    sims = np.zeros((2, len(VECTOR_KINDS)))
    request = Request("yes", np.zeros(4, dtype=np.float32))
    features = card_features(request, cards, sims, NOW, opening=2.0)
    column = {name: i for i, name in enumerate(CARD_FEATURES)}
    assert features.shape == (2, len(CARD_FEATURES))
    assert list(features[:, column["most_recent"]]) == [0.0, 1.0]
    assert list(features[:, column["most_recent_x_opening"]]) == [0.0, 2.0]
    assert list(features[:, column["most_recent_x_reply"]]) == [0.0, 1.0]


def test_card_features_mark_the_card_whose_question_the_request_answers() -> None:
    cards = [card("bus", "How many tickets do you need?"), card("food", "In which city?")]
    sims = np.zeros((2, len(VECTOR_KINDS)))
    request = Request("In Oakland.", np.zeros(4, dtype=np.float32))
    features = card_features(request, cards, sims, NOW, opening=0.0)
    column = {name: i for i, name in enumerate(CARD_FEATURES)}
    assert list(features[:, column["answers_place"]]) == [0.0, 1.0]
    assert list(features[:, column["answers_any"]]) == [0.0, 1.0]
    assert list(features[:, column["leaves_unanswered"]]) == [1.0, 0.0]
    assert list(features[:, column["gives_detail_x_asks_detail"]]) == [1.0, 1.0]
    assert list(features[:, column["outcome_asks"]]) == [1.0, 1.0]


def test_fit_choice_recovers_the_weights_that_made_the_choices() -> None:
    rng = np.random.default_rng(7)
    truth = np.array([2.0, -1.0])
    choices = []
    for _ in range(600):
        z = rng.normal(size=(4, 2))
        p = np.exp(z @ truth) / np.exp(z @ truth).sum()
        choices.append(Choice(z, int(rng.choice(4, p=p))))
    fitted = fit_choice(choices, np.full(2, 1e-3))
    assert np.allclose(fitted, truth, atol=0.3)


def test_fit_logistic_separates_two_clouds_and_leaves_the_constant_free() -> None:
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(1, 1, (200, 2)), rng.normal(-1, 1, (200, 2))])
    features = np.hstack([x, np.ones((400, 1))])
    labels = np.array([True] * 200 + [False] * 200)
    weights = fit_logistic(features, labels, ridge=0.1)
    accuracy = ((sigmoid(features @ weights) > 0.5) == labels).mean()
    assert accuracy > 0.85
    assert auroc(features @ weights, labels) > 0.9


def test_the_shipped_weights_fit_the_shared_embedder() -> None:
    weights = Weights.load()
    assert weights.embedders == list(MODEL_IDS)
    assert len(weights.card) == len(weights.features) == len(weights.mean)
    assert len(weights.opening) == weights.dimension + 3
    figures = weights.report["cross_validated_by_person"]
    assert figures["prefilter_top3"] > 0.8


def test_weights_of_another_embedder_are_refused() -> None:
    weights = Weights.load()
    with pytest.raises(WeightsMismatch, match="retrain"):
        Scorer(weights, ["another-model", MODEL_IDS[1]], weights.dimension)


def test_a_card_scores_at_least_half_exactly_when_it_beats_new_work() -> None:
    weights = Weights(
        embedders=["test", "test"],
        dimension=4,
        features=["cos_card"],
        mean=[0.0],
        scale=[1.0],
        card=[10.0],
        new=[5.0, 0.0],
        opening=[0.0] * 7,
    )
    scorer = Scorer(weights, ["test", "test"], 4)
    sims = np.zeros((2, len(VECTOR_KINDS)))
    sims[:, VECTOR_KINDS.index("card")] = [0.9, 0.2]
    scored = scorer.score(
        Request("x", np.zeros(4, dtype=np.float32)), [card("a"), card("b")], sims, NOW
    )
    assert [c.topic for c in scored.cards] == ["a", "b"]
    assert scored.scores[0] == pytest.approx(float(sigmoid(9.0 - 5.0)))
    assert scored.scores[1] < 0.5 < scored.scores[0]


def test_calibration_error_is_how_far_confidence_lies_from_how_often_it_was_right() -> None:
    # Decisions at 0.75 that are right 3 times in 4, at 0.25 right 1 time in 4: calibrated.
    assert (
        calibration_error([0.75] * 4 + [0.25] * 4, [True] * 3 + [False] + [True] + [False] * 3) == 0
    )
    # Sure of every decision, right half the time: half a decision off on average.
    assert calibration_error([0.99] * 4, [True, False, True, False]) == pytest.approx(0.49)
