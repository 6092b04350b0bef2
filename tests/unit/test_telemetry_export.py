"""OTLP export, chosen by the standard variables: spans reach a collector over HTTP/protobuf or
gRPC, the per-signal variables win over the general ones, and an unknown protocol stops the start
with a plain message."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from violet.telemetry import otlp_protocol

# A service's start and stop, as `python -m NAME` does them, with one span and one counted call.
PROGRAM = """
from opentelemetry import metrics, trace
from violet.telemetry import setup_telemetry, shutdown_telemetry
setup_telemetry("probe")
trace.get_tracer("probe").start_span("a turn").end()
metrics.get_meter("probe").create_counter("probe.calls").add(1)
shutdown_telemetry()
"""


@dataclass(frozen=True)
class Received:
    path: str
    content_type: str
    body: bytes


@dataclass(frozen=True)
class Receiver:
    url: str
    posts: queue.Queue[Received]

    def next(self, path: str) -> Received:
        while True:
            post = self.posts.get(timeout=10)
            if post.path == path:
                return post


@pytest.fixture
def http_receiver() -> Iterator[Receiver]:
    """A collector's OTLP/HTTP endpoint: takes POST /v1/traces and /v1/metrics."""
    posts: queue.Queue[Received] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            posts.put(Received(self.path, self.headers["Content-Type"], body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Receiver(f"http://127.0.0.1:{server.server_address[1]}", posts)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def grpc_receiver() -> Iterator[Receiver]:
    """A collector's OTLP/gRPC endpoint for traces."""
    posts: queue.Queue[Received] = queue.Queue()

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request, context):  # type: ignore[no-untyped-def]  # noqa: N802
            posts.put(Received("Export", "application/grpc", request.SerializeToString()))
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield Receiver(f"http://127.0.0.1:{port}", posts)
    finally:
        server.stop(None)


def run_service(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def span_names(body: bytes) -> set[str]:
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    return {
        span.name
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    }


def service_names(body: bytes) -> set[str]:
    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
    return {
        attribute.value.string_value
        for resource_spans in request.resource_spans
        for attribute in resource_spans.resource.attributes
        if attribute.key == "service.name"
    }


def test_spans_and_metrics_reach_a_collector_over_http_protobuf(http_receiver: Receiver) -> None:
    finished = run_service(
        {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_ENDPOINT": http_receiver.url,
        }
    )
    assert finished.returncode == 0, finished.stderr
    traces = http_receiver.next("/v1/traces")
    assert traces.content_type == "application/x-protobuf"
    assert span_names(traces.body) == {"a turn"}
    assert service_names(traces.body) == {"probe"}
    metrics = metrics_service_pb2.ExportMetricsServiceRequest.FromString(
        http_receiver.next("/v1/metrics").body
    )
    names = {
        metric.name
        for resource_metrics in metrics.resource_metrics
        for scope_metrics in resource_metrics.scope_metrics
        for metric in scope_metrics.metrics
    }
    assert "probe.calls" in names


def test_grpc_stays_the_default_protocol(grpc_receiver: Receiver) -> None:
    finished = run_service({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": grpc_receiver.url})
    assert finished.returncode == 0, finished.stderr
    assert span_names(grpc_receiver.next("Export").body) == {"a turn"}


def test_the_per_signal_protocol_and_endpoint_win_over_the_general_ones(
    http_receiver: Receiver,
) -> None:
    finished = run_service(
        {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{http_receiver.url}/v1/traces",
        }
    )
    assert finished.returncode == 0, finished.stderr
    assert span_names(http_receiver.next("/v1/traces").body) == {"a turn"}


def test_a_signal_without_an_endpoint_is_not_exported(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    assert otlp_protocol("traces") == "http/protobuf"
    assert otlp_protocol("metrics") is None


def test_an_unknown_protocol_stops_the_start_naming_the_variable() -> None:
    finished = run_service(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
        }
    )
    assert finished.returncode == 2
    assert "OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' is not supported" in finished.stderr
    assert "Traceback" not in finished.stderr
