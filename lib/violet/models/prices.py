"""What a model call costs, in US dollars: one table of prices per model, dated, with its source.

Prices are per million tokens, as Anthropic lists them on each model's overview page. A call's
cost comes from the usage it reports: tokens read afresh, written to the prompt cache (5-minute
and 1-hour entries are priced apart) and read from it, and output tokens, thinking included.
Haiku 5.5 bills a prompt longer than 100,000 tokens at five times every rate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from violet.models.base import Usage

PRICES_AS_OF = date(2026, 10, 7)
MILLION = 1_000_000


@dataclass(frozen=True)
class Prices:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    source: str
    # A prompt longer than this many tokens is billed at `long_factor` times every rate.
    long_prompt_tokens: int | None = None
    long_factor: float = 1.0

    def cost_usd(self, usage: Usage) -> float:
        write_1h = usage.cache_write_1h_tokens
        write_5m = usage.cache_write_tokens - write_1h
        dollars = (
            usage.input_tokens * self.input
            + write_5m * self.cache_write_5m
            + write_1h * self.cache_write_1h
            + usage.cache_read_tokens * self.cache_read
            + usage.output_tokens * self.output
        ) / MILLION
        if self.long_prompt_tokens is not None and usage.prompt_tokens > self.long_prompt_tokens:
            dollars *= self.long_factor
        return dollars


PRICES: dict[str, Prices] = {
    "claude-opus-5-5": Prices(
        input=4.0,
        output=20.0,
        cache_write_5m=5.0,
        cache_write_1h=8.0,
        cache_read=0.20,
        source="https://platform.claude.com/docs/en/models/opus-5-5/overview",
    ),
    "claude-haiku-5-5": Prices(
        input=0.10,
        output=0.50,
        cache_write_5m=0.125,
        cache_write_1h=0.20,
        cache_read=0.01,
        source="https://platform.claude.com/docs/en/models/haiku-5-5/overview",
        long_prompt_tokens=100_000,
        long_factor=5.0,
    ),
}


def cost_usd(usage: Usage) -> float | None:
    """The cost of a call's usage: as its requests were priced, one by one (`priced`), else
    that of one request; None for a model the table does not price (the offline model)."""
    return usage.cost_usd if usage.cost_usd is not None else priced(usage).cost_usd


def priced(usage: Usage) -> Usage:
    """One request's usage with its cost, at its own model and prompt length."""
    prices = PRICES.get(usage.model)
    return replace(usage, cost_usd=prices.cost_usd(usage) if prices is not None else None)
