"""`python -m memory` serves the memory service; `python -m memory migrate` only migrates;
`python -m memory sleep` runs the nightly pass over everyone (consolidate, purge, compact);
`python -m memory fit-context FILE` fits the map that makes turns' context vectors
(`memory.context`) on a LoCoMo file's tuning conversations."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import timedelta

import grpc

from memory.runtime import NAME, migrate, open_memory
from memory.service import MemoryService
from memory.settings import MemorySettings
from violet.accounts_client import personal_model, remote_model
from violet.identity import resolve_secret
from violet.person_data import PersonDataService
from violet.server import Command, Hosted, run, start
from violet.tasks import cancel_all
from violet.unavailable import DependencyUnavailable
from violet.v1 import memory_pb2, memory_pb2_grpc, persons_pb2, persons_pb2_grpc

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def resources(settings: MemorySettings) -> AsyncIterator[Hosted]:
    async with (
        remote_model(settings, NAME) as remote,
        open_memory(settings, remote.model) as memory,
    ):
        # What is made at start (modules, tables, the model) lives as long as the process: the
        # collector no longer walks it at every full collection.
        gc.collect()
        gc.freeze()
        secret = resolve_secret(settings.secret, settings.home)
        service = MemoryService(memory, secret, remote.offer)
        person_data = PersonDataService(memory.person_data, secret)
        quiet = asyncio.create_task(
            memory.consolidator.consolidate_when_quiet(
                settings.memory_quiet_s, settings.memory_sweep_s
            )
        )

        def register(server: grpc.aio.Server) -> list[str]:
            memory_pb2_grpc.add_MemoryServicer_to_server(service, server)
            persons_pb2_grpc.add_PersonDataServicer_to_server(person_data, server)
            return [
                memory_pb2.DESCRIPTOR.services_by_name["Memory"].full_name,
                persons_pb2.DESCRIPTOR.services_by_name["PersonData"].full_name,
            ]

        try:
            yield Hosted(register)
        finally:
            await cancel_all([quiet])


async def sleep(settings: MemorySettings) -> int:
    async with personal_model(settings, NAME) as model, open_memory(settings, model) as memory:
        report = await memory.consolidator.sleep(timedelta(days=settings.memory_undo_days))
    log.info("sleep pass done", extra=asdict(report))
    print(json.dumps(asdict(report)))
    return 1 if report.failed else 0


def sleep_everyone(args: argparse.Namespace) -> int:
    settings = start(NAME, MemorySettings, migrate)
    try:
        return asyncio.run(sleep(settings))
    except DependencyUnavailable as error:
        raise SystemExit(f"{NAME} cannot sleep: {error}") from None


SLEEP = Command(
    "sleep", "run the nightly pass over everyone: consolidate, purge, compact", sleep_everyone
)


def fit_context(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memory.context import CONTEXT_MAP, fit_on_file
    from violet.embedder import get_embedder

    fitted, pairs = fit_on_file(Path(args.file), get_embedder())
    fitted.save(CONTEXT_MAP)
    print(json.dumps({"pairs": pairs, "model": fitted.model, "written": str(CONTEXT_MAP)}))
    return 0


def _fit_context_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a LoCoMo file, such as locomo_dev.json")


FIT_CONTEXT = Command(
    "fit-context",
    "fit the context map (memory.context) on a LoCoMo file's tuning conversations",
    fit_context,
    _fit_context_arguments,
)


def main() -> None:
    run(NAME, MemorySettings, resources, migrate, [SLEEP, FIT_CONTEXT])


if __name__ == "__main__":
    main()
