"""In-process stand-ins for what the session core talks to: the model, memory, the router and
the worker. Each records what it was asked, so a test states what the core did without a
process, a port or a sleep."""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import grpc
from sqlalchemy.engine import make_url

from session.capture.owed import Bounds, Capture, OwedCaptures
from session.capture.sender import CaptureSender
from session.feed import Feed
from session.memory_client import CaptureFailed, RecallMissed, Recollection
from session.notify.outbox import Outbox
from session.runner import Delivery
from violet import database
from violet.database import Database
from violet.identity import Identity
from violet.models import (
    ContentBlock,
    JsonObject,
    ModelError,
    ModelMessage,
    ModelUnavailable,
    OfflineModelClient,
    Reply,
    System,
    Tier,
    Tool,
    ToolCall,
    ToolChoice,
    Usage,
    UsageLedger,
)
from violet.models.base import reply_from_blocks
from violet.v1 import router_pb2, worker_pb2


@contextlib.asynccontextmanager
async def session_tables(folder: Path) -> AsyncIterator[Database]:
    """The session service's own tables, migrated, in a SQLite file under `folder`."""
    url = make_url(f"sqlite:///{folder / 'session.db'}")
    database.migrate(url, "session.migrations", "alembic_version_session")
    db = database.open_database(url)
    try:
        yield db
    finally:
        await db.dispose()


def _reply(content: list[ContentBlock]) -> Reply:
    stop = "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"
    return reply_from_blocks(content, stop, Usage("fake", 0, 0, 0.0))


REPLY = "reply"


@dataclass
class FakeModel:
    """The offline model, with main-model replies scripted ahead and structured calls (the fold)
    that fail on demand. Records every call in order and every conversation it was handed."""

    ledger: UsageLedger = field(default_factory=UsageLedger)
    failing: set[str] = field(default_factory=set)  # REPLY or structured call names that fail
    # What a failing reply raises (default: the API busy or away).
    reply_failure: ModelError | None = None
    calls: list[str] = field(default_factory=list)  # REPLY, or the structured call's name
    conversations: list[list[ModelMessage]] = field(default_factory=list)
    _scripted: deque[Reply] = field(default_factory=deque, init=False, repr=False)

    def __post_init__(self) -> None:
        self._offline = OfflineModelClient(ledger=self.ledger)

    def will_say(self, text: str) -> None:
        self._scripted.append(_reply([{"type": "text", "text": text}]))

    def will_call(self, *calls: ToolCall) -> None:
        blocks: list[ContentBlock] = [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}
            for call in calls
        ]
        self._scripted.append(_reply(blocks))

    def calls_of(self, name: str) -> int:
        return self.calls.count(name)

    async def reply(
        self,
        *,
        tier: Tier,
        system: System,
        messages: list[ModelMessage],
        tools: Sequence[Tool],
        person: str,
        tool_choice: ToolChoice = "auto",
    ) -> Reply:
        self.calls.append(REPLY)
        self.conversations.append(messages)
        if REPLY in self.failing:
            raise self.reply_failure or ModelUnavailable("the main model is failing in this test")
        if self._scripted:
            return self._scripted.popleft()
        return await self._offline.reply(
            tier=tier,
            system=system,
            messages=messages,
            tools=tools,
            person=person,
            tool_choice=tool_choice,
        )

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        self.calls.append(name)
        if name in self.failing:
            raise ModelUnavailable(f"{name} is failing in this test")
        return await self._offline.structured(
            name=name, description=description, schema=schema, prompt=prompt, person=person
        )

    async def aclose(self) -> None:
        await self._offline.aclose()


@dataclass(frozen=True)
class Captured:
    person: str
    said: str
    answered: str
    seqs: list[int]
    deeds: list[JsonObject]
    told: str = ""
    sources: list[JsonObject] = field(default_factory=list)


@dataclass
class FakeMemory:
    """The memory service as the session's memory client reaches it: recalls what it is given
    (or misses, as the client does when memory cannot answer in time), keeps every capture."""

    remembered: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)  # `told_line`s
    recalls: list[tuple[str, str]] = field(default_factory=list)  # (person, query)
    captured: list[Captured] = field(default_factory=list)
    missing: bool = False
    # Captures fail as they do while memory is down.
    away: bool = False
    # The person's words whose captures memory refuses for their content.
    refused: set[str] = field(default_factory=set)

    async def recall(self, identity: Identity, query: str) -> Recollection:
        self.recalls.append((identity.person, query))
        if self.missing:
            raise RecallMissed("DEADLINE_EXCEEDED")
        return Recollection(list(self.remembered), list(self.told))

    async def capture(self, identity: Identity, capture: Capture, answered_at: datetime) -> None:
        if self.away:
            raise CaptureFailed(grpc.StatusCode.UNAVAILABLE, "memory is away")
        if capture.person_message in self.refused:
            raise CaptureFailed(grpc.StatusCode.INVALID_ARGUMENT, "memory refuses these words")
        self.captured.append(
            Captured(
                identity.person,
                capture.person_message,
                capture.violet_answer,
                list(capture.source_seqs),
                list(capture.deeds),
                capture.told,
                list(capture.sources),
            )
        )


SECRET = "a secret only the session's tests know"


BOUNDS = Bounds(per_person=1000, in_all=100_000)


def capture_delivery(
    db: Database, memory: FakeMemory, replica: str, bounds: Bounds = BOUNDS
) -> tuple[Delivery, CaptureSender]:
    """What a turn runner delivers its turns with, in a test: a feed nobody follows, memory's
    stand-in behind the real owed captures and their sender, and the notifications' outbox."""
    captures = CaptureSender(OwedCaptures(db, replica, 5.0), memory, SECRET, bounds)  # type: ignore[arg-type]
    return Delivery(Feed(poll_s=1.0), captures, Outbox(db, 1.0)), captures


class Unreachable(grpc.aio.AioRpcError):
    def __init__(self) -> None:
        super().__init__(
            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "unreachable"
        )


@dataclass
class FakePeers:
    """The router and the worker as the session reaches them through `Peers.stub`, recording
    every call; `reachable = False` makes every call fail as an unreachable peer does."""

    topic: str = "t_0123456789abcdef"  # what the worker names the work it starts
    routed_to: str = ""  # the topic the router picks; "" for new work
    reachable: bool = True
    calls: list[tuple[str, object]] = field(default_factory=list)

    def stub(self, service: str, _: type) -> FakePeers:
        return self

    def called(self, name: str) -> list:
        return [request for called, request in self.calls if called == name]

    def _take(self, name: str, request: object) -> None:
        if not self.reachable:
            raise Unreachable()
        self.calls.append((name, request))

    async def Route(self, request, metadata):  # type: ignore[no-untyped-def]
        self._take("Route", request)
        return router_pb2.RouteDecision(topic=self.routed_to)

    async def StartWork(self, request, metadata):  # type: ignore[no-untyped-def]
        self._take("StartWork", request)
        return worker_pb2.StartWorkReply(topic=request.topic or self.topic)

    async def AnswerApproval(self, request, metadata):  # type: ignore[no-untyped-def]
        self._take("AnswerApproval", request)
        return worker_pb2.AnswerApprovalReply()
