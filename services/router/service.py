"""The router's gRPC face: route a request, keep a card current, list past decisions, and find
the topic a question from other work is about."""

from __future__ import annotations

from datetime import UTC
from typing import Any, NoReturn

import grpc

from router.cards import Card
from router.routing import Router
from router.store import Decision, PersonErased
from violet.clock import timestamp, utc_now
from violet.identity import authenticate
from violet.models import PersonGone
from violet.v1 import router_pb2, router_pb2_grpc

MAX_REQUEST_CHARS = 8_000
DEFAULT_DECISIONS = 20
MAX_DECISIONS = 200


def to_message(decision: Decision) -> router_pb2.RouteDecision:
    return router_pb2.RouteDecision(
        topic=decision.topic,
        candidates=decision.candidates,
        scores=decision.scores,
        pick=decision.pick,
        confidence=decision.confidence,
        reason=decision.reason,
        at=timestamp(decision.at),
        request=decision.request,
        opening=decision.opening,
    )


def card_of(message: router_pb2.TopicCard) -> Card:
    if message.HasField("last_active"):
        last_active = message.last_active.ToDatetime(tzinfo=UTC)
    else:
        last_active = utc_now()
    return Card(
        topic=message.topic,
        title=message.title,
        summary=message.summary,
        entities=tuple(message.entities),
        last_request=message.last_request,
        last_outcome=message.last_outcome,
        last_active=last_active,
    )


class RouterService(router_pb2_grpc.RouterServicer):
    def __init__(self, router: Router, secret: str) -> None:
        self._router = router
        self._secret = secret

    async def Route(
        self,
        request: router_pb2.RouteRequest,
        context: grpc.aio.ServicerContext[router_pb2.RouteRequest, router_pb2.RouteDecision],
    ) -> router_pb2.RouteDecision:
        identity = await authenticate(context, self._secret)
        text = await _checked(context, request.request, "request")
        try:
            decision = await self._router.route(identity.person, text)
        except (PersonErased, PersonGone):
            await _erased(context)
        return to_message(decision)

    async def UpdateCard(
        self,
        request: router_pb2.TopicCard,
        context: grpc.aio.ServicerContext[router_pb2.TopicCard, router_pb2.UpdateCardReply],
    ) -> router_pb2.UpdateCardReply:
        identity = await authenticate(context, self._secret)
        if not request.topic.strip():
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a card needs its topic")
        try:
            await self._router.update_card(identity.person, card_of(request))
        except PersonErased:
            await _erased(context)
        return router_pb2.UpdateCardReply()

    async def ListDecisions(
        self,
        request: router_pb2.ListDecisionsRequest,
        context: grpc.aio.ServicerContext[
            router_pb2.ListDecisionsRequest, router_pb2.ListDecisionsReply
        ],
    ) -> router_pb2.ListDecisionsReply:
        identity = await authenticate(context, self._secret)
        limit = min(request.limit or DEFAULT_DECISIONS, MAX_DECISIONS)
        if limit < 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the limit cannot be negative")
        decisions = await self._router.decisions(identity.person, limit)
        return router_pb2.ListDecisionsReply(decisions=[to_message(d) for d in decisions])

    async def NearestTopic(
        self,
        request: router_pb2.NearestTopicRequest,
        context: grpc.aio.ServicerContext[
            router_pb2.NearestTopicRequest, router_pb2.NearestTopicReply
        ],
    ) -> router_pb2.NearestTopicReply:
        identity = await authenticate(context, self._secret)
        question = await _checked(context, request.question, "question")
        found = await self._router.nearest(identity.person, question, request.besides)
        return router_pb2.NearestTopicReply(topic=found.topic, score=found.score)


async def _erased(context: grpc.aio.ServicerContext[Any, Any]) -> NoReturn:
    await context.abort(
        grpc.StatusCode.ABORTED,
        "the person's data was erased while this call ran, so nothing of it was kept",
    )


async def _checked(context: grpc.aio.ServicerContext[Any, Any], text: str, what: str) -> str:
    """The text stripped; the call aborted, in plain words, when it is empty or too long."""
    text = text.strip()
    if not text:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the {what} is empty")
    if len(text) > MAX_REQUEST_CHARS:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"a {what} holds at most {MAX_REQUEST_CHARS} characters",
        )
    return text
