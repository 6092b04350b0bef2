"""`violet run`: the five services as child processes, ready when every one answers its health.

Ctrl-C (SIGINT) or SIGTERM stops them all, each draining cleanly; if one dies, all stop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc

from violet.identity import resolve_operator_secret, resolve_secret
from violet.settings import CommonSettings, load_settings
from violet.tls import local_authority, transport_of

# Started in this order: the ones others call first.
SERVICES = ("memory", "router", "worker", "session", "gateway")
# The gRPC service each one serves: its health is asked by this name, so an address where
# another service answers is not taken for this one's.
GRPC_SERVICES = {
    "memory": "violet.v1.Memory",
    "router": "violet.v1.Router",
    "worker": "violet.v1.Worker",
    "session": "violet.v1.Session",
}
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0

_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on now, for a stack started beside others. The kernel
    may offer a port it offered before once that probe is closed; one already handed out in
    this process (to a service that may not be listening yet) is never handed out again."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def serving(address: str, service: str, credentials: grpc.ChannelCredentials | None = None) -> bool:
    """Whether the gRPC server at `address` serves `service` (a key of GRPC_SERVICES); over TLS
    with `credentials`."""
    if credentials is None:
        opened = grpc.insecure_channel(address)
    else:
        opened = grpc.secure_channel(address, credentials)
    with opened as channel:
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            # The health package's stubs declare no client methods.
            answer: health_pb2.HealthCheckResponse = stub.Check(  # type: ignore[attr-defined]
                health_pb2.HealthCheckRequest(service=GRPC_SERVICES[service]), timeout=1.0
            )
        except grpc.RpcError:
            return False
        return answer.status == health_pb2.HealthCheckResponse.SERVING


def gateway_url(settings: CommonSettings) -> str:
    return f"http://{settings.gateway_addr}"


def ready(settings: CommonSettings) -> bool:
    credentials = transport_of(settings, "operator").channel_credentials()
    if not all(serving(settings.address_of(name), name, credentials) for name in GRPC_SERVICES):
        return False
    try:
        return httpx.get(gateway_url(settings) + "/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def start(
    settings: CommonSettings, env: dict[str, str] | None = None, quiet: bool = False
) -> dict[str, subprocess.Popen[bytes]]:
    environment = {**os.environ, "VIOLET_HOME": str(settings.home), **(env or {})}
    resolve_secret(settings.secret, settings.home)  # made once, before five readers race
    resolve_operator_secret(environment.get("VIOLET_OPERATOR_SECRET", ""), settings.home)
    local_authority(settings.home)  # so that VIOLET_GRPC_TLS=on works as it is
    output = subprocess.DEVNULL if quiet else None
    return {
        name: subprocess.Popen(
            [sys.executable, "-m", name], env=environment, stdout=output, stderr=output
        )
        for name in SERVICES
    }


def stop(children: dict[str, subprocess.Popen[bytes]]) -> None:
    for child in reversed(children.values()):
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for child in children.values():
        try:
            child.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()


def taken_addresses(settings: CommonSettings) -> list[str]:
    """The services' addresses another program already listens on. Connections of a stack
    that just stopped may linger in TIME_WAIT on them; the services bind with SO_REUSEADDR,
    so those do not count, and neither do they here."""
    taken = []
    for service in SERVICES:
        host, _, port = settings.address_of(service).rpartition(":")
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, int(port)))
            except OSError:
                taken.append(f"{host}:{port} ({service})")
    return taken


def run_stack() -> int:
    settings = load_settings(CommonSettings)
    taken = taken_addresses(settings)
    if taken:
        print(
            f"Violet cannot start: {', '.join(taken)} is already in use by another program. "
            "Stop it, or choose other addresses with VIOLET_GATEWAY_ADDR, VIOLET_SESSION_ADDR, "
            "VIOLET_ROUTER_ADDR, VIOLET_MEMORY_ADDR and VIOLET_WORKER_ADDR.",
            file=sys.stderr,
        )
        return 1
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    children = start(settings)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        announced = False
        while not stopping.is_set():
            dead = [name for name, child in children.items() if child.poll() is not None]
            if dead:
                print(f"Violet stopped: the {dead[0]} service exited.", file=sys.stderr)
                return 1
            if not announced:
                if ready(settings):
                    announce(f"Violet is ready: {gateway_url(settings)}")
                    announced = True
                elif time.monotonic() > deadline:
                    print("Violet did not become ready in time.", file=sys.stderr)
                    return 1
            time.sleep(0.2)
        return 0
    finally:
        print("Stopping Violet...", file=sys.stderr, flush=True)
        stop(children)
        print(f"Violet has stopped. What she knows is kept in {settings.home}.", file=sys.stderr)


def announce(line: str) -> None:
    """The ready line, on its own line of stdout; set apart from the logs on a terminal."""
    print(f"\n{line}\n" if sys.stdout.isatty() else line, flush=True)
