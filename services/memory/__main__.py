"""`python -m memory` serves the memory service."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from violet.server import Hosted, run
from violet.settings import CommonSettings
from violet.v1 import memory_pb2, memory_pb2_grpc

NAME = "memory"


@contextlib.asynccontextmanager
async def resources(settings: CommonSettings) -> AsyncIterator[Hosted]:
    def register(server) -> list[str]:  # type: ignore[no-untyped-def]
        memory_pb2_grpc.add_MemoryServicer_to_server(memory_pb2_grpc.MemoryServicer(), server)
        return [memory_pb2.DESCRIPTOR.services_by_name["Memory"].full_name]

    yield Hosted(register)


def main() -> None:
    run(NAME, CommonSettings, resources)


if __name__ == "__main__":
    main()
