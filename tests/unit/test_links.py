"""Links between services: the clients' keepalive pings are what the servers accept, so no
server answers an idle client with GOAWAY `too_many_pings` (measured: with the servers'
defaults, an idle channel's third ping, 150 s in, got one).

The pings are tested as they are, on a real server and channel, with every interval of both
sides divided by the same factor so that a minute of pings takes two seconds."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from violet.channels import CHANNEL_OPTIONS, KEEPALIVE_TIME_MS
from violet.server import SERVER_OPTIONS

FASTER = 30
IDLE_S = 6.0
PING_INTERVALS = {
    "grpc.keepalive_time_ms",
    "grpc.keepalive_timeout_ms",
    "grpc.http2.min_ping_interval_without_data_ms",
}


def faster(options: list[tuple[str, object]]) -> list[tuple[str, object]]:
    return [
        (key, value // FASTER if key in PING_INTERVALS else value)  # type: ignore[operator]
        for key, value in options
    ]


async def test_an_idle_channel_is_never_sent_away_for_its_pings() -> None:
    server = grpc.aio.server(options=faster(SERVER_OPTIONS))
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    # The client's own floor between pings, lowered by the same factor as its interval.
    client_options = [
        *faster(CHANNEL_OPTIONS),
        ("grpc.http2.min_time_between_pings_ms", KEEPALIVE_TIME_MS // FASTER),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=client_options)
    try:
        stub = health_pb2_grpc.HealthStub(channel)
        await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        ready = channel.get_state()
        assert ready == grpc.ChannelConnectivity.READY
        # A GOAWAY would drop the connection: the channel would leave READY.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(channel.wait_for_state_change(ready), IDLE_S)
        assert channel.get_state() == grpc.ChannelConnectivity.READY
    finally:
        await channel.close()
        await server.stop(0)


def test_a_server_never_shares_its_address_with_another() -> None:
    assert dict(SERVER_OPTIONS)["grpc.so_reuseport"] == 0
