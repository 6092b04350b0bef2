"""The one telemetry setup: traces and metrics over OTLP, and a JSON-lines span file.

Configured only by the standard `OTEL_*` variables (service name, resource attributes, the OTLP
endpoint and protocol, each also per signal) plus `VIOLET_TRACE_FILE`, which appends every
finished span as one JSON line, and `VIOLET_TRACE_CONTENT=1`, which allows message text on spans
for debugging.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

import grpc
from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.grpc import aio_client_interceptors
from opentelemetry.instrumentation.grpc._aio_server import (
    OpenTelemetryAioServerInterceptor,
    _OpenTelemetryAioServicerContext,
)
from opentelemetry.propagate import extract, inject
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from violet.settings import SettingsError

# Methods of plumbing, not turns (health checks, reflection): their calls make no spans.
_PLUMBING = ("/grpc.health.v1.Health/", "/grpc.reflection.")


def _traced(details: Any) -> bool:
    """Whether a call is traced: a prefix test, where the instrumentation's composed filters
    split and normalise the method's path on every call, served or made."""
    method = details.method
    if isinstance(method, bytes):  # grpc.aio's client details carry bytes (grpc issue 31092)
        method = method.decode()
    return not method.startswith(_PLUMBING)


# What the OTLP exporters speak. gRPC stays the default, as it was before HTTP came, and as the
# OpenTelemetry Python exporters default to.
OTLP_PROTOCOLS = ("grpc", "http/protobuf")
DEFAULT_OTLP_PROTOCOL = "grpc"


def content_allowed() -> bool:
    """Message text and personal facts go on spans only when debugging asks for it."""
    return os.environ.get("VIOLET_TRACE_CONTENT") == "1"


class JsonLinesSpanExporter(SpanExporter):
    """Appends each span as one JSON line; several processes may share the file."""

    def __init__(self, path: str, service: str) -> None:
        self._path = path
        self._service = service
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(self._entry(span), default=str) + "\n" for span in spans)
        with self._lock, open(self._path, "a", encoding="utf-8") as file:
            file.write(lines)  # one write of whole lines, so processes never interleave a line
        return SpanExportResult.SUCCESS

    def _entry(self, span: ReadableSpan) -> dict[str, object]:
        trace_id, span_id = hex_ids(span.get_span_context() or trace.INVALID_SPAN_CONTEXT)
        return {
            "trace_id": trace_id,
            "span_id": span_id,
            "parent_id": hex_ids(span.parent)[1] if span.parent else None,
            "name": span.name,
            "service": self._service,
            "attributes": dict(span.attributes or {}),
            "links": [
                dict(zip(("trace_id", "span_id"), hex_ids(link.context), strict=True))
                for link in span.links
            ],
            "start": span.start_time,
            "end": span.end_time,
        }

    def shutdown(self) -> None:
        pass


def otlp_protocol(signal: str) -> str | None:
    """The OTLP protocol for `signal` ("traces" or "metrics"), or None when it has no endpoint.

    The per-signal variables win over the general ones, as the OpenTelemetry specification says.
    """
    per_signal = f"OTEL_EXPORTER_OTLP_{signal.upper()}_"
    endpoints = (per_signal + "ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    if not any(os.environ.get(variable) for variable in endpoints):
        return None
    for variable in (per_signal + "PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        protocol = os.environ.get(variable, "").strip()
        if not protocol:
            continue
        if protocol not in OTLP_PROTOCOLS:
            print(
                f"Violet cannot start; fix these settings:\n  {variable}: {protocol!r} is not "
                f"supported; use one of {', '.join(OTLP_PROTOCOLS)}",
                file=sys.stderr,
            )
            raise SettingsError(2)
        return protocol
    return DEFAULT_OTLP_PROTOCOL


def otlp_span_exporter() -> SpanExporter | None:
    """The OTLP span exporter the environment asks for; it reads its endpoint, headers, TLS and
    timeout from the standard variables itself."""
    protocol = otlp_protocol("traces")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as OTLPHttpSpanExporter,
        )

        return OTLPHttpSpanExporter()
    return None


def otlp_metric_exporter() -> MetricExporter | None:
    protocol = otlp_protocol("metrics")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
            OTLPMetricExporter as OTLPHttpMetricExporter,
        )

        return OTLPHttpMetricExporter()
    return None


def setup_telemetry(service: str) -> None:
    """Installs the tracer and meter providers for this process (once, at start)."""
    name = os.environ.get("OTEL_SERVICE_NAME") or service
    resource = Resource.create({"service.name": name, "service.namespace": "violet"})
    tracer_provider = TracerProvider(resource=resource)
    span_exporter = otlp_span_exporter()
    if span_exporter is not None:
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    metric_exporter = otlp_metric_exporter()
    readers = [] if metric_exporter is None else [PeriodicExportingMetricReader(metric_exporter)]
    trace_file = os.environ.get("VIOLET_TRACE_FILE")
    if trace_file:
        exporter = JsonLinesSpanExporter(trace_file, name)
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))


def shutdown_telemetry() -> None:
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.shutdown()
    meter_provider = metrics.get_meter_provider()
    if isinstance(meter_provider, MeterProvider):
        meter_provider.shutdown()


# A handler of any method's stream: its messages are of any type, and its context may be the
# instrumentation's wrapper of the call's.
StreamHandler = Callable[[Any, Any], AsyncGenerator[Any, None]]


class _ServerInterceptor(OpenTelemetryAioServerInterceptor):
    """The instrumentation's server interceptor, with streamed replies traced step by step.

    Its own stream handler keeps the call's context attached across every `yield`; a stream the
    client leaves (a device gone) is closed later from another task, where that context cannot
    be detached ("Failed to detach context"). Here the call's context is current only while the
    handler computes its next reply: attached and detached within that one step."""

    def _intercept_aio_server_stream(
        self, behavior: StreamHandler, handler_call_details: grpc.HandlerCallDetails
    ) -> StreamHandler:
        async def stream(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncGenerator[Any, None]:
            metadata = {key: value for key, value in context.invocation_metadata() or ()}
            parent = extract(metadata)
            service, _, method = handler_call_details.method.lstrip("/").partition("/")
            span = self._tracer.start_span(
                handler_call_details.method,
                context=parent,
                kind=trace.SpanKind.SERVER,
                attributes={
                    "rpc.system": "grpc",
                    "rpc.service": service,
                    "rpc.method": method,
                    "rpc.grpc.status_code": grpc.StatusCode.OK.value[0],
                },
            )
            current = trace.set_span_in_context(span, parent)
            replies = behavior(request, _OpenTelemetryAioServicerContext(context, span))
            try:
                while True:
                    token = otel_context.attach(current)
                    try:
                        reply = await anext(replies)
                    except StopAsyncIteration:
                        return
                    except Exception as error:
                        if type(error) is not Exception:  # a plain Exception is an abort
                            span.record_exception(error)
                        raise
                    finally:
                        otel_context.detach(token)
                    yield reply
            finally:
                await replies.aclose()
                span.end()

        return stream


def server_interceptors() -> list:
    tracer = trace.get_tracer("opentelemetry.instrumentation.grpc")
    return [_ServerInterceptor(tracer, filter_=_traced)]


def client_interceptors() -> list:
    return list(aio_client_interceptors(filter_=_traced))


# Work that continues after the call that asked for it (a turn, background work) keeps where it
# came from: the session stores the whole context (`carrier`), the worker the span's two ids.


def hex_ids(context: trace.SpanContext) -> tuple[str, str]:
    """A span's trace id and span id in hex, as W3C trace context, traces and logs write them."""
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def current_span_ids() -> tuple[str, str] | None:
    """The current span's ids, or None outside a span."""
    context = trace.get_current_span().get_span_context()
    return hex_ids(context) if context.is_valid else None


def links_to(trace_id: str | None, span_id: str | None) -> list[trace.Link]:
    """A link to the span stored as `current_span_ids`, or none when nothing was stored."""
    if not (trace_id and span_id):
        return []
    origin = trace.SpanContext(
        int(trace_id, 16),
        int(span_id, 16),
        is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    return [trace.Link(origin)]


def carrier() -> str:
    """The current trace context as text, to store beside work that continues later."""
    headers: dict[str, str] = {}
    inject(headers)
    return json.dumps(headers) if headers else ""


def context_from(stored: str | None) -> Context | None:
    """The trace context stored by `carrier`, or None."""
    if not stored:
        return None
    return extract(json.loads(stored))


def span_context_from(stored: str | None) -> trace.SpanContext | None:
    context = context_from(stored)
    if context is None:
        return None
    span_context = trace.get_current_span(context).get_span_context()
    return span_context if span_context.is_valid else None
