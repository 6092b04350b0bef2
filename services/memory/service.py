"""The memory service's gRPC face. The person is always the one the bearer token names."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import grpc
from opentelemetry import trace

from memory import sources
from memory.capture import Backlogged
from memory.deeds import MAX_DEEDS, UnfitDeed, from_proto
from memory.page import Page, UnknownItem
from memory.recall import Recalled
from memory.runtime import Memory
from memory.store import Item, NewTurn
from memory.told import source_label
from violet.clock import timestamp, utc_now
from violet.identity import authenticate
from violet.metrics import ANSWER_TO_RECALLABLE, CAPTURES, RECALLS
from violet.v1 import accounts_pb2, memory_pb2, memory_pb2_grpc

RECALL_LIMIT = 3
TOLD_LIMIT = 2
MAX_CAPTURED_CHARS = 64_000


def _page(page: Page) -> memory_pb2.ListReply:
    return memory_pb2.ListReply(
        items=[_page_item(item) for item in page.facts],
        told=[_page_item(item) for item in page.told],
    )


def _page_item(item: Item) -> memory_pb2.MemoryItem:
    return memory_pb2.MemoryItem(
        item=item.id,
        text=item.text,
        origin=item.origin,
        at=timestamp(item.created_at),
        source=source_label(item),
    )


def _recalled(recalled: Recalled) -> memory_pb2.RecalledItem:
    item = recalled.item
    return memory_pb2.RecalledItem(
        item=item.id,
        text=item.text,
        score=recalled.score,
        origin=item.origin,
        at=timestamp(item.created_at),
        source=source_label(item),
    )


async def _page_after(
    context: grpc.aio.ServicerContext[memory_pb2.ItemRequest, memory_pb2.ListReply],
    change: Awaitable[Page],
) -> memory_pb2.ListReply:
    """The page once `change` to one item is made; NOT_FOUND where the person has no such item."""
    try:
        return _page(await change)
    except UnknownItem:
        await context.abort(grpc.StatusCode.NOT_FOUND, "there is no such memory item")


def _recallable_since(answered_at: datetime) -> None:
    """Records how long the turn took from its stored answer to recallable (this moment)."""
    seconds = max(0.0, (utc_now() - answered_at).total_seconds())
    ANSWER_TO_RECALLABLE.record(seconds)
    trace.get_current_span().set_attribute(
        "violet.capture.answer_to_recallable_ms", round(seconds * 1000, 1)
    )


# Takes the person's credential as the session read it some seconds ago
# (`violet.accounts_client.RemoteModel.offer`).
Offered = Callable[[str, accounts_pb2.CredentialReply, float], None]


class MemoryService(memory_pb2_grpc.MemoryServicer):
    def __init__(self, memory: Memory, secret: str, offered: Offered) -> None:
        """A capture's credential goes to `offered`, for the model calls that make its items."""
        self._memory = memory
        self._secret = secret
        self._offered = offered

    async def Recall(
        self,
        request: memory_pb2.RecallRequest,
        context: grpc.aio.ServicerContext[memory_pb2.RecallRequest, memory_pb2.RecallReply],
    ) -> memory_pb2.RecallReply:
        identity = await authenticate(context, self._secret)
        limit = request.limit or RECALL_LIMIT
        if not 1 <= limit <= RECALL_LIMIT:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"recall gives 1 to {RECALL_LIMIT} items; {limit} were asked for",
            )
        if not 0 <= request.told_limit <= TOLD_LIMIT:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"recall gives 0 to {TOLD_LIMIT} told records; {request.told_limit} were asked for",
            )
        items, told = await self._memory.recaller.recall_with_told(
            identity.person, request.query, limit, request.told_limit
        )
        RECALLS.add(1)
        return memory_pb2.RecallReply(
            items=[_recalled(r) for r in items], told=[_recalled(r) for r in told]
        )

    async def Prepare(
        self,
        request: memory_pb2.PrepareRequest,
        context: grpc.aio.ServicerContext[memory_pb2.PrepareRequest, memory_pb2.PrepareReply],
    ) -> memory_pb2.PrepareReply:
        identity = await authenticate(context, self._secret)
        self._memory.recaller.prepare(identity.person)
        return memory_pb2.PrepareReply()

    async def Capture(
        self,
        request: memory_pb2.CaptureRequest,
        context: grpc.aio.ServicerContext[memory_pb2.CaptureRequest, memory_pb2.CaptureReply],
    ) -> memory_pb2.CaptureReply:
        identity = await authenticate(context, self._secret)
        texts = (request.person_message, request.violet_answer)
        if any(len(text) > MAX_CAPTURED_CHARS for text in texts):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a captured text holds at most {MAX_CAPTURED_CHARS} characters",
            )
        if len(request.deeds) > MAX_DEEDS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"a turn carries at most {MAX_DEEDS} deeds"
            )
        if len(request.told) > MAX_CAPTURED_CHARS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a captured text holds at most {MAX_CAPTURED_CHARS} characters",
            )
        if len(request.told_sources) > sources.MAX_SOURCES:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a turn names at most {sources.MAX_SOURCES} sources",
            )
        try:
            deeds = tuple(from_proto(deed) for deed in request.deeds)
            told_sources = tuple(sources.from_proto(s) for s in request.told_sources)
        except (UnfitDeed, sources.UnfitSource) as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if request.HasField("credential"):
            self._offered(identity.person, request.credential, request.credential_age_ms / 1000)
        answered_at = (
            request.answered_at.ToDatetime(tzinfo=UTC) if request.HasField("answered_at") else None
        )
        if request.person_message.strip() or deeds or request.told.strip():
            turn = NewTurn(
                person_message=request.person_message,
                violet_answer=request.violet_answer,
                source_seqs=tuple(request.source_seqs),
                at=request.at.ToDatetime(tzinfo=UTC) if request.HasField("at") else utc_now(),
                speaker=request.speaker,
                deeds=deeds,
                told=request.told,
                told_sources=told_sources,
                answered_at=answered_at,
            )
            try:
                stored = await self._memory.capturer.accept(identity.person, turn)
            except Backlogged as error:
                CAPTURES.add(1, {"violet.capture.outcome": "refused"})
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"memory is catching up with this person ({error}); send it again later",
                )
            CAPTURES.add(1, {"violet.capture.outcome": "stored" if stored else "not_stored"})
            if stored and answered_at is not None:
                _recallable_since(answered_at)
        return memory_pb2.CaptureReply()

    async def List(
        self,
        request: memory_pb2.ListRequest,
        context: grpc.aio.ServicerContext[memory_pb2.ListRequest, memory_pb2.ListReply],
    ) -> memory_pb2.ListReply:
        identity = await authenticate(context, self._secret)
        return _page(await self._memory.page.listed(identity.person))

    async def Forget(
        self,
        request: memory_pb2.ItemRequest,
        context: grpc.aio.ServicerContext[memory_pb2.ItemRequest, memory_pb2.ListReply],
    ) -> memory_pb2.ListReply:
        identity = await authenticate(context, self._secret)
        return await _page_after(context, self._memory.page.forget(identity.person, request.item))

    async def Restore(
        self,
        request: memory_pb2.ItemRequest,
        context: grpc.aio.ServicerContext[memory_pb2.ItemRequest, memory_pb2.ListReply],
    ) -> memory_pb2.ListReply:
        identity = await authenticate(context, self._secret)
        return await _page_after(context, self._memory.page.restore(identity.person, request.item))

    async def ForgetAll(
        self,
        request: memory_pb2.ForgetAllRequest,
        context: grpc.aio.ServicerContext[memory_pb2.ForgetAllRequest, memory_pb2.ListReply],
    ) -> memory_pb2.ListReply:
        identity = await authenticate(context, self._secret)
        return _page(await self._memory.page.forget_everything(identity.person))
