"""Answers every stored message exactly once, in order, one turn of a person at a time.

A message is stored (acked) before its turn runs, so a turn that never finished, on this
replica or one that died, is found again by the sweep and answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from opentelemetry import trace
from sqlalchemy.engine import Connection

from session.capture.owed import Capture, Owed
from session.capture.sender import CaptureSender
from session.conversations import Conversation
from session.feed import Feed
from session.fold import Fold
from session.model_conversations import ModelConversation
from session.notify.outbox import Outbox
from session.store import ConversationStore
from session.transcript import Also, Message, next_unanswered_on
from session.turn import Answer, MainSession
from session.turn_context import TurnContext, TurnReads, turn_reads_on
from session.updates import Update, next_untold_on
from violet.faults import fault_point
from violet.identity import acting_for, service_identity
from violet.leases import Holding, Lease
from violet.metrics import ERRORS, FOLDS, TURN_SECONDS, TURNS
from violet.tasks import end_within
from violet.telemetry import context_from, span_context_from

log = logging.getLogger(__name__)
tracer = trace.get_tracer(__name__)

LOCK_RETRY_S = 0.1
# A fold waits this long at most for the captures under way here (they take milliseconds while
# memory is up); past it, it is put off to the next turn.
CAPTURES_AWAITED_S = 5.0


@dataclass(frozen=True)
class Replica:
    """This replica: its name, the secret it speaks for people with, and the lock that gives
    it one person's turns at a time."""

    name: str
    secret: str
    lock: Lease


@dataclass(frozen=True)
class Delivery:
    """Where a stored turn goes besides the transcript: the feed wakes the person's devices,
    and memory keeps what was said (its capture owed in the trip that stores the turn's words,
    then sent)."""

    feed: Feed
    captures: CaptureSender
    # Told updates a person with no device connected is notified of.
    notices: Outbox


@dataclass(frozen=True)
class Next:
    """What waits in a conversation, read with the conversation as its turn will begin
    (`turn_reads_on`) in the same trip, under the turn lock."""

    work: Message | Update
    reads: TurnReads


@dataclass(frozen=True)
class Taken:
    """A try for a conversation's turn lock: whether it is held now, and what waits."""

    held: bool
    waiting: Next | None


@dataclass(frozen=True)
class Ended:
    """Read in the trip that stores a turn's words: what waits next, and whether that trip
    gave the turn lock back (nothing waited and no fold was due)."""

    waiting: Next | None
    gave_back: bool


class TurnRunner:
    def __init__(
        self,
        store: ConversationStore,
        main: MainSession,
        fold: Fold,
        delivery: Delivery,
        replica: Replica,
        backlog: int | None = None,
    ) -> None:
        """`backlog`: how many people's turns may be under way or waiting on this replica
        before a new person's say is refused (None: no bound)."""
        self._store = store
        self._backlog = backlog
        self._main = main
        self._fold = fold
        self._delivery = delivery
        self._replica = replica
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._served: set[str] = set()
        self._stopping = False

    def schedule(
        self, conversation: Conversation, waiting: bool = False, taken: Taken | None = None
    ) -> None:
        """Answers what waits in the conversation, now or after the drain under way here.
        `waiting`: the caller has just stored a message, so the first look can be spared;
        `taken`: the caller's trip also tried for the turn lock (`take_on`)."""
        if self._stopping and not (taken and taken.held):
            return  # stored already; another replica's sweep answers it
        if conversation.id in self._tasks:
            # The drain under way answers it; a lock taken meanwhile is this replica's, and
            # that drain gives it back.
            self._again.add(conversation.id)
            return
        drain = self._drain(conversation, waiting, taken)
        self._tasks[conversation.id] = asyncio.create_task(drain)

    def take_on(self, connection: Connection, conversation_id: str) -> Taken | None:
        """For the trip that stores a say: takes the turn lock and reads what waits, as a
        drain begins, unless a drain of the conversation is under way here (it answers the
        say). The say's caller then hands what it took to `schedule`."""
        # Read on the worker thread: a drain that begins meanwhile is told by `schedule` to
        # look again, and the lock this takes is this replica's own.
        if conversation_id in self._tasks or self._stopping:
            return None
        return self._take_on(connection, conversation_id)

    def queueing(self) -> frozenset[str] | None:
        """Once the backlog is reached, the conversations whose says may still be stored
        (theirs queue anyway; any other is refused before it is stored); None while any may.
        A snapshot, for a check made off the event loop."""
        if self._backlog is None or len(self._tasks) < self._backlog:
            return None
        return frozenset(self._tasks)

    async def idle(self, conversation: Conversation) -> None:
        """Returns once nothing of the conversation is under way here: for a caller that says
        one message at a time and waits for its answer and the fold after it (the benchmark)."""
        task = self._tasks.get(conversation.id)
        if task is not None:
            await asyncio.shield(task)

    async def sweep_forever(self, every_s: float) -> None:
        while True:
            try:
                for conversation in await self._store.conversations.waiting():
                    self.schedule(conversation)
            except Exception:
                log.exception("sweep for unanswered messages failed")
            await asyncio.sleep(every_s)

    async def stop(self, grace_s: float) -> None:
        """Lets turns under way finish (and release their locks) for up to `grace_s`."""
        self._stopping = True
        await end_within(list(self._tasks.values()), grace_s)

    async def _drain(self, conversation: Conversation, waiting: bool, taken: Taken | None) -> None:
        try:
            with acting_for(conversation.person):  # a sweep's turn is the person's too
                while True:
                    self._again.discard(conversation.id)
                    await self._answer_waiting(conversation, waiting, taken)
                    waiting, taken = False, None
                    if conversation.id not in self._again:
                        return
        except Exception:
            ERRORS.add(1, {"violet.error.where": "turn"})
            log.exception("turn failed; the sweep will try again")
        finally:
            del self._tasks[conversation.id]

    async def _next(self, conversation: Conversation) -> Message | Update | None:
        if self._stopping:
            return None
        return await self._store.database.run(waiting_on, conversation.id)

    async def _answer_waiting(
        self, conversation: Conversation, waiting: bool, taken: Taken | None
    ) -> None:
        """Answers what waits, under the conversation's lock (`taken` already, or not).
        Once the lock's holder finds nothing more, it is done without looking again: what
        arrives later on this replica schedules another drain, and a replica that found the
        lock held tries again."""
        lock = self._replica.lock
        while taken or waiting or await self._next(conversation) is not None:
            waiting = False
            if taken is None:
                taken = await self._store.database.run(self._take_on, conversation.id)
            held, work = taken.held, taken.waiting
            taken = None
            if not held:
                await asyncio.sleep(LOCK_RETRY_S)  # another replica's turn; it may answer ours
                continue
            async with lock.held(conversation.id) as holding:
                while work is not None and not self._stopping:
                    if isinstance(work.work, Message):
                        work = await self._turn(conversation, work.work, work.reads, holding)
                    else:
                        work = await self._tell(conversation, work.work, work.reads, holding)
            return

    def _take_on(self, connection: Connection, conversation_id: str) -> Taken:
        """Takes the conversation's lock and, once taken, reads what waits: one trip."""
        if not self._replica.lock.try_acquire_on(connection, conversation_id):
            return Taken(held=False, waiting=None)
        return Taken(held=True, waiting=next_on(connection, conversation_id))

    async def _context(self, conversation: Conversation, read: TurnReads) -> TurnContext:
        identity = service_identity(conversation.person, self._replica.secret)
        model_conversation = await self._model_conversation(conversation, read.current)
        return read.context(conversation, identity, model_conversation)

    async def _turn(
        self, conversation: Conversation, message: Message, reads: TurnReads, holding: Holding
    ) -> Next | None:
        """Answers the message (`reads`: the conversation as its turn begins); what waits
        next."""
        # The turn joins the trace its message arrived in, whichever replica runs it.
        with tracer.start_as_current_span("turn", context=context_from(message.trace_context)):
            began = time.monotonic()
            context = await self._context(conversation, reads)
            said = await self._main.answer(context, message)
            fault_point("session.answer_ready")
            # The answer is stored, its capture owed, and what waits next read, in one trip.
            answer, owed, ended = await self._store.database.run(
                self._answer_on, context, message, said
            )
            fault_point("session.answer_stored")
            self._delivery.feed.publish(context.conversation.id, answer)
            self._delivery.captures.send(owed)
            TURNS.add(1, {"violet.turn.kind": "message"})
            TURN_SECONDS.record(time.monotonic() - began, {"violet.turn.kind": "message"})
            return await self._after(context.after(answer), ended, said.roll_over, holding)

    def _answer_on(
        self, connection: Connection, context: TurnContext, message: Message, said: Answer
    ) -> tuple[Message, Owed | None, Ended]:
        conversation, model = context.conversation, context.model_conversation.id
        answer = self._store.transcript.answer_on(
            connection, conversation.id, message, said.text, model
        )
        owed = None
        if said.remember:  # a turn the model declined leaves nothing in memory
            seqs = (message.seq, answer.seq)
            capture = Capture(message.text, said.text, seqs, message.at, told=said.told)
            owed = self._delivery.captures.owe_on(connection, conversation, capture, answer.at)
        return answer, owed, self._ended_on(connection, context.after(answer), said.roll_over)

    def _told_on(
        self,
        connection: Connection,
        context: TurnContext,
        update: Update,
        said: Answer,
        then: Also,
    ) -> tuple[Message, Owed | None, Ended]:
        conversation, model = context.conversation, context.model_conversation.id
        told = self._store.transcript.told_on(
            connection, conversation.id, update.id, said.text, model, then
        )
        # What Violet did is remembered, and a result as she told it is kept as a told record
        # with its sources; the result's words are never a fact about the person.
        result = said.told if update.kind == "result" else ""
        owed = None
        if update.deeds or result:
            capture = Capture(
                "", "", (told.seq,), told.at, result, tuple(update.deeds), tuple(update.sources)
            )
            owed = self._delivery.captures.owe_on(connection, conversation, capture, told.at)
        return told, owed, self._ended_on(connection, context.after(told), said.roll_over)

    def _ended_on(self, connection: Connection, after: TurnContext, roll_over: bool) -> Ended:
        """What waits next, read in the trip that stored the turn's words; when nothing does
        and no fold is due, the drain is over and the trip gives the lock back too."""
        conversation_id = after.conversation.id
        waiting = next_on(connection, conversation_id)
        if waiting is not None or self._fold.due(after, roll_over):
            return Ended(waiting, gave_back=False)
        self._replica.lock.release_on(connection, conversation_id)
        return Ended(None, gave_back=True)

    async def _tell(
        self, conversation: Conversation, update: Update, reads: TurnReads, holding: Holding
    ) -> Next | None:
        """Tells the update (`reads`: the conversation as its telling begins); what waits
        next."""
        linked = span_context_from(update.trace_context)
        links = [trace.Link(linked)] if linked else []
        with tracer.start_as_current_span("tell update", links=links) as span:
            span.set_attribute("violet.update.kind", update.kind)
            context = await self._context(conversation, reads)
            said = await self._main.tell(context, update)
            fault_point("session.telling_ready")
            notify = self._delivery.notices.told(conversation.person, update.kind)
            told, owed, ended = await self._store.database.run(
                self._told_on, context, update, said, notify
            )
            self._delivery.notices.wake(notify)
            self._delivery.feed.publish(context.conversation.id, told)
            self._delivery.captures.send(owed)
            TURNS.add(1, {"violet.turn.kind": "update"})
            return await self._after(context.after(told), ended, said.roll_over, holding)

    async def _after(
        self, context: TurnContext, ended: Ended, roll_over: bool, holding: Holding
    ) -> Next | None:
        """What waits next once the turn's words are stored: nothing when their trip gave the
        lock back, else what a fold leaves."""
        if ended.gave_back:
            holding.given_back = True
            return None
        return await self._fold_when_caught_up(context, ended.waiting, roll_over)

    async def _fold_when_caught_up(
        self, context: TurnContext, waiting: Next | None, roll_over: bool
    ) -> Next | None:
        """Folds when it is due, but only once no message waits (`waiting`, read as the turn's
        words were stored): a fold must not summarise an unanswered question out of the window
        before its turn comes (a failed or skipped fold is tried next turn). `roll_over` folds
        even before the window is full. Returns what waits next."""
        if waiting is not None and isinstance(waiting.work, Message):
            return waiting
        if not self._fold.due(context, roll_over):
            return waiting
        # What it folds must be in memory first: the captures on their way here go first.
        await self._delivery.captures.sent_here(context.conversation.id, CAPTURES_AWAITED_S)
        await self._run_fold(context, roll_over)
        # The fold changed what a turn begins with, and may have left questions to tell.
        return await self._store.database.run(next_on, context.conversation.id)

    async def _run_fold(self, context: TurnContext, roll_over: bool) -> None:
        with tracer.start_as_current_span("fold") as span:
            result = await self._fold.after_turn(context, roll_over)
            span.set_attribute("violet.fold.folded", result.folded)
            span.set_attribute("violet.fold.forced", result.forced)
            span.set_attribute("violet.fold.failed", result.failed)
            span.set_attribute("violet.fold.asked", result.asked)
            span.set_attribute("violet.fold.waited_for_capture", result.waited_for_capture)
            if result.folded or result.failed:
                FOLDS.add(1, {"violet.fold.outcome": "failed" if result.failed else "folded"})

    async def _model_conversation(
        self, conversation: Conversation, current: ModelConversation | None
    ) -> ModelConversation:
        """The model conversation this turn belongs to: the current one; a replica new to the
        person opens one, rebuilt from the transcript and the summary (the same messages)."""
        models = self._store.model_conversations
        if current is not None and conversation.id in self._served:
            return current
        self._served.add(conversation.id)
        replica = self._replica.name
        if current is None:
            return await models.start(conversation.id, "first message", replica, carry_from_seq=1)
        return await models.start(conversation.id, "moved server", replica, current.carry_from_seq)


def next_on(connection: Connection, conversation_id: str) -> Next | None:
    """What waits, with the reads its turn begins with."""
    work = waiting_on(connection, conversation_id)
    return None if work is None else Next(work, turn_reads_on(connection, conversation_id))


def waiting_on(connection: Connection, conversation_id: str) -> Message | Update | None:
    """The person's next message; when none waits, the next work update to tell."""
    return next_unanswered_on(connection, conversation_id) or next_untold_on(
        connection, conversation_id
    )
