"""`python -m router` serves the router service."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from violet.server import Hosted, run
from violet.settings import CommonSettings
from violet.v1 import router_pb2, router_pb2_grpc

NAME = "router"


@contextlib.asynccontextmanager
async def resources(settings: CommonSettings) -> AsyncIterator[Hosted]:
    def register(server) -> list[str]:  # type: ignore[no-untyped-def]
        router_pb2_grpc.add_RouterServicer_to_server(router_pb2_grpc.RouterServicer(), server)
        return [router_pb2.DESCRIPTOR.services_by_name["Router"].full_name]

    yield Hosted(register)


def main() -> None:
    run(NAME, CommonSettings, resources)


if __name__ == "__main__":
    main()
