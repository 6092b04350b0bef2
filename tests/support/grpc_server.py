"""A stand-in for a service: one servicer on a gRPC server on a free loopback port."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

import grpc

Servicer = TypeVar("Servicer")


@contextlib.asynccontextmanager
async def serving(
    add: Callable[[Servicer, grpc.aio.Server], None], servicer: Servicer
) -> AsyncIterator[str]:
    """Serves `servicer` (added by its generated `add_…_to_server`) while the block runs; its
    address."""
    server = grpc.aio.server()
    add(servicer, server)
    address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
    await server.start()
    try:
        yield address
    finally:
        await server.stop(None)
