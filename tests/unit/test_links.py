"""Links between services: the clients' keepalive pings are what the servers accept, so no
server answers an idle client with GOAWAY `too_many_pings` (measured: with the servers'
defaults, the third ping of an idle channel, 150 s in, got one)."""

from __future__ import annotations

from violet.channels import CHANNEL_OPTIONS, KEEPALIVE_TIME_MS
from violet.server import SERVER_OPTIONS


def test_servers_accept_pings_as_often_as_clients_send_them_on_idle_connections() -> None:
    client, server = dict(CHANNEL_OPTIONS), dict(SERVER_OPTIONS)
    assert client["grpc.keepalive_time_ms"] == KEEPALIVE_TIME_MS
    assert client["grpc.keepalive_permit_without_calls"] == 1
    assert server["grpc.keepalive_permit_without_calls"] == 1
    assert server["grpc.http2.min_recv_ping_interval_without_data_ms"] < KEEPALIVE_TIME_MS


def test_a_server_never_shares_its_address_with_another() -> None:
    assert dict(SERVER_OPTIONS)["grpc.so_reuseport"] == 0
