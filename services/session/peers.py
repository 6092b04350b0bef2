"""The session's calls to memory: recall before a turn, capture after it, each on the
person's behalf."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc
from google.protobuf.json_format import ParseDict
from opentelemetry import trace

from violet.channels import Peers
from violet.identity import Identity
from violet.metrics import ERRORS
from violet.models import JsonObject
from violet.v1 import deeds_pb2, memory_pb2, memory_pb2_grpc

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

RECALL_LIMIT = 3
RECALL_TIMEOUT_S = 5.0


class MemoryClient:
    def __init__(self, peers: Peers) -> None:
        self._peers = peers

    @property
    def _stub(self) -> memory_pb2_grpc.MemoryAsyncStub:
        return self._peers.stub("memory", memory_pb2_grpc.MemoryStub)

    async def recall(self, identity: Identity, query: str) -> list[str]:
        """At most 3 remembered items; a turn goes on without them if memory cannot answer."""
        with tracer.start_as_current_span("recall") as span:
            try:
                answer = await self._stub.Recall(
                    memory_pb2.RecallRequest(query=query, limit=RECALL_LIMIT),
                    metadata=identity.metadata(),
                    timeout=RECALL_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                log.warning(
                    "recall failed; answering without memory", extra={"code": error.code().name}
                )
                span.set_attribute("violet.recall.failed", True)
                ERRORS.add(1, {"violet.error.where": "recall"})
                return []
            items = answer.items[:RECALL_LIMIT]
            span.set_attribute("violet.recall.items", len(items))
            span.set_attribute("violet.recall.scores", [round(item.score, 4) for item in items])
            return [item.text for item in items]

    async def capture(
        self,
        identity: Identity,
        person_message: str,
        violet_answer: str,
        source_seqs: list[int],
        deeds: Sequence[JsonObject] = (),
    ) -> None:
        """`deeds` are `violet.v1.Deed` JSON objects: what Violet did in background work."""
        with tracer.start_as_current_span("capture"):
            await self._send_capture(identity, person_message, violet_answer, source_seqs, deeds)

    async def _send_capture(
        self,
        identity: Identity,
        person_message: str,
        violet_answer: str,
        source_seqs: list[int],
        deeds: Sequence[JsonObject],
    ) -> None:
        try:
            await self._stub.Capture(
                memory_pb2.CaptureRequest(
                    person_message=person_message,
                    violet_answer=violet_answer,
                    source_seqs=source_seqs,
                    deeds=[ParseDict(deed, deeds_pb2.Deed()) for deed in deeds],
                ),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            ERRORS.add(1, {"violet.error.where": "capture"})
            log.warning(
                "capture failed; this turn is not remembered", extra={"code": error.code().name}
            )
