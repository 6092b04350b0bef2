"""Recall under overload: a slow or unreachable memory is tried once more within a bounded wait,
and a recall that still misses is told to the turn (and counted), so Violet says she can't check
right now instead of that she doesn't know. Memory is a real gRPC server on loopback here."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from session import memory_client
from session.actions import MainActions
from session.fold import Fold
from session.memory_client import MemoryClient, RecallMissed
from session.runner import Replica, TurnRunner
from session.store import ConversationStore
from session.turn import MainSession
from session.turn_lock import turn_lock
from session.window import Window
from tests.support.fakes import (
    FakeMemory,
    FakeModel,
    FakePeers,
    capture_delivery,
    session_tables,
)
from violet.channels import Peers
from violet.identity import service_identity
from violet.models import offline_phrases as say
from violet.models.tools import MEMORY_UNCHECKED
from violet.v1 import memory_pb2, memory_pb2_grpc
from violet_cli.run import free_port

SECRET = "a secret only this test knows"
IDENTITY = service_identity("ana", SECRET)
TRY_S = 0.3
WAIT_S = 1.5


class Memory(memory_pb2_grpc.MemoryServicer):
    """Answers each recall as `behaviour` says for that call's number (1, 2, ...)."""

    def __init__(self, behaviour: Callable[[int], float | grpc.StatusCode]) -> None:
        self.behaviour = behaviour
        self.calls = 0
        self.release = asyncio.Event()  # ends every stalled call, so the server stops at once

    async def Recall(  # type: ignore[override]
        self, request: memory_pb2.RecallRequest, context: grpc.aio.ServicerContext
    ) -> memory_pb2.RecallReply:
        self.calls += 1
        outcome = self.behaviour(self.calls)
        if isinstance(outcome, grpc.StatusCode):
            await context.abort(outcome, "refused in this test")
        if outcome:
            await asyncio.wait([asyncio.create_task(self.release.wait())], timeout=outcome)
        return memory_pb2.RecallReply(items=[memory_pb2.RecalledItem(text="My cat is Miso")])


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Memory], MemoryClient]]:
    servers: list[tuple[grpc.aio.Server, Memory]] = []
    peers: list[Peers] = []

    def start(memory: Memory | None) -> MemoryClient:
        address = f"127.0.0.1:{free_port()}"
        if memory is not None:
            server = grpc.aio.server()
            memory_pb2_grpc.add_MemoryServicer_to_server(memory, server)
            server.add_insecure_port(address)
            servers.append((server, memory))
        peers.append(Peers({"memory": address}, 30.0))
        return MemoryClient(peers[-1], recall_timeout_s=TRY_S, recall_wait_s=WAIT_S)

    async def started(memory: Memory | None) -> MemoryClient:
        client = start(memory)
        if memory is not None:
            await servers[-1][0].start()
        return client

    yield started  # type: ignore[misc]
    for server, memory in servers:
        memory.release.set()
        await server.stop(None)
    for each in peers:
        await each.close()


@pytest.fixture
def misses(monkeypatch: pytest.MonkeyPatch) -> InMemoryMetricReader:
    reader = InMemoryMetricReader()
    counter = MeterProvider(metric_readers=[reader]).get_meter("test").create_counter("misses")
    monkeypatch.setattr(memory_client, "RECALL_MISSES", counter)
    return reader


def counted(reader: InMemoryMetricReader) -> dict[str, int]:
    data = reader.get_metrics_data()
    if data is None:
        return {}
    return {
        str(point.attributes["violet.recall.error"]): int(point.value)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    }


async def test_a_recall_that_runs_late_once_is_answered_by_a_second_try(serve) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(lambda call: 10.0 if call == 1 else 0.0)
    client = await serve(memory)
    assert (await client.recall(IDENTITY, "my cat?")).remembered == ["My cat is Miso"]
    assert memory.calls == 2


async def test_a_recall_that_keeps_running_late_misses_and_is_counted(serve, misses) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(lambda call: 10.0)
    client = await serve(memory)
    with pytest.raises(RecallMissed):
        await client.recall(IDENTITY, "my cat?")
    assert memory.calls == 2  # one more try, never more
    assert counted(misses) == {"DEADLINE_EXCEEDED": 1}


async def test_a_memory_that_is_down_misses_within_the_wait(serve, misses) -> None:  # type: ignore[no-untyped-def]
    client = await serve(None)
    with pytest.raises(RecallMissed):
        await client.recall(IDENTITY, "my cat?")
    assert sum(counted(misses).values()) == 1


async def test_a_refused_recall_is_not_tried_again(serve, misses) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(lambda call: grpc.StatusCode.PERMISSION_DENIED)
    client = await serve(memory)
    with pytest.raises(RecallMissed):
        await client.recall(IDENTITY, "my cat?")
    assert memory.calls == 1
    assert counted(misses) == {"PERMISSION_DENIED": 1}


async def answered_without_memory(tmp_path: Path, question: str) -> tuple[str, FakeModel]:
    """Violet's answer to `question` when memory cannot be checked, and the model she asked."""
    async with session_tables(tmp_path) as sessions:
        model, memory = FakeModel(), FakeMemory(missing=True)
        store = ConversationStore.open(sessions, notify=False)
        window = Window(20)
        actions = MainActions(store.pins, store.effects, FakePeers(), store.reminders)  # type: ignore[arg-type]
        main = MainSession(model, store.pins, memory, actions, window)  # type: ignore[arg-type]
        runner = TurnRunner(
            store,
            main,
            Fold(model, store, window, "replica"),
            capture_delivery(sessions, memory, "replica")[0],
            Replica("replica", SECRET, turn_lock(sessions, "replica", 5.0)),
        )
        conversation = await store.conversations.conversation_of("ana")
        await store.transcript.append_say(conversation, "d1", question)
        runner.schedule(conversation)
        await runner.idle(conversation)
        await runner.stop(5.0)
        messages = await store.transcript.since(conversation.id, 0)
        return messages[-1].text, model


async def test_a_question_about_the_person_when_memory_misses_says_she_cant_check_now(
    tmp_path: Path,
) -> None:
    answer, _ = await answered_without_memory(tmp_path, "What is my cat called?")
    assert answer == say.CANT_CHECK["en"]
    assert answer != say.DONT_KNOW["en"]


async def test_the_main_model_is_told_in_plain_words_that_memory_could_not_be_checked(
    tmp_path: Path,
) -> None:
    _, model = await answered_without_memory(tmp_path, "What is my cat called?")
    newest = model.conversations[-1][-1]
    assert newest["role"] == "user"
    notes = [b["text"] for b in newest["content"] if isinstance(b, dict) and b["type"] == "text"]
    assert any(MEMORY_UNCHECKED in note for note in notes)
