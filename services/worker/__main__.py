"""`python -m worker` serves the worker service."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from violet.server import Hosted, run
from violet.settings import CommonSettings
from violet.v1 import worker_pb2, worker_pb2_grpc

NAME = "worker"


@contextlib.asynccontextmanager
async def resources(settings: CommonSettings) -> AsyncIterator[Hosted]:
    def register(server) -> list[str]:  # type: ignore[no-untyped-def]
        worker_pb2_grpc.add_WorkerServicer_to_server(worker_pb2_grpc.WorkerServicer(), server)
        return [worker_pb2.DESCRIPTOR.services_by_name["Worker"].full_name]

    yield Hosted(register)


def main() -> None:
    run(NAME, CommonSettings, resources)


if __name__ == "__main__":
    main()
