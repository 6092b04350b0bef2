"""The gateway's HTTP face: the phone protocol's websocket and the health check."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute

from gateway.limits import SayLimiter
from gateway.live import LiveEndpoint
from gateway.settings import GatewaySettings
from violet.channels import Peers
from violet.identity import resolve_secret

# The services a device's requests reach directly.
NEEDED = ("session", "memory")
HEALTH_TIMEOUT_S = 2.0


async def _serving(peers: Peers, service: str) -> bool:
    stub = health_pb2_grpc.HealthStub(peers.channel(service))
    try:
        answer = await stub.Check(health_pb2.HealthCheckRequest(), timeout=HEALTH_TIMEOUT_S)
    except grpc.aio.AioRpcError:
        return False
    return answer.status == health_pb2.HealthCheckResponse.SERVING


def create_app(settings: GatewaySettings, peers: Peers) -> Starlette:
    live = LiveEndpoint(
        peers,
        resolve_secret(settings.secret, settings.home),
        SayLimiter(settings.says_per_minute, settings.say_burst),
        settings.hello_timeout_s,
    )

    async def healthz(_: Request) -> JSONResponse:
        states = await asyncio.gather(*(_serving(peers, name) for name in NEEDED))
        status = {name: "up" if up else "down" for name, up in zip(NEEDED, states, strict=True)}
        return JSONResponse(status, status_code=200 if all(states) else 503)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await peers.close()

    return Starlette(
        routes=[Route("/healthz", healthz), WebSocketRoute("/v1/live", live.serve)],
        lifespan=lifespan,
    )
