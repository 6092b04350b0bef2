"""The router's English sentence model: pooling, and the shipped model itself."""

from __future__ import annotations

import numpy as np

from router.minilm import DIMENSION, get_minilm, mean_pooled


def test_pooling_averages_only_real_tokens_and_normalises() -> None:
    states = np.array([[[3.0, 0.0], [0.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    pooled = mean_pooled(states, mask)
    assert np.allclose(pooled, [[0.6, 0.8]])


def test_related_requests_are_closer_than_unrelated_ones() -> None:
    model = get_minilm()
    table, dinner, songs = model.embed(
        ["Book a table at an Italian restaurant", "Reserve dinner for two tonight", "Play songs"]
    )
    assert table.shape == (DIMENSION,)
    assert abs(float(np.linalg.norm(table)) - 1.0) < 1e-5
    assert table @ dinner > table @ songs


def test_a_query_reads_as_the_same_text_stored() -> None:
    model = get_minilm()
    text = "Yes, make the reservation for 12:30."
    assert np.allclose(model.embed_query(text), model.embed([text])[0], atol=1e-5)


def test_long_texts_are_cut_to_the_models_window() -> None:
    vector = get_minilm().embed_query("word " * 5000)
    assert vector.shape == (DIMENSION,) and np.isfinite(vector).all()
