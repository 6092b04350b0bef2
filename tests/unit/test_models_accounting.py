"""Every model call is accounted: one gen_ai span, the token usage histogram, per-person totals,
with the prompt cache's share of the input on each."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.support import messages_api as api_support
from tests.support.messages_api import MessagesAPI, overloaded, text
from violet.models import (
    ModelUnavailable,
    OfflineModelClient,
    Usage,
    UsageLedger,
    accounting,
    make_model_client,
)
from violet.models.cache import cached_system
from violet.models.prices import PRICES

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

SECRET_WORDS = "my secret plan for the garden"


@pytest.fixture
def spans(monkeypatch) -> InMemorySpanExporter:
    """A private tracer provider, for our spans and for any the SDK would make itself, so the
    global one (someone else's to set) stays untouched."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(accounting, "_tracer", provider.get_tracer("test"))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    return exporter


@pytest.fixture
def metrics(monkeypatch) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    histogram = meter.create_histogram("gen_ai.client.token.usage", unit="{token}")
    monkeypatch.setattr(accounting, "MODEL_TOKENS", histogram)
    return reader


def token_points(reader: InMemoryMetricReader) -> list[tuple[dict, int]]:
    data = reader.get_metrics_data()
    return [
        (dict(point.attributes), point.sum)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "gen_ai.client.token.usage"
        for point in metric.data.data_points
    ]


async def cached_twice(client, person: str):  # type: ignore[no-untyped-def]
    """The same long prompt twice: the second call reads what the first wrote."""
    system = cached_system("You are helpful. " * 600)
    for _ in range(2):
        reply = await client.reply(
            tier="main",
            system=system,
            messages=[{"role": "user", "content": "hello"}],
            tools=[],
            person=person,
        )
    return reply


def anthropic_client(api: MessagesAPI, ledger: UsageLedger, max_retries: int = 2):
    return make_model_client(
        api_key="k",
        base_url=api.url,
        main_model="claude-opus-5-5",
        fast_model="claude-haiku-5-5",
        max_retries=max_retries,
        backoff_base_s=0.01,
        backoff_max_s=0.02,
        ledger=ledger,
    )


async def test_a_call_span_carries_the_gen_ai_attributes(spans, messages_api):
    ledger = UsageLedger()
    client = anthropic_client(messages_api, ledger)
    messages_api.push(overloaded(), text("fine"))
    reply = await client.reply(
        tier="main",
        system="be kind",
        messages=[{"role": "user", "content": SECRET_WORDS}],
        tools=[],
        person="ana",
    )
    await client.aclose()
    [span] = spans.get_finished_spans()  # one span for the call and its retry, the SDK's none
    assert span.name == "chat claude-opus-5-5"
    attributes = dict(span.attributes)
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.request.model"] == "claude-opus-5-5"
    assert attributes["gen_ai.usage.input_tokens"] == reply.usage.input_tokens
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 0
    assert attributes["gen_ai.usage.output_tokens"] == reply.usage.output_tokens
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert attributes["violet.model.outcome"] == "ok"
    assert attributes["violet.model.attempts"] == 2
    assert attributes["violet.model.call"] == "reply.main"
    assert attributes["violet.model.latency_s"] > 0
    assert SECRET_WORDS not in str(attributes) and "be kind" not in str(attributes)
    assert ledger.totals("ana").calls == 1
    dollars = PRICES["claude-opus-5-5"].cost_usd(reply.usage)
    assert attributes["violet.model.cost_usd"] == pytest.approx(dollars, abs=1e-8) and dollars > 0
    assert ledger.totals("ana").cost_usd == pytest.approx(dollars)


async def test_message_text_goes_on_spans_only_when_asked(spans, monkeypatch):
    monkeypatch.setenv("VIOLET_TRACE_CONTENT", "1")
    client = OfflineModelClient(ledger=UsageLedger())
    await client.reply(
        tier="main",
        system="be kind",
        messages=[{"role": "user", "content": SECRET_WORDS}],
        tools=[],
        person="ana",
    )
    [span] = spans.get_finished_spans()
    assert SECRET_WORDS in span.attributes["gen_ai.input.messages"]
    assert span.attributes["gen_ai.system_instructions"] == "be kind"
    assert "gen_ai.output.messages" in span.attributes


@pytest.mark.expects_fallbacks
async def test_a_failed_call_is_marked_and_counted(spans, messages_api):
    ledger = UsageLedger()
    client = anthropic_client(messages_api, ledger, max_retries=1)
    messages_api.push(overloaded(), overloaded())
    with pytest.raises(ModelUnavailable):
        await client.reply(
            tier="work",
            system="",
            messages=[{"role": "user", "content": "x"}],
            tools=[],
            person="ben",
        )
    await client.aclose()
    [span] = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert span.status.status_code == StatusCode.ERROR
    assert span.attributes["violet.model.outcome"] == "unavailable"
    assert span.attributes["error.type"] == "ModelUnavailable"
    assert ledger.totals("ben").failed_calls == 1 and ledger.totals("ben").calls == 1


async def test_a_cached_call_counts_its_whole_prompt_as_input_and_says_how_much_was_cached(
    spans, messages_api
):
    ledger = UsageLedger()
    client = anthropic_client(messages_api, ledger)
    reply = await cached_twice(client, "dora")
    await client.aclose()
    first, second = spans.get_finished_spans()
    assert first.attributes["gen_ai.usage.cache_creation.input_tokens"] > 0
    assert second.attributes["gen_ai.usage.cache_read.input_tokens"] > 0
    assert second.attributes["gen_ai.usage.input_tokens"] == reply.usage.prompt_tokens
    assert reply.usage.cache_read_tokens > reply.usage.input_tokens
    totals = ledger.totals("dora", "reply.main")
    assert totals.calls == 2
    assert totals.cache_read_tokens == reply.usage.cache_read_tokens
    assert totals.cache_write_tokens == first.attributes["gen_ai.usage.cache_creation.input_tokens"]


async def test_the_token_histogram_splits_input_by_cache_use(metrics, messages_api):
    client = anthropic_client(messages_api, UsageLedger())
    await cached_twice(client, "eli")
    await client.aclose()
    by_kind: dict[tuple, int] = {}
    for attributes, value in token_points(metrics):
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "anthropic"
        kind = (attributes["gen_ai.token.type"], attributes.get("violet.token.cache"))
        by_kind[kind] = by_kind.get(kind, 0) + value
    assert set(by_kind) == {
        ("input", "none"),
        ("input", "read"),
        ("input", "write"),
        ("output", None),
    }
    assert by_kind["input", "read"] == by_kind["input", "write"]  # written once, read once


async def test_tokens_are_counted_on_the_metric_without_naming_the_person(metrics):
    client = OfflineModelClient(ledger=UsageLedger())
    reply = await client.reply(
        tier="main",
        system="",
        messages=[{"role": "user", "content": "hello"}],
        tools=[],
        person="cleo",
    )
    points = token_points(metrics)
    assert all("violet.person" not in attributes for attributes, _ in points)
    totals = {attributes["gen_ai.token.type"]: value for attributes, value in points}
    assert totals["input"] >= reply.usage.input_tokens
    assert totals["output"] >= reply.usage.output_tokens


def test_the_ledger_keeps_people_and_calls_apart():
    ledger = UsageLedger()
    main = Usage("m", 10, 2, 0.5, cache_write_tokens=100, cache_read_tokens=1000)
    ledger.record("a", "reply.main", main, latency_s=0.5, ok=True)
    ledger.record("a", "structured.fold", Usage("m", 5, 1, 0.25), latency_s=0.25, ok=True)
    ledger.record("a", "reply.main", None, latency_s=0.1, ok=False)
    ledger.record("b", "reply.main", Usage("m", 1, 1, 0.1), latency_s=0.1, ok=True)
    a = ledger.totals("a")
    assert (a.calls, a.failed_calls, a.input_tokens, a.output_tokens) == (3, 1, 15, 3)
    assert (a.cache_write_tokens, a.cache_read_tokens) == (100, 1000)
    assert a.latency_s == pytest.approx(0.85)
    assert ledger.totals("a", "structured.fold").input_tokens == 5
    assert ledger.totals("a", "reply.main").calls == 2
    assert ledger.totals("b").calls == 1 and ledger.people() == ["a", "b"]
    a.calls = 99
    assert ledger.totals("a").calls == 3
