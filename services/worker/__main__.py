"""`python -m worker` serves the worker service; `python -m worker migrate` only migrates."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator

import grpc

from violet import database
from violet.accounts_client import personal_model
from violet.channels import peers_of
from violet.identity import resolve_secret
from violet.models import ModelClient
from violet.person_data import PersonDataService
from violet.server import Hosted, run
from violet.tasks import cancel_all
from violet.v1 import (
    documents_pb2,
    documents_pb2_grpc,
    persons_pb2,
    persons_pb2_grpc,
    worker_pb2,
    worker_pb2_grpc,
)
from worker.agent import WorkAgent
from worker.asking import OtherWork
from worker.documents_service import DocumentsService
from worker.folders import Folders
from worker.mail import Mailer
from worker.person_data import WorkData
from worker.reporter import Reporter
from worker.runner import WorkRunner
from worker.sandbox import Limits, Sandbox, SandboxUnavailable, choose_sandbox
from worker.sandbox_wasm import WasmSandbox
from worker.service import WorkerService
from worker.settings import WorkerSettings
from worker.store import WorkStore
from worker.toolbox import Toolbox
from worker.web import Web

NAME = "worker"
# The services the worker calls (its model client's Accounts among them).
PEERS = ("session", "router")


def migrate(settings: WorkerSettings) -> None:
    database.migrate_service(settings, NAME)


def open_sandbox(settings: WorkerSettings, limits: Limits) -> Sandbox:
    if settings.sandbox_backend == "bubblewrap":
        hidden = (settings.home.resolve(), settings.workspace_root())
        return choose_sandbox(limits, hidden=hidden)
    return WasmSandbox(limits, settings.sandbox_cache(), settings.sandbox_runs())


async def _prepare(sandbox: Sandbox) -> None:
    """Compiles the sandbox's interpreter while the worker already serves, so the first run of
    code does not wait for it; a failure is logged, and the first run tries again."""
    if isinstance(sandbox, WasmSandbox):
        with contextlib.suppress(SandboxUnavailable):
            await sandbox.prepare()


async def _close(sandbox: Sandbox) -> None:
    if isinstance(sandbox, WasmSandbox):
        await sandbox.close()


@contextlib.asynccontextmanager
async def resources(settings: WorkerSettings) -> AsyncIterator[Hosted]:
    async with personal_model(settings, NAME) as model, _served(settings, model) as hosted:
        yield hosted


@contextlib.asynccontextmanager
async def _served(settings: WorkerSettings, model: ModelClient) -> AsyncIterator[Hosted]:
    engine = database.service_engine(settings, NAME)
    store = WorkStore(database.sessionmaker(engine))
    secret = resolve_secret(settings.secret, settings.home)
    replica = settings.replica or f"{socket.gethostname()}-{os.getpid()}"
    peers = peers_of(settings, NAME, PEERS)
    web = Web(
        timeout_s=settings.fetch_timeout_s,
        max_bytes=settings.fetch_max_bytes,
        block_private=settings.fetch_block_private,
        search_url=settings.search_url,
    )
    limits = Limits(
        settings.sandbox_timeout_s, settings.sandbox_memory_mb, settings.sandbox_disk_mb
    )
    sandbox = open_sandbox(settings, limits)
    folders = Folders(settings.workspace_root(), settings.person_disk_mb * 1024 * 1024)
    toolbox = Toolbox(
        web=web,
        folders=folders,
        sandbox=sandbox,
        limits=limits,
        mailer=Mailer(settings.smtp_url, settings.smtp_from),
        store=store,
        other_work=OtherWork(
            peers=peers,
            secret=secret,
            store=store,
            model=model,
            window_requests=settings.work_window_requests,
        ),
    )
    reporter = Reporter(peers, store.outbox, secret)
    agent = WorkAgent(
        model=model,
        store=store,
        toolbox=toolbox,
        reporter=reporter,
        max_steps=settings.work_max_steps,
        window_requests=settings.work_window_requests,
    )
    runner = WorkRunner(
        store=store,
        agent=agent,
        replica=replica,
        per_person=settings.work_per_person,
        overall=settings.work_overall,
        idle_s=settings.work_idle_s,
        lease_s=settings.work_lease_s,
    )
    service = WorkerService(store, runner, secret)
    documents = DocumentsService(folders, secret)
    person_data = PersonDataService(WorkData(store, runner, folders), secret)
    background = [
        asyncio.create_task(_prepare(sandbox)),
        asyncio.create_task(runner.sweep_forever(settings.work_sweep_s)),
        asyncio.create_task(runner.unload_idle_forever()),
        asyncio.create_task(reporter.send_forever()),
        asyncio.create_task(documents.purge_forever()),
    ]

    def register(server: grpc.aio.Server) -> list[str]:
        worker_pb2_grpc.add_WorkerServicer_to_server(service, server)
        documents_pb2_grpc.add_DocumentsServicer_to_server(documents, server)
        persons_pb2_grpc.add_PersonDataServicer_to_server(person_data, server)
        return [
            worker_pb2.DESCRIPTOR.services_by_name["Worker"].full_name,
            documents_pb2.DESCRIPTOR.services_by_name["Documents"].full_name,
            persons_pb2.DESCRIPTOR.services_by_name["PersonData"].full_name,
        ]

    try:
        yield Hosted(register)
    finally:
        await cancel_all(background)
        await runner.stop(settings.drain_s)
        await _close(sandbox)
        await peers.close()
        await web.aclose()
        await engine.dispose()


def main() -> None:
    run(NAME, WorkerSettings, resources, migrate)


if __name__ == "__main__":
    main()
