"""The one gRPC server bootstrap: health, reflection, signals and a graceful drain; and the one
command line of `python -m NAME`, where a service adds its own commands."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from violet.channels import SERVER_KEEPALIVE_OPTIONS
from violet.identity import addressed_to
from violet.logs import setup_logging
from violet.settings import CommonSettings, S, load_settings
from violet.telemetry import server_interceptors, setup_telemetry, shutdown_telemetry
from violet.tls import transport_of
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
    credentials = transport_of(settings, name).server_credentials()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async with resources() as hosted:
        interceptors = [*server_interceptors(), AddressedTo(name)]
        server = grpc.aio.server(interceptors=interceptors, options=SERVER_OPTIONS)
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
        listen(server, name, address, credentials)
        probes = probe_server(name, health_servicer, settings.health_addr if credentials else "")
        await server.start()
        if probes is not None:
            await probes.start()
        for service_name in ["", *names]:
            await health_servicer.set(service_name, health_pb2.HealthCheckResponse.SERVING)
        settle_heap()
        log.info("serving", extra={"address": address, "services": names, "tls": bool(credentials)})

        await stop.wait()
        log.info("draining", extra={"grace_s": settings.drain_s})
        await health_servicer.enter_graceful_shutdown()
        hosted.on_drain()
        await server.stop(settings.drain_s)
        if probes is not None:
            await probes.stop(None)
    log.info("stopped")


class AddressedTo(grpc.aio.ServerInterceptor):
    """Refuses a call whose internal token is addressed to other services, before its method
    runs (`violet.identity.addressed_to`)."""

    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        metadata = handler_call_details.invocation_metadata
        if handler is None or addressed_to(metadata, self._service):
            return handler
        return _refusing(handler, f"the token is not for the {self._service} service")


def _refusing(
    handler: grpc.RpcMethodHandler[Any, Any], why: str
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same shape as `handler` that refuses the call with `why`."""

    async def refuse(request: object, context: grpc.aio.ServicerContext) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)

    async def refuse_stream(
        request: object, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, why)
        yield  # never reached: a stream's handler is a generator

    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(
            refuse_stream, handler.request_deserializer, handler.response_serializer
        )
    return grpc.unary_unary_rpc_method_handler(
        refuse, handler.request_deserializer, handler.response_serializer
    )


def listen(
    server: grpc.aio.Server, name: str, address: str, credentials: grpc.ServerCredentials | None
) -> None:
    """Binds `address` for `name`, over TLS when there are credentials; exits plainly when the
    address is taken."""
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        raise SystemExit(f"{name} cannot listen on {address}: is another process using it?")


def probe_server(
    name: str, health_servicer: health.aio.HealthServicer, address: str
) -> grpc.aio.Server | None:
    """The health service alone, in plain text at `address`: the kubelet's gRPC probes cannot
    speak TLS. It tells whether the service serves, and reaches nothing else."""
    if not address:
        return None
    probes = grpc.aio.server(options=SERVER_OPTIONS)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, probes)
    listen(probes, f"{name}'s health", address, None)
    return probes


def settle_heap() -> None:
    """What start-up made (modules, caches, the models) lives as long as the process: frozen out
    of the collector's sight, so a full collection scans only what serving made since. Before,
    each full collection walked about 285,000 objects, 0.14 s of CPU in the middle of the load
    (docs/benchmarks.md)."""
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class Command:
    """A command of `python -m NAME` besides serving and `migrate`."""

    name: str
    help: str
    # Runs the command with its parsed arguments; returns the process's exit status.
    run: Callable[[argparse.Namespace], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None


def start(name: str, settings_class: type[S], migrate: Callable[[S], None] | None) -> S:
    """How every command that works on the service's storage begins: settings, logs, then
    migrations."""
    settings = load_settings(settings_class)
    setup_logging(name, settings.log_level, settings.log_format)
    if migrate is not None:
        migrate(settings)
    return settings


def command_line(name: str, commands: Sequence[Command], migrates: bool) -> argparse.ArgumentParser:
    """`python -m NAME [COMMAND ...]`: serves when no command is given."""
    parser = argparse.ArgumentParser(prog=f"python -m {name}", description=f"Serves {name}.")
    parser.set_defaults(command=None)
    if not (migrates or commands):
        return parser
    chosen = parser.add_subparsers(dest="command", metavar="[COMMAND]")
    if migrates:
        chosen.add_parser("migrate", help="apply the database migrations and exit")
    for command in commands:
        command.add_arguments(chosen.add_parser(command.name, help=command.help))
    return parser


def run(
    name: str,
    settings_class: type[S],
    resources: Callable[[S], AbstractAsyncContextManager[Hosted]],
    migrate: Callable[[S], None] | None = None,
    commands: Sequence[Command] = (),
) -> None:
    """A service's `python -m NAME` entry: settings, logs, migrations, then serve.

    `python -m NAME migrate` applies the migrations and exits (the deploy's migration job);
    `python -m NAME COMMAND ...` runs one of the service's own `commands` instead.
    """
    args = command_line(name, commands, migrate is not None).parse_args()
    for command in commands:
        if args.command == command.name:
            sys.exit(command.run(args))
    settings = start(name, settings_class, migrate)
    if args.command == "migrate":
        return
    setup_telemetry(name)
    try:
        asyncio.run(serve(name, settings, lambda: resources(settings)))
    except DependencyUnavailable as error:
        raise SystemExit(f"{name} cannot start: {error}") from None
    finally:
        shutdown_telemetry()
