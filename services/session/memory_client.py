"""The session's calls to memory: recall before a turn, and each turn's capture as its sender
delivers it (`session.capture`), each on the person's behalf."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import grpc
from google.protobuf.json_format import ParseDict
from opentelemetry import trace

from session.capture.owed import Capture
from violet.accounts_client import credential_reply
from violet.channels import Peers
from violet.clock import timestamp
from violet.identity import Identity
from violet.metrics import ERRORS, RECALL_MISSES
from violet.models.credentials import Credential
from violet.models.tools import told_line
from violet.v1 import deeds_pb2, memory_pb2, memory_pb2_grpc

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

RECALL_LIMIT = 3
TOLD_LIMIT = 2
# Failures that may pass within moments: a memory that is overloaded, restarting or briefly
# unreachable. Anything else (a refused identity, a bad request) would fail the same way again.
RETRIED = frozenset(
    {
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
    }
)
# A second try gets at least this long, or is not made.
LEAST_TRY_S = 0.5
# Memory answers a prepare at once; the loading goes on there.
PREPARE_TIMEOUT_S = 2.0


class RecallMissed(Exception):
    """Memory could not be checked this turn: not the same as nothing remembered."""


class CaptureFailed(Exception):
    """Memory did not take a capture: `code` says whether trying again may help."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code


@dataclass(frozen=True)
class Recollection:
    """What memory gave for a turn: what Violet remembers about the person, and apart from it
    what she told them before (`violet.models.tools.told_line`s), which memory gives only for
    words that are not about the person."""

    remembered: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    # The told records' own words, without date and source.
    told_texts: list[str] = field(default_factory=list)

    def repeated_in(self, answer: str) -> bool:
        """Whether the answer repeats what memory gave: no new telling, so not kept as told."""
        said = " ".join(answer.split()).casefold()
        given = [*self.remembered, *self.told_texts]
        return any(" ".join(text.split()).casefold() in said for text in given if text.strip())


# The person's credential as this replica knows it, and its age in seconds; None when it knows
# none fresh (`PersonalModelClient.known_credential`).
KnownCredential = Callable[[str], tuple[Credential, float] | None]


def _nothing_known(_person: str) -> None:
    return None


class MemoryClient:
    def __init__(
        self,
        peers: Peers,
        recall_timeout_s: float,
        recall_wait_s: float,
        known_credential: KnownCredential = _nothing_known,
    ) -> None:
        """Each recall is given `recall_timeout_s`; a failed one is tried once more within
        `recall_wait_s` in all. A capture carries the person's credential when
        `known_credential` has it, so that memory need not ask for it."""
        self._peers = peers
        self._recall_timeout_s = recall_timeout_s
        self._recall_wait_s = recall_wait_s
        self._known_credential = known_credential
        self._preparing: set[asyncio.Task[None]] = set()

    @property
    def _stub(self) -> memory_pb2_grpc.MemoryAsyncStub:
        return self._peers.stub("memory", memory_pb2_grpc.MemoryStub)

    def prepare(self, identity: Identity) -> None:
        """Asks memory, in the background, to ready the person's recall: they have just opened
        the app, and their first answer should not wait for a long memory to load."""
        task = asyncio.create_task(self._prepare(identity))
        self._preparing.add(task)
        task.add_done_callback(self._preparing.discard)

    async def _prepare(self, identity: Identity) -> None:
        try:
            await self._stub.Prepare(
                memory_pb2.PrepareRequest(), metadata=identity.metadata(), timeout=PREPARE_TIMEOUT_S
            )
        except grpc.aio.AioRpcError as error:
            # Only a head start is lost: the first recall loads the memory itself.
            log.info("memory was not readied at hello", extra={"code": error.code().name})

    async def recall(self, identity: Identity, query: str) -> Recollection:
        """At most 3 remembered items and 2 told records. Raises RecallMissed when memory could
        not answer in time, after one more try where the failure may pass."""
        with tracer.start_as_current_span("recall") as span:
            deadline = time.monotonic() + self._recall_wait_s
            tries = 0
            while True:
                tries += 1
                left = deadline - time.monotonic()
                try:
                    answer = await self._stub.Recall(
                        memory_pb2.RecallRequest(
                            query=query, limit=RECALL_LIMIT, told_limit=TOLD_LIMIT
                        ),
                        metadata=identity.metadata(),
                        timeout=min(self._recall_timeout_s, left),
                    )
                    break
                except grpc.aio.AioRpcError as error:
                    left = deadline - time.monotonic()
                    if tries > 1 or error.code() not in RETRIED or left < LEAST_TRY_S:
                        self._missed(span, error, tries)
                        raise RecallMissed(error.code().name) from None
            items, told = answer.items[:RECALL_LIMIT], answer.told[:TOLD_LIMIT]
            span.set_attribute("violet.recall.tries", tries)
            span.set_attribute("violet.recall.items", len(items))
            span.set_attribute("violet.recall.told", len(told))
            span.set_attribute("violet.recall.scores", [round(item.score, 4) for item in items])
            return Recollection(
                [item.text for item in items],
                [_told_line(r) for r in told],
                [r.text for r in told],
            )

    @staticmethod
    def _missed(span: trace.Span, error: grpc.aio.AioRpcError, tries: int) -> None:
        log.warning(
            "recall missed; the turn is told memory could not be checked",
            extra={"code": error.code().name, "tries": tries},
        )
        span.set_attribute("violet.recall.tries", tries)
        span.set_attribute("violet.recall.missed", True)
        span.set_attribute("violet.recall.error", error.code().name)
        RECALL_MISSES.add(1, {"violet.recall.error": error.code().name})
        ERRORS.add(1, {"violet.error.where": "recall"})

    async def capture(self, identity: Identity, capture: Capture, answered_at: datetime) -> None:
        """Sends a turn's capture (`session.capture.owed`), answered at `answered_at`. Raises
        `CaptureFailed` when memory did not take it."""
        request = memory_pb2.CaptureRequest(
            person_message=capture.person_message,
            violet_answer=capture.violet_answer,
            source_seqs=capture.source_seqs,
            at=timestamp(capture.said_at),
            answered_at=timestamp(answered_at),
            deeds=[ParseDict(deed, deeds_pb2.Deed()) for deed in capture.deeds],
            told=capture.told,
            told_sources=[ParseDict(source, deeds_pb2.Source()) for source in capture.sources],
        )
        self._hand_credential(identity.person, request)
        try:
            await self._stub.Capture(request, metadata=identity.metadata())
        except grpc.aio.AioRpcError as error:
            raise CaptureFailed(error.code(), error.details() or "") from None

    def _hand_credential(self, person: str, request: memory_pb2.CaptureRequest) -> None:
        known = self._known_credential(person)
        if known is None:
            return
        credential, age_s = known
        if credential.key is not None and credential.sealed is None:
            return  # an opened key is never sent; memory asks for the sealed one
        request.credential.CopyFrom(
            credential_reply(
                credential.payer,
                credential.hold,
                credential.sealed,
                credential.pseudonym,
                budgeted=credential.budgeted,
            )
        )
        request.credential_age_ms = math.ceil(age_s * 1000)


def _told_line(record: memory_pb2.RecalledItem) -> str:
    day = record.at.ToDatetime(tzinfo=UTC).date().isoformat()
    return told_line(record.text, day, record.source)
