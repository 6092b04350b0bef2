"""What every model call costs: one span per call (gen_ai semantic conventions), the
`gen_ai.client.token.usage` histogram, and per-person totals kept in process.

Message text goes on spans only when `VIOLET_TRACE_CONTENT=1`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from violet.metrics import MODEL_COST, MODEL_SECONDS, MODEL_TOKENS
from violet.models.base import System, Usage
from violet.models.cache import system_text
from violet.models.errors import ModelOutputInvalid, ModelRejected, ModelUnavailable
from violet.models.messages import ContentBlock, ModelMessage
from violet.models.prices import cost_usd
from violet.telemetry import content_allowed as trace_content

SYSTEM = "anthropic"

_tracer = trace.get_tracer(__name__)


# The pseudonym of the person the running call is for (`Credential.pseudonym`): all the API
# and the spans see of them. Empty for a call made for nobody's account (a key's check).
_pseudonym: ContextVar[str] = ContextVar("violet_pseudonym", default="")


@contextmanager
def calling_as(pseudonym: str) -> Iterator[None]:
    """Calls made in the block name their person by `pseudonym`."""
    token = _pseudonym.set(pseudonym)
    try:
        yield
    finally:
        _pseudonym.reset(token)


def current_pseudonym() -> str:
    return _pseudonym.get()


@dataclass
class UsageTotals:
    """Sums over calls. Input tokens as the API counts them: `input_tokens` read afresh,
    `cache_write_tokens` written to the prompt cache, `cache_read_tokens` read from it."""

    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0  # of the calls the price table prices (`violet.models.prices`)

    def add(self, other: UsageTotals) -> None:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


class UsageLedger:
    """Per-person totals of model use since the process started, by call (`reply.main`,
    `structured.fold`, ...). Safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[tuple[str, str], UsageTotals] = {}

    def record(
        self, person: str, call: str, usage: Usage | None, latency_s: float, ok: bool
    ) -> None:
        """One call; `usage` is None when the call failed before the API counted anything."""
        one = UsageTotals(calls=1, failed_calls=0 if ok else 1, latency_s=latency_s)
        if usage is not None:
            one.input_tokens = usage.input_tokens
            one.cache_write_tokens = usage.cache_write_tokens
            one.cache_read_tokens = usage.cache_read_tokens
            one.output_tokens = usage.output_tokens
            one.cost_usd = cost_usd(usage) or 0.0
        with self._lock:
            self._totals.setdefault((person, call), UsageTotals()).add(one)

    def totals(self, person: str, call: str | None = None) -> UsageTotals:
        """The person's totals over every call, or over the calls named `call`."""
        summed = UsageTotals()
        with self._lock:
            for (who, what), totals in self._totals.items():
                if who == person and call in (None, what):
                    summed.add(totals)
        return summed

    def people(self) -> list[str]:
        with self._lock:
            return sorted({person for person, _ in self._totals})


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
    call: str
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
        content: list[ContentBlock],
        response_id: str | None = None,
    ) -> None:
        """One request of the call answered; a call that took several requests (a paused or
        cut answer continued) adds their usage up."""
        self.usage = usage if self.usage is None else self.usage.plus(usage)
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
    system: System | None,
    messages: list[ModelMessage],
    max_tokens: int | None = None,
    server: tuple[str, int] | None = None,
) -> Iterator[CallRecord]:
    """Wraps one model call (with all its retries) in its one span. `call` names it, e.g.
    `reply.main`; `server` is the API's host and port."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.system": SYSTEM,
        "gen_ai.provider.name": SYSTEM,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "violet.model.call": call,
    }
    # A pseudonym: spans name no person unless content tracing is on.
    named = person if trace_content() else current_pseudonym()
    if named:
        attributes["violet.person"] = named
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    if server is not None:
        attributes["server.address"], attributes["server.port"] = server
    if trace_content():
        if system:
            attributes["gen_ai.system_instructions"] = system_text(system)
        attributes["gen_ai.input.messages"] = _as_json(messages)
    started = time.monotonic()
    with _tracer.start_as_current_span(
        f"chat {model}",
        kind=trace.SpanKind.CLIENT,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        record = CallRecord(span=span, call=call, model=model, started=started)
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
    outcome = outcome_of(error)
    span = record.span
    if usage:
        # The conventions count the whole prompt as input, cached parts included.
        span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("gen_ai.response.model", usage.model)
        dollars = cost_usd(usage)
        if dollars is not None:
            span.set_attribute("violet.model.cost_usd", round(dollars, 8))
    span.set_attribute("violet.model.latency_s", round(latency_s, 6))
    span.set_attribute("violet.model.outcome", outcome)
    span.set_attribute("violet.model.attempts", record.attempts)
    if record.finish_reason:
        span.set_attribute("gen_ai.response.finish_reasons", (record.finish_reason,))
    if record.response_id:
        span.set_attribute("gen_ai.response.id", record.response_id)
    if error is not None:
        span.set_attribute("error.type", type(error).__name__)
        span.set_status(Status(StatusCode.ERROR, str(error)))
    ledger.record(person, call, usage, latency_s, ok=error is None)
    # Per-person totals live in the ledger; a metric label per person would not scale.
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": SYSTEM,
        "gen_ai.request.model": record.model,
        "violet.model.call": call,
        "violet.model.outcome": outcome,
    }
    if error is not None:
        common["error.type"] = type(error).__name__
    MODEL_SECONDS.record(latency_s, common)
    if usage:
        _record_tokens(usage, common)
        dollars = cost_usd(usage)
        if dollars is not None:
            MODEL_COST.add(dollars, {**common, "gen_ai.response.model": usage.model})


def _record_tokens(usage: Usage, common: dict[str, str]) -> None:
    """Input is recorded in parts by `violet.token.cache` (`none`: read afresh, `read`, `write`),
    so the parts sum to the conventions' input and the cached share can be read off."""
    common = {**common, "gen_ai.response.model": usage.model}
    parts = (
        ("none", usage.input_tokens),
        ("read", usage.cache_read_tokens),
        ("write", usage.cache_write_tokens),
    )
    for cache, tokens in parts:
        if tokens or cache == "none":
            MODEL_TOKENS.record(
                tokens, {**common, "gen_ai.token.type": "input", "violet.token.cache": cache}
            )
    MODEL_TOKENS.record(usage.output_tokens, {**common, "gen_ai.token.type": "output"})
