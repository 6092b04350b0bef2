"""Usage on its way to the session service's totals: summed per person, day, kind of call, payer
and model; sent per person; kept when it cannot be sent; bounded, the oldest dropped first."""

from __future__ import annotations

import logging
from datetime import date

import pytest

from violet import fallbacks
from violet.models import Usage
from violet.models import usage as usage_module
from violet.models.credentials import Payer
from violet.models.prices import PRICES
from violet.models.usage import UsageBatches, UsageRow

DAY = date(2026, 11, 3)
NEXT_DAY = date(2026, 11, 4)
HAIKU = "claude-haiku-5-5"
OPUS = "claude-opus-5-5"


class Today:
    def __init__(self) -> None:
        self.day = DAY

    def __call__(self) -> date:
        return self.day


class Recorder:
    """Where the batches go: records each send, and fails for the people told to."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[UsageRow]]] = []
        self.failing: set[str] = set()

    async def __call__(self, person: str, rows: list[UsageRow]) -> None:
        if person in self.failing:
            raise ConnectionError(f"the session service is away for {person}")
        self.sent.append((person, rows))

    def rows_of(self, person: str) -> list[UsageRow]:
        return [row for sent_to, rows in self.sent if sent_to == person for row in rows]


def used(model: str = HAIKU, input_tokens: int = 1000, output_tokens: int = 100) -> Usage:
    return Usage(
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        latency_s=0.5,
        cache_write_tokens=20,
        cache_read_tokens=300,
    )


def test_calls_of_one_kind_on_one_day_add_up_to_one_row() -> None:
    batches = UsageBatches(Recorder(), clock=Today())
    batches.add("ann", "reply.main", Payer.OPERATOR, used(input_tokens=1000, output_tokens=100))
    batches.add("ann", "reply.main", Payer.OPERATOR, used(input_tokens=500, output_tokens=50))
    assert batches.pending_rows() == 1


async def test_a_flush_sends_each_persons_sums_with_their_cost() -> None:
    send = Recorder()
    batches = UsageBatches(send, clock=Today())
    first, second = used(input_tokens=1000, output_tokens=100), used(input_tokens=500)
    batches.add("ann", "reply.main", Payer.OPERATOR, first)
    batches.add("ann", "reply.main", Payer.OPERATOR, second)
    batches.add("bob", "structured.fold", Payer.OWN, used())
    await batches.flush()
    assert [person for person, _ in send.sent] == ["ann", "bob"]
    [row] = send.rows_of("ann")
    assert row.key == (DAY, "reply.main", "operator", HAIKU)
    assert (row.calls, row.input_tokens, row.output_tokens) == (2, 1500, 200)
    assert (row.cache_write_tokens, row.cache_read_tokens) == (40, 600)
    prices = PRICES[HAIKU]
    assert row.cost_usd == pytest.approx(prices.cost_usd(first) + prices.cost_usd(second))
    assert send.rows_of("bob")[0].payer == "own"
    assert batches.pending_rows() == 0


async def test_day_call_payer_and_model_each_make_their_own_row() -> None:
    send, today = Recorder(), Today()
    batches = UsageBatches(send, clock=today)
    batches.add("ann", "reply.main", Payer.OPERATOR, used())
    batches.add("ann", "structured.fold", Payer.OPERATOR, used())
    batches.add("ann", "reply.main", Payer.OWN, used())
    batches.add("ann", "reply.main", Payer.OPERATOR, used(model=OPUS))
    today.day = NEXT_DAY
    batches.add("ann", "reply.main", Payer.OPERATOR, used())
    await batches.flush()
    assert [row.key for row in send.rows_of("ann")] == [
        (DAY, "reply.main", "operator", HAIKU),
        (DAY, "structured.fold", "operator", HAIKU),
        (DAY, "reply.main", "own", HAIKU),
        (DAY, "reply.main", "operator", OPUS),
        (NEXT_DAY, "reply.main", "operator", HAIKU),
    ]
    assert all(row.calls == 1 for row in send.rows_of("ann"))


async def test_a_model_the_price_table_does_not_know_costs_nothing() -> None:
    send = Recorder()
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "reply.main", Payer.BUILT_IN, used(model="offline"))
    await batches.flush()
    [row] = send.rows_of("ann")
    assert (row.calls, row.cost_usd, row.payer) == (1, 0.0, "built_in")


async def test_a_flush_with_nothing_to_send_sends_nothing() -> None:
    send = Recorder()
    await UsageBatches(send, clock=Today()).flush()
    assert send.sent == []


async def test_rows_that_could_not_be_sent_are_sent_with_the_next_flush(
    caplog: pytest.LogCaptureFixture,
) -> None:
    send = Recorder()
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "reply.main", Payer.OPERATOR, used(input_tokens=1000))
    batches.add("bob", "reply.main", Payer.OPERATOR, used())
    send.failing = {"ann"}
    with caplog.at_level(logging.WARNING, logger="violet.models.usage"):
        await batches.flush()
    assert "the session service is away for ann" in caplog.text
    assert [person for person, _ in send.sent] == ["bob"]
    assert batches.pending_rows() == 1
    batches.add("ann", "reply.main", Payer.OPERATOR, used(input_tokens=500))
    batches.add("ann", "structured.fold", Payer.OPERATOR, used())
    send.failing = set()
    await batches.flush()
    assert [person for person, _ in send.sent] == ["bob", "ann"]
    kept, fold = send.rows_of("ann")
    assert (kept.call, kept.calls, kept.input_tokens) == ("reply.main", 2, 1500)
    assert (fold.call, fold.calls) == ("structured.fold", 1)
    assert batches.pending_rows() == 0


async def test_settling_sends_one_persons_rows_at_once_and_keeps_them_if_it_cannot() -> None:
    send = Recorder()
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "reply.work", Payer.OPERATOR, used())
    batches.add("bob", "reply.main", Payer.OPERATOR, used())
    send.failing = {"ann"}
    await batches.settle("ann")
    assert send.sent == [] and batches.pending_rows() == 2
    send.failing = set()
    await batches.settle("ann")
    assert [person for person, _ in send.sent] == ["ann"]
    assert batches.pending_rows() == 1  # bob's wait for the next batch
    await batches.settle("cy")  # nothing kept for cy: nothing sent
    assert len(send.sent) == 1


async def test_closing_sends_what_is_left() -> None:
    send = Recorder()
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "reply.main", Payer.OWN, used())
    await batches.aclose()
    assert len(send.rows_of("ann")) == 1


@pytest.mark.expects_fallbacks
async def test_beyond_the_bound_the_oldest_rows_are_dropped_and_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(usage_module, "MAX_PENDING", 3)
    before = fallbacks.counts()
    send = Recorder()
    send.failing = {"ann", "bob"}
    batches = UsageBatches(send, clock=Today())
    for call in ("one", "two", "three"):
        batches.add("ann", call, Payer.OPERATOR, used())
    for call in ("four", "five"):
        batches.add("bob", call, Payer.OPERATOR, used())
    await batches.flush()
    assert batches.pending_rows() == 3
    assert dict(fallbacks.counts() - before) == {"usage_dropped": 1}
    send.failing = set()
    await batches.flush()
    assert [row.call for row in send.rows_of("ann")] == ["three"]
    assert [row.call for row in send.rows_of("bob")] == ["four", "five"]


@pytest.mark.expects_fallbacks
async def test_a_person_whose_rows_are_all_dropped_is_not_sent_an_empty_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(usage_module, "MAX_PENDING", 1)
    send = Recorder()
    send.failing = {"ann", "bob"}
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "one", Payer.OPERATOR, used())
    batches.add("ann", "two", Payer.OPERATOR, used())
    batches.add("bob", "three", Payer.OPERATOR, used())
    await batches.flush()
    send.failing = set()
    await batches.flush()
    assert [(person, [row.call for row in rows]) for person, rows in send.sent] == [
        ("bob", ["three"])
    ]


async def test_within_the_bound_nothing_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage_module, "MAX_PENDING", 2)
    send = Recorder()
    send.failing = {"ann"}
    batches = UsageBatches(send, clock=Today())
    batches.add("ann", "one", Payer.OPERATOR, used())
    batches.add("ann", "two", Payer.OPERATOR, used())
    await batches.flush()
    assert batches.pending_rows() == 2
