"""A turn's context vector, derived from the two turns' own vectors (`memory.context`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from memory import context
from memory.context import SUMMED, ContextMap, fit, locomo_pairs, shipped_map
from memory.tuning import conversation_fingerprint
from violet.embedder import MODEL_ID, get_embedder


def unit_rows(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_fit_finds_a_linear_map_it_was_shown() -> None:
    rng = np.random.default_rng(3)
    dim = 6
    previous, own = rng.normal(size=(400, dim)), rng.normal(size=(400, dim))
    a, b = rng.normal(size=(dim, dim)), rng.normal(size=(dim, dim))
    made = fit(previous, own, previous @ a + own @ b + 0.5, ridge=1e-6)

    assert made.weights is not None
    np.testing.assert_allclose(made.weights[:dim], a, atol=1e-3)
    np.testing.assert_allclose(made.weights[dim : 2 * dim], b, atol=1e-3)
    expected = unit_rows(previous[:3] @ a + own[:3] @ b + 0.5)
    np.testing.assert_allclose(made.of(previous[:3], own[:3]), expected, atol=1e-4)


def test_context_vectors_are_unit_rows_one_per_pair() -> None:
    rng = np.random.default_rng(4)
    made = ContextMap(rng.normal(size=(9, 4)).astype(np.float32))
    rows = made.of(rng.normal(size=(5, 4)), rng.normal(size=(5, 4)))

    assert rows.shape == (5, 4)
    assert rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert made.of(rng.normal(size=4), rng.normal(size=4)).shape == (1, 4)


def test_without_a_map_for_the_model_the_context_is_the_normalised_sum() -> None:
    assert shipped_map(4) is SUMMED
    np.testing.assert_allclose(
        SUMMED.of(np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0])),
        [[2**-0.5, 2**-0.5, 0, 0]],
        atol=1e-6,
    )


def test_the_shipped_map_is_the_embedders_and_carries_what_a_reply_answers() -> None:
    embedder = get_embedder()
    shipped = shipped_map(embedder.dim)
    assert shipped.model == MODEL_ID and shipped.weights is not None

    pairs = [
        ("Shall we have dinner on Friday?", "Sure, at eight at the Thai place."),
        ("How was the race on Sunday?", "I finished my first marathon in four hours!"),
        ("Did the plumber come?", "Yes, the kitchen sink works again."),
    ]
    questions = [
        "When is dinner on Friday?",
        "How long did the marathon take?",
        "Was the kitchen sink fixed by the plumber?",
    ]
    previous = embedder.embed_as_queries([p for p, _ in pairs])
    own = embedder.embed_as_queries([t for _, t in pairs])
    together = embedder.embed([f"{p}\n{t}" for p, t in pairs])
    asked = np.stack([embedder.embed_query(q) for q in questions])
    derived = shipped.of(previous, own)

    # Each derived vector is nearest the pair it was made of, read as one passage, and each
    # question nearest its own pair's; a reply that says little alone is found by what it
    # answers.
    assert list(np.argmax(derived @ together.T, axis=1)) == [0, 1, 2]
    assert list(np.argmax(asked @ derived.T, axis=1)) == [0, 1, 2]
    assert float(asked[0] @ derived[0]) > float(asked[0] @ own[0]) + 0.05


def locomo(tmp_path: Path, sessions: dict[str, object]) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": sessions, "qa": []}]))
    return path


def test_pairs_are_turns_of_a_tuning_conversation_said_within_the_gap(tmp_path: Path) -> None:
    sessions = {
        "speaker_a": "Ann",
        "session_1_date_time": "1:00 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Hi!", "blip_caption": "a dog"},
        ],
        "session_2_date_time": "9:00 am on 9 May, 2023",
        "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Good morning."}],
    }
    path = locomo(tmp_path, sessions)
    said = ["Ann: Hi Bob!", "Bob: Hi! [shares a dog]", "Ann: Good morning."]

    assert locomo_pairs(path, frozenset({"another"})) == []
    pairs = locomo_pairs(path, frozenset({conversation_fingerprint(said)}))
    assert [(p.previous, p.text) for p in pairs] == [(said[0], said[1])]


def test_fitting_on_a_file_without_tuning_conversations_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = locomo(tmp_path, {"session_1_date_time": "1:00 pm on 8 May, 2023", "session_1": []})
    monkeypatch.setattr(context, "tuned_fingerprints", lambda: frozenset({"none"}))

    with pytest.raises(ValueError, match="none of the conversations"):
        context.fit_on_file(path, get_embedder())


def test_a_saved_map_loads_again(tmp_path: Path) -> None:
    weights = np.random.default_rng(5).normal(size=(9, 4)).astype(np.float32)
    ContextMap(weights).save(tmp_path / "map.npz")

    with np.load(tmp_path / "map.npz") as saved:
        assert str(saved["model"]) == MODEL_ID
        np.testing.assert_allclose(saved["weights"], weights, atol=1e-2)
