"""What the main model's tool calls do: hand off work, record and keep promises, pass on answers.

Every call acts only on the conversation of the turn it came from: ids the model names are
looked up within that conversation, and the person comes from the turn, never from the model.
Every call is done once per turn, however often the turn runs (see `session.effects`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence

import grpc

from session.conversations import Conversation
from session.effects import CallKeys, Effects
from session.outcomes import Outcome
from session.pins import Pin, Pins
from session.reminders.actions import ReminderActions
from session.reminders.store import Reminders
from violet.channels import Peers
from violet.database import Session
from violet.faults import fault_point
from violet.identity import Identity
from violet.models import ContentBlock, JsonObject, ToolCall
from violet.models import tools as t
from violet.v1 import router_pb2, router_pb2_grpc, worker_pb2, worker_pb2_grpc
from violet.zones import UTC_NAME

REMINDER_TOOLS = frozenset({t.SET_REMINDER, t.LIST_REMINDERS, t.CANCEL_REMINDER})

log = logging.getLogger(__name__)


class WorkNotStarted(Exception):
    """The router or the worker could not be reached."""


class WorkStarter:
    """Hands a request to background work: the router picks its topic, the worker starts it.
    The key goes with it, so a request asked again with it starts nothing new."""

    def __init__(self, peers: Peers) -> None:
        self._peers = peers

    async def start(self, identity: Identity, request: str, key: str) -> str:
        """The topic the request went to."""
        router = self._peers.stub("router", router_pb2_grpc.RouterStub)
        worker = self._peers.stub("worker", worker_pb2_grpc.WorkerStub)
        try:
            decision = await router.Route(
                router_pb2.RouteRequest(request=request), metadata=identity.metadata()
            )
            started = await worker.StartWork(
                worker_pb2.StartWorkRequest(request=request, topic=decision.topic, key=key),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            log.warning("work could not be started", extra={"code": error.code().name})
            raise WorkNotStarted(error.code().name) from error
        return started.topic


class MainActions:
    def __init__(self, pins: Pins, effects: Effects, peers: Peers, reminders: Reminders) -> None:
        self._pins = pins
        self._effects = effects
        self._peers = peers
        self._work = WorkStarter(peers)
        self._reminders = ReminderActions(reminders, effects)

    async def run_all(
        self,
        conversation: Conversation,
        identity: Identity,
        calls: Sequence[ToolCall],
        keys: CallKeys,
        zone: str = UTC_NAME,
    ) -> list[ContentBlock]:
        """Runs one round of calls in order; a promise made beside a hand-off is tied to it. A
        call an earlier run of the same turn already made gets its recorded result instead.
        `zone`: the person's time zone, for reminders."""
        results: list[ContentBlock] = []
        started: list[str] = []
        for call in calls:
            key = keys.next(call.name)
            done = await self._effects.recorded(conversation.id, key)
            if done is not None:
                outcome, topic = Outcome(done.content), done.topic or ""
            else:
                outcome, topic = await self._run(conversation, identity, call, key, started, zone)
            if topic:
                started.append(topic)
            results.append(outcome.block(call))
        return results

    async def _run(
        self,
        conversation: Conversation,
        identity: Identity,
        call: ToolCall,
        key: str,
        started: list[str],
        zone: str,
    ) -> tuple[Outcome, str]:
        if call.name in REMINDER_TOOLS:
            return await self._reminders.run(conversation, call, key, zone), ""
        if call.name == t.START_WORK:
            return await self._start_work(conversation, identity, call.input, key)
        if call.name == t.RECORD_PROMISE:
            return await self._record_promise(conversation, call.input, started, key), ""
        if call.name == t.KEEP_PROMISE:
            return await self._keep_promise(conversation, call.input, key), ""
        if call.name == t.ANSWER_APPROVAL:
            return await self._answer_approval(conversation, identity, call.input, key), ""
        return Outcome(f"There is no tool called {call.name}.", is_error=True), ""

    async def _start_work(
        self, conversation: Conversation, identity: Identity, arguments: JsonObject, key: str
    ) -> tuple[Outcome, str]:
        request = str(arguments.get("request", "")).strip()
        if not request:
            return Outcome("Say what the work is.", is_error=True), ""
        try:
            topic = await self._work.start(identity, request, f"{conversation.id}/{key}")
        except WorkNotStarted:
            return Outcome("The work could not be started just now.", is_error=True), ""
        fault_point("session.work_started")
        outcome = Outcome("Started; the result will come back as an update.")

        async def record(tx: Session, _: Pin) -> None:
            await self._effects.record(tx, conversation.id, key, outcome.content, topic)

        await self._pins.add(conversation.id, "work", request, ref=topic, also=record)
        return outcome, topic

    async def _record_promise(
        self, conversation: Conversation, arguments: JsonObject, started: list[str], key: str
    ) -> Outcome:
        text = str(arguments.get("text", "")).strip()
        if not text:
            return Outcome("Say what was promised.", is_error=True)

        async def record(tx: Session, pin: Pin) -> None:
            await self._effects.record(tx, conversation.id, key, _promise_made(pin))

        topic = started[-1] if started else None
        pin = await self._pins.add(conversation.id, "promise", text, ref=topic, also=record)
        return Outcome(_promise_made(pin))

    async def _keep_promise(
        self, conversation: Conversation, arguments: JsonObject, key: str
    ) -> Outcome:
        promise = str(arguments.get("promise_id", ""))
        kept = Outcome("Marked as kept.")
        if await self._pins.close(
            conversation.id, [promise], also=self._recorder(conversation, key, kept)
        ):
            return kept
        return Outcome("There is no open promise with that id.", is_error=True)

    async def _answer_approval(
        self, conversation: Conversation, identity: Identity, arguments: JsonObject, key: str
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
            # Only the first answer to an approval counts, so passing it on again is harmless.
            await worker.AnswerApproval(
                worker_pb2.AnswerApprovalRequest(approval=pin.ref, approved=answer == "yes"),
                metadata=identity.metadata(),
            )
        except grpc.aio.AioRpcError as error:
            log.warning("approval answer not delivered", extra={"code": error.code().name})
            return Outcome("The answer could not be passed on just now.", is_error=True)
        passed = Outcome("Passed on." if answer == "yes" else "Dropped, as asked.")
        await self._pins.close(
            conversation.id, [pin.id], also=self._recorder(conversation, key, passed)
        )
        return passed

    def _recorder(
        self, conversation: Conversation, key: str, outcome: Outcome
    ) -> Callable[[Session], Awaitable[None]]:
        async def record(tx: Session) -> None:
            await self._effects.record(tx, conversation.id, key, outcome.content)

        return record


def _promise_made(pin: Pin) -> str:
    return json.dumps({"promise_id": pin.id})
