"""Every model call is accounted: a gen_ai span, token counters, per-person totals."""

from __future__ import annotations

import pytest
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
    UsageLedger,
    accounting,
    make_model_client,
)

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

SECRET_WORDS = "my secret plan for the garden"


@pytest.fixture
def spans(monkeypatch) -> InMemorySpanExporter:
    """A private tracer, so the global provider (someone else's to set) stays untouched."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(accounting, "_tracer", provider.get_tracer("test"))
    return exporter


@pytest.fixture
def metrics(monkeypatch) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    monkeypatch.setattr(accounting, "_tokens", meter.create_counter("violet.model.tokens"))
    return reader


def token_points(reader: InMemoryMetricReader) -> list[tuple[dict, int]]:
    data = reader.get_metrics_data()
    return [
        (dict(point.attributes), point.value)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "violet.model.tokens"
        for point in metric.data.data_points
    ]


def anthropic_client(api: MessagesAPI, ledger: UsageLedger, max_retries: int = 2):
    return make_model_client(
        api_key="k",
        base_url=api.url,
        main_model="claude-main-test",
        fast_model="claude-fast-test",
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
    [span] = [s for s in spans.get_finished_spans() if s.name == "chat claude-main-test"]
    attributes = dict(span.attributes)
    assert attributes["gen_ai.system"] == "anthropic"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.request.model"] == "claude-main-test"
    assert attributes["gen_ai.usage.input_tokens"] == reply.usage.input_tokens
    assert attributes["gen_ai.usage.output_tokens"] == reply.usage.output_tokens
    assert attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert attributes["violet.model.outcome"] == "ok"
    assert attributes["violet.model.attempts"] == 2
    assert attributes["violet.model.call"] == "reply.main"
    assert attributes["violet.model.latency_s"] > 0
    assert SECRET_WORDS not in str(attributes) and "be kind" not in str(attributes)
    assert ledger.totals("ana").calls == 1


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


def test_the_ledger_keeps_people_apart():
    ledger = UsageLedger()
    ledger.record("a", input_tokens=10, output_tokens=2, latency_s=0.5, ok=True)
    ledger.record("a", input_tokens=5, output_tokens=1, latency_s=0.25, ok=False)
    ledger.record("b", input_tokens=1, output_tokens=1, latency_s=0.1, ok=True)
    a = ledger.totals("a")
    assert (a.calls, a.failed_calls, a.input_tokens, a.output_tokens) == (2, 1, 15, 3)
    assert a.latency_s == pytest.approx(0.75)
    assert ledger.totals("b").calls == 1 and ledger.people() == ["a", "b"]
    a.calls = 99
    assert ledger.totals("a").calls == 2
