"""What every model call costs: a span per call (gen_ai semantic conventions), an OpenTelemetry
token counter, and per-person totals kept in process.

Message text goes on spans only when `VIOLET_TRACE_CONTENT=1`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, Status, StatusCode

from violet.models.base import Usage
from violet.models.errors import ModelOutputInvalid, ModelRejected, ModelUnavailable
from violet.telemetry import content_allowed as trace_content

SYSTEM = "anthropic"

_tracer = trace.get_tracer(__name__)
_meter = metrics.get_meter(__name__)
_tokens = _meter.create_counter(
    "violet.model.tokens", unit="{token}", description="Tokens used by model calls."
)
_duration = _meter.create_histogram(
    "gen_ai.client.operation.duration", unit="s", description="Duration of model calls."
)


def opaque_user_id(person: str) -> str:
    """What the API and the spans see of the person: a stable hash, never the id itself."""
    return hashlib.sha256(person.encode()).hexdigest()[:32]


@dataclass
class UsageTotals:
    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0


class UsageLedger:
    """Per-person totals of model use since the process started. Safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[str, UsageTotals] = {}

    def record(
        self, person: str, *, input_tokens: int, output_tokens: int, latency_s: float, ok: bool
    ) -> None:
        with self._lock:
            totals = self._totals.setdefault(person, UsageTotals())
            totals.calls += 1
            totals.failed_calls += 0 if ok else 1
            totals.input_tokens += input_tokens
            totals.output_tokens += output_tokens
            totals.latency_s += latency_s

    def totals(self, person: str) -> UsageTotals:
        with self._lock:
            found = self._totals.get(person, UsageTotals())
            return UsageTotals(**vars(found))

    def people(self) -> list[str]:
        with self._lock:
            return sorted(self._totals)


LEDGER = UsageLedger()
"""The process-wide ledger clients use unless given their own."""


def outcome_of(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    for kind, name in (
        (ModelUnavailable, "unavailable"),
        (ModelRejected, "rejected"),
        (ModelOutputInvalid, "invalid"),
    ):
        if isinstance(error, kind):
            return name
    return "error"


@dataclass
class CallRecord:
    """Filled in while a call runs; written to the span, the ledger and the counters at its end."""

    span: Span
    model: str
    started: float
    attempts: int = 0
    usage: Usage | None = None
    finish_reason: str | None = None
    response_id: str | None = None

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def answered(
        self,
        usage: Usage,
        *,
        finish_reason: str,
        content: list[dict],
        response_id: str | None = None,
    ) -> None:
        self.usage = usage
        self.finish_reason = finish_reason
        self.response_id = response_id
        if trace_content():
            self.span.set_attribute("gen_ai.output.messages", _as_json(content))


def _as_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@contextmanager
def model_call(
    *,
    ledger: UsageLedger,
    person: str,
    call: str,
    model: str,
    system: str | None,
    messages: list[dict],
    max_tokens: int | None = None,
) -> Iterator[CallRecord]:
    """Wraps one model call (with all its retries). `call` names it, e.g. `reply.main`."""
    attributes: dict = {
        "gen_ai.system": SYSTEM,
        "gen_ai.provider.name": SYSTEM,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "violet.model.call": call,
        # An opaque digest: spans name no person unless content tracing is on.
        "violet.person": person if trace_content() else opaque_user_id(person),
    }
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    if trace_content():
        if system:
            attributes["gen_ai.system_instructions"] = system
        attributes["gen_ai.input.messages"] = _as_json(messages)
    started = time.monotonic()
    with _tracer.start_as_current_span(
        f"chat {model}",
        kind=trace.SpanKind.CLIENT,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        record = CallRecord(span=span, model=model, started=started)
        error: BaseException | None = None
        try:
            yield record
        except BaseException as failure:
            error = failure
            raise
        finally:
            _finish(record, ledger, person, call, record.elapsed_s(), error)


def _finish(
    record: CallRecord,
    ledger: UsageLedger,
    person: str,
    call: str,
    latency_s: float,
    error: BaseException | None,
) -> None:
    usage = record.usage
    input_tokens = usage.input_tokens if usage else 0
    output_tokens = usage.output_tokens if usage else 0
    outcome = outcome_of(error)
    span = record.span
    span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
    span.set_attribute("violet.model.latency_s", round(latency_s, 6))
    span.set_attribute("violet.model.outcome", outcome)
    span.set_attribute("violet.model.attempts", record.attempts)
    if usage:
        span.set_attribute("gen_ai.response.model", usage.model)
    if record.finish_reason:
        span.set_attribute("gen_ai.response.finish_reasons", (record.finish_reason,))
    if record.response_id:
        span.set_attribute("gen_ai.response.id", record.response_id)
    if error is not None:
        span.set_attribute("error.type", type(error).__name__)
        span.set_status(Status(StatusCode.ERROR, str(error)))
    ledger.record(
        person,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        latency_s=latency_s,
        ok=error is None,
    )
    common = {
        "gen_ai.request.model": record.model,
        "violet.model.call": call,
        "violet.model.outcome": outcome,
    }
    # Per-person totals live in the ledger; a metric label per person would not scale.
    _tokens.add(input_tokens, {**common, "gen_ai.token.type": "input"})
    _tokens.add(output_tokens, {**common, "gen_ai.token.type": "output"})
    _duration.record(latency_s, common)
