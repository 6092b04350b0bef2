"""What a call costs: the price table of the configured models applied to the usage a call
reports, each kind of token at its own rate."""

from __future__ import annotations

import pytest

from violet.models import DEFAULT_FAST_MODEL, DEFAULT_MAIN_MODEL, OFFLINE_MODEL, Usage
from violet.models.prices import PRICES, cost_usd


def usage(model: str, **tokens: int) -> Usage:
    return Usage(
        model=model,
        input_tokens=tokens.get("fresh", 0),
        output_tokens=tokens.get("output", 0),
        latency_s=0.1,
        cache_write_tokens=tokens.get("written", 0),
        cache_read_tokens=tokens.get("read", 0),
        cache_write_1h_tokens=tokens.get("written_1h", 0),
    )


def test_both_configured_models_are_priced_with_their_source() -> None:
    for model in (DEFAULT_MAIN_MODEL, DEFAULT_FAST_MODEL):
        assert PRICES[model].source.startswith("https://platform.claude.com/docs/en/models/")


@pytest.mark.parametrize(
    ("tokens", "dollars"),
    [
        ({"fresh": 1_000_000}, 4.0),
        ({"output": 1_000_000}, 20.0),
        ({"written": 1_000_000}, 5.0),  # kept 5 minutes
        ({"written": 1_000_000, "written_1h": 1_000_000}, 8.0),  # kept an hour
        ({"read": 1_000_000}, 0.20),
        ({"fresh": 1_000, "written": 2_000, "read": 10_000, "output": 500}, 0.026),
    ],
)
def test_each_kind_of_token_costs_its_own_rate_on_the_main_model(
    tokens: dict[str, int], dollars: float
) -> None:
    assert cost_usd(usage(DEFAULT_MAIN_MODEL, **tokens)) == pytest.approx(dollars)


def test_a_long_prompt_costs_five_times_as_much_on_the_fast_model() -> None:
    short = cost_usd(usage(DEFAULT_FAST_MODEL, fresh=100_000, output=1_000))
    long = cost_usd(usage(DEFAULT_FAST_MODEL, fresh=100_001, output=1_000))
    assert short == pytest.approx(0.0105)
    assert long == pytest.approx(5 * (100_001 * 0.10 + 1_000 * 0.50) / 1_000_000)


def test_the_offline_model_costs_nothing_it_could_be_billed_for() -> None:
    assert cost_usd(usage(OFFLINE_MODEL, fresh=5_000, output=100)) is None
