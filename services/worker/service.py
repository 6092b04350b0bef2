"""The worker's gRPC face: take work over (and return at once), and pass on approvals."""

from __future__ import annotations

import re

import grpc

from violet.identity import authenticate
from violet.telemetry import current_span_ids
from violet.v1 import worker_pb2, worker_pb2_grpc
from worker.cards import title_of
from worker.runner import WorkRunner
from worker.store import WorkStore
from worker.store.erasures import BeingErased

MAX_REQUEST_CHARS = 8_000
MAX_KEY_CHARS = 200
_TOPIC = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
BEING_ERASED = "this person's data is being erased; nothing new of theirs is taken until it is done"


class WorkerService(worker_pb2_grpc.WorkerServicer):
    def __init__(self, store: WorkStore, runner: WorkRunner, secret: str) -> None:
        self._store = store
        self._runner = runner
        self._secret = secret

    async def StartWork(
        self,
        request: worker_pb2.StartWorkRequest,
        context: grpc.aio.ServicerContext[worker_pb2.StartWorkRequest, worker_pb2.StartWorkReply],
    ) -> worker_pb2.StartWorkReply:
        identity = await authenticate(context, self._secret)
        text = request.request.strip()
        if not text or "\x00" in text:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "say what the work is")
        if len(text) > MAX_REQUEST_CHARS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a request holds at most {MAX_REQUEST_CHARS} characters",
            )
        if request.topic and not _TOPIC.match(request.topic):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "that is not a topic id")
        if len(request.key) > MAX_KEY_CHARS or "\x00" in request.key:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "that is not a request key")
        trace_id, span_id = current_span_ids() or (None, None)
        try:
            topic = await self._store.requests.start(
                identity.person,
                request.topic,
                text,
                title=title_of(text),
                key=request.key,
                trace_id=trace_id,
                span_id=span_id,
            )
        except BeingErased:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, BEING_ERASED)
        self._runner.wake(topic, identity.person)
        return worker_pb2.StartWorkReply(topic=topic)

    async def AnswerApproval(
        self,
        request: worker_pb2.AnswerApprovalRequest,
        context: grpc.aio.ServicerContext[
            worker_pb2.AnswerApprovalRequest, worker_pb2.AnswerApprovalReply
        ],
    ) -> worker_pb2.AnswerApprovalReply:
        identity = await authenticate(context, self._secret)
        try:
            approval = await self._store.approvals.answer(
                identity.person, request.approval, request.approved
            )
        except BeingErased:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, BEING_ERASED)
        if approval is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "nothing is waiting for that answer")
        self._runner.wake(approval.work_session_id, identity.person)
        return worker_pb2.AnswerApprovalReply()
