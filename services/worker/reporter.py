"""Reporting back, always on the person's behalf: activity lines straight to the session (a
missed one is soon replaced), results, approval questions and card updates through the outbox
(stored with the step that made them, sent until taken, each with a key so a resend is
harmless)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from datetime import datetime

import grpc
from google.protobuf.json_format import ParseDict

from violet.channels import Peers
from violet.clock import timestamp
from violet.faults import fault_point
from violet.identity import acting_for, service_identity
from violet.models import JsonObject
from violet.v1 import deeds_pb2, router_pb2, router_pb2_grpc, session_pb2, session_pb2_grpc
from worker.store.outbox import Outbox, Outgoing

log = logging.getLogger(__name__)

ACTIVITY_TIMEOUT_S = 3.0
SEND_TIMEOUT_S = 10.0
RETRY_BASE_S = 1.0
RETRY_MAX_S = 60.0
# A card that cannot be placed after this many tries is left to the next turn's card.
CARD_ATTEMPTS = 8
_GIVE_UP = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.PERMISSION_DENIED}


class Reporter:
    def __init__(self, peers: Peers, outbox: Outbox, secret: str) -> None:
        self._peers = peers
        self._outbox = outbox
        self._secret = secret
        self._wake = asyncio.Event()

    def _metadata(self, person: str) -> tuple[tuple[str, str], ...]:
        return service_identity(person, self._secret).metadata()

    async def activity(self, person: str, topic: str, line: str) -> None:
        update = session_pb2.WorkUpdate(topic=topic, activity=line, key=uuid.uuid4().hex)
        stub = self._peers.stub("session", session_pb2_grpc.SessionStub)
        try:
            await stub.Deliver(
                update,
                metadata=self._metadata(person),
                timeout=ACTIVITY_TIMEOUT_S,
                wait_for_ready=False,
            )
        except grpc.aio.AioRpcError as error:
            log.info("activity line not shown", extra={"code": error.code().name})

    def wake(self) -> None:
        self._wake.set()

    async def send_forever(self) -> None:
        """Runs until cancelled: sends what is due, then waits for new work or the next retry."""
        while True:
            self._wake.clear()
            try:
                await self.send_due()
            except Exception:
                log.exception("the outbox could not be read; trying again")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), RETRY_BASE_S)

    async def send_due(self) -> None:
        for outgoing in await self._outbox.due():
            with acting_for(outgoing.person):
                try:
                    await self._send(outgoing)
                except grpc.aio.AioRpcError as error:
                    await self._failed(outgoing, error)
                else:
                    fault_point("worker.update_delivered")
                    await self._outbox.sent(outgoing.id)

    async def _send(self, outgoing: Outgoing) -> None:
        metadata = self._metadata(outgoing.person)
        payload = outgoing.payload
        if outgoing.kind == "card":
            router = self._peers.stub("router", router_pb2_grpc.RouterStub)
            await router.UpdateCard(
                topic_card(payload),
                metadata=metadata,
                timeout=SEND_TIMEOUT_S,
                wait_for_ready=False,
            )
            return
        update = session_pb2.WorkUpdate(topic=outgoing.topic, key=outgoing.key)
        if outgoing.kind == "result":
            update.result.text = payload["text"]
            # A result stored before deeds were reported has none.
            for deed in payload.get("deeds", []):
                update.result.deeds.append(ParseDict(deed, deeds_pb2.Deed()))
            for source in payload.get("sources", []):
                update.result.sources.append(ParseDict(source, deeds_pb2.Source()))
        else:
            update.approval.approval = payload["approval"]
            update.approval.question = payload["question"]
        session = self._peers.stub("session", session_pb2_grpc.SessionStub)
        await session.Deliver(
            update, metadata=metadata, timeout=SEND_TIMEOUT_S, wait_for_ready=False
        )

    async def _failed(self, outgoing: Outgoing, error: grpc.aio.AioRpcError) -> None:
        attempts = outgoing.attempts + 1
        code = error.code()
        hopeless = code in _GIVE_UP or (outgoing.kind == "card" and attempts >= CARD_ATTEMPTS)
        details = {"kind": outgoing.kind, "code": code.name, "attempts": attempts}
        if hopeless:
            log.error("update dropped", extra=details)
            await self._outbox.drop(outgoing.id)
            return
        log.warning("update not taken yet; will retry", extra=details)
        delay = min(RETRY_MAX_S, RETRY_BASE_S * 2 ** min(attempts, 10))
        await self._outbox.retry_later(outgoing.id, attempts, delay)


def topic_card(payload: JsonObject) -> router_pb2.TopicCard:
    return router_pb2.TopicCard(
        topic=payload["topic"],
        title=payload["title"],
        summary=payload["summary"],
        entities=payload["entities"],
        last_request=payload["last_request"],
        last_outcome=payload["last_outcome"],
        last_active=timestamp(datetime.fromisoformat(payload["last_active"])),
    )
