"""The one gRPC server bootstrap: health, reflection, signals and a graceful drain."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from violet.channels import SERVER_KEEPALIVE_OPTIONS
from violet.logs import setup_logging
from violet.settings import CommonSettings, S, load_settings
from violet.telemetry import server_interceptors, setup_telemetry, shutdown_telemetry
from violet.unavailable import DependencyUnavailable

log = logging.getLogger(__name__)

SERVER_OPTIONS = [
    # Clients reconnect now and then, so new replicas behind a Kubernetes Service get their
    # share of the long-lived connections; a cut stream is resumed by its caller.
    ("grpc.max_connection_age_ms", 10 * 60 * 1000),
    ("grpc.max_connection_age_grace_ms", 60 * 1000),
    # An address another server holds is refused, never shared with it.
    ("grpc.so_reuseport", 0),
    *SERVER_KEEPALIVE_OPTIONS,
]

# Adds the service's servicers to the server; returns the full names of the services it added.
Register = Callable[[grpc.aio.Server], Sequence[str]]


@dataclass(frozen=True)
class Hosted:
    """What a service hands the bootstrap: how to register it, and what to do when draining."""

    register: Register
    # Ends long-lived streams so the drain does not wait out its grace period on them.
    on_drain: Callable[[], None] = lambda: None


async def serve(
    name: str,
    settings: CommonSettings,
    resources: Callable[[], AbstractAsyncContextManager[Hosted]],
) -> None:
    """Runs one service until SIGINT/SIGTERM, then drains in-flight calls and stops.

    `resources` opens what the service needs (databases, clients) and yields how to host it;
    it is closed after the server has stopped.
    """
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async with resources() as hosted:
        server = grpc.aio.server(interceptors=server_interceptors(), options=SERVER_OPTIONS)
        names = list(hosted.register(server))
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            [
                *names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ],
            server,
        )
        address = settings.bind_address(name)
        if server.add_insecure_port(address) == 0:
            raise SystemExit(f"{name} cannot listen on {address}: is another process using it?")
        await server.start()
        for service_name in ["", *names]:
            await health_servicer.set(service_name, health_pb2.HealthCheckResponse.SERVING)
        log.info("serving", extra={"address": address, "services": names})

        await stop.wait()
        log.info("draining", extra={"grace_s": settings.drain_s})
        await health_servicer.enter_graceful_shutdown()
        hosted.on_drain()
        await server.stop(settings.drain_s)
    log.info("stopped")


def run(
    name: str,
    settings_class: type[S],
    resources: Callable[[S], AbstractAsyncContextManager[Hosted]],
    migrate: Callable[[S], None] | None = None,
) -> None:
    """A service's `python -m NAME` entry: settings, logs, migrations, then serve.

    `python -m NAME migrate` applies the migrations and exits (the deploy's migration job).
    """
    settings = load_settings(settings_class)
    setup_logging(name, settings.log_level, settings.log_format)
    if migrate is not None:
        migrate(settings)
    if sys.argv[1:] == ["migrate"]:
        return
    if sys.argv[1:]:
        raise SystemExit(f"usage: python -m {name} [migrate]")
    setup_telemetry(name)
    try:
        asyncio.run(serve(name, settings, lambda: resources(settings)))
    except DependencyUnavailable as error:
        raise SystemExit(f"{name} cannot start: {error}") from None
    finally:
        shutdown_telemetry()
