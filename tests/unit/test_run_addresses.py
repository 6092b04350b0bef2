"""`violet run` refuses addresses another program listens on, and only those: connections of
a stack stopped a moment ago, left in TIME_WAIT, do not keep it from starting again. Ports
handed to a stack are its own, and a service is ready only where it answers itself."""

from __future__ import annotations

import asyncio
import socket
import subprocess

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from violet.settings import CommonSettings
from violet_cli.run import GRPC_SERVICES, SERVICES, free_port, serving, taken_addresses


def settings_with(port: int) -> CommonSettings:
    others = {f"{name}_addr": f"127.0.0.1:{free_port()}" for name in SERVICES}
    return CommonSettings(**{**others, "gateway_addr": f"127.0.0.1:{port}"})


def time_wait_on(port: int) -> None:
    """Leaves a connection in TIME_WAIT on `port`, as a server that closed first does."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server's side closes first, so its side waits
        assert client.recv(1) == b""
        client.close()


def in_time_wait(port: int) -> bool:
    listing = subprocess.run(["ss", "-tan"], capture_output=True, text=True, check=True).stdout
    return any(
        line.split()[0] == "TIME-WAIT" and line.split()[3].endswith(f":{port}")
        for line in listing.splitlines()[1:]
    )


def test_a_port_in_time_wait_is_free() -> None:
    port = free_port()
    time_wait_on(port)
    assert in_time_wait(port)
    assert taken_addresses(settings_with(port)) == []


def test_a_port_another_program_listens_on_is_taken() -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        assert taken_addresses(settings_with(port)) == [f"127.0.0.1:{port} (gateway)"]


def test_no_port_is_handed_out_twice() -> None:
    # The kernel offers a closed probe's port again soon enough that two services of one stack
    # were once given the same address.
    ports = [free_port() for _ in range(3000)]
    assert len(set(ports)) == len(ports)


async def test_an_address_is_ready_only_for_the_service_that_answers_there() -> None:
    server = grpc.aio.server()
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        for name in ("", GRPC_SERVICES["router"]):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        address = f"127.0.0.1:{port}"
        assert await asyncio.to_thread(serving, address, "router")
        assert not await asyncio.to_thread(serving, address, "memory")
    finally:
        await server.stop(None)
