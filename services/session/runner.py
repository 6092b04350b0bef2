"""Answers every stored message exactly once, in order, one turn of a person at a time.

A message is stored (acked) before its turn runs, so a turn that never finished, on this
replica or one that died, is found again by the sweep and answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from opentelemetry import trace

from session.feed import Feed
from session.fold import Folder
from session.peers import MemoryClient
from session.transcript import Conversation, Message, Transcript
from session.turn import MainSession
from session.turn_lock import TurnLock
from session.updates import Update, Updates
from violet.faults import fault_point
from violet.identity import Identity, acting_for, service_identity
from violet.metrics import ERRORS, FOLDS, TURN_SECONDS, TURNS
from violet.telemetry import context_from, span_context_from

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

LOCK_RETRY_S = 0.1


class TurnRunner:
    def __init__(
        self,
        transcript: Transcript,
        lock: TurnLock,
        main: MainSession,
        folder: Folder,
        updates: Updates,
        memory: MemoryClient,
        feed: Feed,
        replica: str,
        secret: str,
    ) -> None:
        self._transcript = transcript
        self._lock = lock
        self._main = main
        self._folder = folder
        self._updates = updates
        self._memory = memory
        self._feed = feed
        self._replica = replica
        self._secret = secret
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._served: set[str] = set()
        self._captures: set[asyncio.Task[None]] = set()
        self._stopping = False

    def schedule(self, conversation: Conversation) -> None:
        if self._stopping:
            return  # stored already; another replica's sweep answers it
        if conversation.id in self._tasks:
            self._again.add(conversation.id)
            return
        self._tasks[conversation.id] = asyncio.create_task(self._drain(conversation))

    async def idle(self, conversation: Conversation) -> None:
        """Returns once nothing of the conversation is under way here: for a caller that says
        one message at a time and waits for its answer and the fold after it (the benchmark)."""
        task = self._tasks.get(conversation.id)
        if task is not None:
            await asyncio.shield(task)

    async def sweep_forever(self, every_s: float) -> None:
        while True:
            try:
                for conversation in await self._transcript.waiting():
                    self.schedule(conversation)
            except Exception:
                log.exception("sweep for unanswered messages failed")
            await asyncio.sleep(every_s)

    async def stop(self, grace_s: float) -> None:
        """Lets turns under way finish (and release their locks) for up to `grace_s`."""
        self._stopping = True
        running = [*self._tasks.values(), *self._captures]
        if running:
            await asyncio.wait(running, timeout=grace_s)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def _drain(self, conversation: Conversation) -> None:
        try:
            with acting_for(conversation.person):  # a sweep's turn is the person's too
                while True:
                    self._again.discard(conversation.id)
                    await self._answer_waiting(conversation)
                    if conversation.id not in self._again:
                        return
        except Exception:
            ERRORS.add(1, {"violet.error.where": "turn"})
            log.exception("turn failed; the sweep will try again")
        finally:
            del self._tasks[conversation.id]

    async def _next(self, conversation: Conversation) -> Message | Update | None:
        """The person's next message; when none waits, the next work update to tell."""
        if self._stopping:
            return None
        message = await self._transcript.next_unanswered(conversation.id)
        return message or await self._updates.next_untold(conversation.id)

    async def _answer_waiting(self, conversation: Conversation) -> None:
        while await self._next(conversation) is not None:
            if not await self._lock.try_acquire(conversation.id):
                await asyncio.sleep(LOCK_RETRY_S)  # another replica's turn; it may answer ours
                continue
            async with self._lock.held(conversation.id):
                while work := await self._next(conversation):
                    if isinstance(work, Message):
                        await self._turn(conversation, work)
                    else:
                        await self._tell(conversation, work)

    async def _turn(self, conversation: Conversation, message: Message) -> None:
        # The turn joins the trace its message arrived in, whichever replica runs it.
        with tracer.start_as_current_span("turn", context=context_from(message.trace_context)):
            began = time.monotonic()
            identity = service_identity(conversation.person, self._secret)
            model_conversation = await self._model_conversation(conversation)
            text = await self._main.answer(conversation, identity, message)
            fault_point("session.answer_ready")
            answer_seq = await self._transcript.append_answer(
                conversation, message, text, model_conversation
            )
            fault_point("session.answer_stored")
            self._feed.publish(conversation.id)
            TURNS.add(1, {"violet.turn.kind": "message"})
            TURN_SECONDS.record(time.monotonic() - began, {"violet.turn.kind": "message"})
            self._capture(identity, message.text, text, [message.seq, answer_seq])
            await self._fold_when_caught_up(conversation)

    async def _tell(self, conversation: Conversation, update: Update) -> None:
        linked = span_context_from(update.trace_context)
        links = [trace.Link(linked)] if linked else []
        with tracer.start_as_current_span("tell update", links=links) as span:
            span.set_attribute("violet.update.kind", update.kind)
            identity = service_identity(conversation.person, self._secret)
            model_conversation = await self._model_conversation(conversation)
            text = await self._main.tell(conversation, identity, update)
            fault_point("session.telling_ready")
            seq = await self._transcript.append_told(
                conversation, update.id, text, model_conversation
            )
            self._feed.publish(conversation.id)
            TURNS.add(1, {"violet.turn.kind": "update"})
            if update.deeds:  # what Violet did is remembered; the result's words never are
                self._capture(identity, "", "", [seq], deeds=update.deeds)
            await self._fold_when_caught_up(conversation)

    async def _fold_when_caught_up(self, conversation: Conversation) -> None:
        """Folds only once no message waits: a fold must not summarise an unanswered question
        out of the window before its turn comes (a failed or skipped fold is tried next turn)."""
        if await self._transcript.next_unanswered(conversation.id) is None:
            await self._fold(conversation)

    async def _fold(self, conversation: Conversation) -> None:
        with tracer.start_as_current_span("fold") as span:
            result = await self._folder.after_turn(conversation)
            span.set_attribute("violet.fold.folded", result.folded)
            span.set_attribute("violet.fold.forced", result.forced)
            span.set_attribute("violet.fold.failed", result.failed)
            span.set_attribute("violet.fold.asked", result.asked)
            if result.folded or result.failed:
                FOLDS.add(1, {"violet.fold.outcome": "failed" if result.failed else "folded"})

    def _capture(
        self,
        identity: Identity,
        said: str,
        answered: str,
        seqs: list[int],
        deeds: Sequence[dict] = (),
    ) -> None:
        """Memory capture runs beside the conversation, never in front of the next answer."""
        capture = asyncio.create_task(self._memory.capture(identity, said, answered, seqs, deeds))
        self._captures.add(capture)
        capture.add_done_callback(self._captures.discard)

    async def _model_conversation(self, conversation: Conversation) -> str:
        """The model conversation this turn belongs to; a replica new to the person opens one,
        rebuilt from the transcript and the summary."""
        current = await self._transcript.current_model_conversation(conversation.id)
        if current is not None and conversation.id in self._served:
            return current.id
        self._served.add(conversation.id)
        if current is None:
            opened = await self._transcript.start_model_conversation(
                conversation.id, "first message", self._replica, carry_from_seq=1
            )
        else:
            opened = await self._transcript.start_model_conversation(
                conversation.id, "moved server", self._replica, current.carry_from_seq
            )
        return opened.id
