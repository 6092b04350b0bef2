"""What the main model's tool calls do: hand off work, record and keep promises, pass on answers.

Every call acts only on the conversation of the turn it came from: ids the model names are
looked up within that conversation, and the person comes from the turn, never from the model.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from session.pins import Pins
from session.transcript import Conversation
from violet.channels import Peers
from violet.identity import Identity
from violet.models import ToolCall
from violet.models import tools as t
from violet.v1 import router_pb2, router_pb2_grpc, worker_pb2, worker_pb2_grpc

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    content: str
    is_error: bool = False

    def block(self, call: ToolCall) -> dict:
        block = {"type": "tool_result", "tool_use_id": call.id, "content": self.content}
        if self.is_error:
            block["is_error"] = True
        return block


class MainActions:
    def __init__(self, pins: Pins, peers: Peers) -> None:
        self._pins = pins
        self._peers = peers

    async def run_all(
        self, conversation: Conversation, identity: Identity, calls: Sequence[ToolCall]
    ) -> list[dict]:
        """Runs one round of calls in order; a promise made beside a hand-off is tied to it."""
        results: list[dict] = []
        started: list[str] = []
        for call in calls:
            if call.name == t.START_WORK:
                outcome, topic = await self._start_work(conversation, identity, call.input)
                if topic:
                    started.append(topic)
            elif call.name == t.RECORD_PROMISE:
                outcome = await self._record_promise(conversation, call.input, started)
            elif call.name == t.KEEP_PROMISE:
                outcome = await self._keep_promise(conversation, call.input)
            elif call.name == t.ANSWER_APPROVAL:
                outcome = await self._answer_approval(conversation, identity, call.input)
            else:
                outcome = Outcome(f"There is no tool called {call.name}.", is_error=True)
            results.append(outcome.block(call))
        return results

    async def _start_work(
        self, conversation: Conversation, identity: Identity, arguments: dict
    ) -> tuple[Outcome, str]:
        request = str(arguments.get("request", "")).strip()
        if not request:
            return Outcome("Say what the work is.", is_error=True), ""
        router = self._peers.stub("router", router_pb2_grpc.RouterStub)
        worker = self._peers.stub("worker", worker_pb2_grpc.WorkerStub)
        try:
            decision = await router.Route(
                router_pb2.RouteRequest(request=request), metadata=identity.metadata()
            )
            started = await worker.StartWork(
                worker_pb2.StartWorkRequest(request=request, topic=decision.topic),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            log.warning("work could not be started", extra={"code": error.code().name})
            return Outcome("The work could not be started just now.", is_error=True), ""
        await self._pins.add(conversation.id, "work", request, ref=started.topic)
        return Outcome("Started; the result will come back as an update."), started.topic

    async def _record_promise(
        self, conversation: Conversation, arguments: dict, started: list[str]
    ) -> Outcome:
        text = str(arguments.get("text", "")).strip()
        if not text:
            return Outcome("Say what was promised.", is_error=True)
        topic = started[-1] if started else None
        pin = await self._pins.add(conversation.id, "promise", text, ref=topic)
        return Outcome(json.dumps({"promise_id": pin.id}))

    async def _keep_promise(self, conversation: Conversation, arguments: dict) -> Outcome:
        promise = str(arguments.get("promise_id", ""))
        if await self._pins.close(conversation.id, [promise]):
            return Outcome("Marked as kept.")
        return Outcome("There is no open promise with that id.", is_error=True)

    async def _answer_approval(
        self, conversation: Conversation, identity: Identity, arguments: dict
    ) -> Outcome:
        approval_id, answer = str(arguments.get("approval_id", "")), arguments.get("answer")
        if answer not in ("yes", "no"):
            return Outcome('The answer must be "yes" or "no".', is_error=True)
        waiting = {pin.id: pin for pin in await self._pins.open(conversation.id, "approval")}
        pin = waiting.get(approval_id)
        if pin is None or not pin.ref:
            return Outcome("Nothing is waiting for that answer.", is_error=True)
        worker = self._peers.stub("worker", worker_pb2_grpc.WorkerStub)
        try:
            await worker.AnswerApproval(
                worker_pb2.AnswerApprovalRequest(approval=pin.ref, approved=answer == "yes"),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            log.warning("approval answer not delivered", extra={"code": error.code().name})
            return Outcome("The answer could not be passed on just now.", is_error=True)
        await self._pins.close(conversation.id, [pin.id])
        return Outcome("Passed on." if answer == "yes" else "Dropped, as asked.")
