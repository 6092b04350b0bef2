"""The turn runner in one process, over a SQLite transcript, with the model, memory, the router
and the worker stood in: every stored message is answered once, in order, whatever wakes it;
a failing model still gets the person an answer; the model's tool calls are run and their
results handed back before the answer; an answered turn is captured for memory; the fold waits
until no message is waiting; a work result is told."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from session.account_phrases import SPEND_LIMIT
from session.actions import MainActions
from session.capture.sender import CaptureSender
from session.conversations import Conversation
from session.fold import Fold, FoldResult
from session.runner import Replica, TurnRunner
from session.store import ConversationStore
from session.transcript import Message
from session.turn import APOLOGY, MainSession
from session.turn_context import TurnContext
from session.turn_lock import turn_lock
from session.window import Window
from tests.support.fakes import (
    REPLY,
    Captured,
    FakeMemory,
    FakeModel,
    FakePeers,
    capture_delivery,
    session_tables,
)
from tests.support.trips import trips_of
from violet import fallbacks
from violet.leases import Lease
from violet.models import SpendLimitReached, ToolCall
from violet.models import tools as t
from violet.models.structured import FOLD

WINDOW = 20
REPLICA = "replica-a"


@dataclass
class Rig:
    runner: TurnRunner
    store: ConversationStore
    model: FakeModel
    memory: FakeMemory
    peers: FakePeers
    conversation: Conversation
    lock: Lease
    captures: CaptureSender

    async def say(self, *texts: str) -> None:
        """Stores each message as the gateway's Say does, then wakes the runner for it."""
        for number, text in enumerate(texts, start=1):
            await self.store.transcript.append_say(self.conversation, f"d{number}", text)
            self.runner.schedule(self.conversation)

    async def settled(self) -> list[Message]:
        """Every message of the conversation, once the runner has nothing under way for it and
        the captures of its turns are sent."""
        await self.runner.idle(self.conversation)
        await self.captures.sent_here(self.conversation.id)
        return await self.store.transcript.since(self.conversation.id, 0)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with session_tables(tmp_path) as sessions:
        model, memory, peers = FakeModel(), FakeMemory(), FakePeers()
        store = ConversationStore.open(sessions, notify=False)
        window = Window(WINDOW)
        actions = MainActions(store.pins, store.effects, peers, store.reminders)  # type: ignore[arg-type]
        main = MainSession(model, store.pins, memory, actions, window)  # type: ignore[arg-type]
        lock = turn_lock(sessions, REPLICA, 5.0)
        delivery, captures = capture_delivery(sessions, memory, REPLICA)
        runner = TurnRunner(
            store,
            main,
            Fold(model, store, window, REPLICA),
            delivery,
            Replica(REPLICA, "a secret only this test knows", lock),
        )
        conversation = await store.conversations.conversation_of("ana")
        yield Rig(runner, store, model, memory, peers, conversation, lock, captures)
        await runner.stop(grace_s=5.0)
        await captures.stop(grace_s=5.0)


def answers(messages: list[Message]) -> list[tuple[str | None, str]]:
    return [(m.reply_to, m.text) for m in messages if m.author == "violet"]


async def test_each_message_is_answered_once_in_order_however_often_it_is_woken(
    rig: Rig,
) -> None:
    for number in (1, 2, 3):
        rig.model.will_say(f"Answer {number}.")
    await rig.say("First.", "Second.", "Third.")
    rig.runner.schedule(rig.conversation)  # the sweep finding them too
    rig.runner.schedule(rig.conversation)

    messages = await rig.settled()
    assert answers(messages) == [("d1", "Answer 1."), ("d2", "Answer 2."), ("d3", "Answer 3.")]
    assert len(rig.model.conversations) == 3
    assert await rig.store.transcript.next_unanswered(rig.conversation.id) is None


@pytest.mark.expects_fallbacks
async def test_a_failing_main_model_still_answers_once_asking_to_say_it_again(rig: Rig) -> None:
    rig.model.failing.add(REPLY)
    before = fallbacks.counts()
    await rig.say("Are you there?")

    assert answers(await rig.settled()) == [("d1", APOLOGY["en"])]
    assert rig.model.calls == [REPLY]
    assert fallbacks.counts() - before == {"answer_failed": 1}


@pytest.mark.expects_fallbacks
async def test_a_spent_spending_limit_is_told_as_such_not_as_a_passing_failure(rig: Rig) -> None:
    rig.model.failing.add(REPLY)
    rig.model.reply_failure = SpendLimitReached("the paying account reached its limit")
    before = fallbacks.counts()
    await rig.say("Are you there?")

    assert answers(await rig.settled()) == [("d1", SPEND_LIMIT["en"])]
    assert fallbacks.counts() - before == {"spend_limit": 1}


async def test_a_tool_call_is_run_and_its_result_handed_back_before_the_answer(
    rig: Rig,
) -> None:
    rig.model.will_call(ToolCall("toolu_1", t.START_WORK, {"request": "find the ferry times"}))
    rig.model.will_say("I've asked for the ferry times.")
    await rig.say("When do the ferries leave?")

    assert answers(await rig.settled()) == [("d1", "I've asked for the ferry times.")]
    [started] = rig.peers.called("StartWork")
    assert started.request == "find the ferry times"
    assert started.key == f"{rig.conversation.id}/say:1/start_work/1"
    handed_back = rig.model.conversations[1][-1]
    assert handed_back["role"] == "user"
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in handed_back["content"]] == [
        ("toolu_1", False)
    ]
    assert [(p.kind, p.ref) for p in await rig.store.pins.open(rig.conversation.id)] == [
        ("work", rig.peers.topic)
    ]


async def test_an_answered_turn_is_recalled_for_and_captured_with_both_messages(
    rig: Rig,
) -> None:
    rig.memory.remembered = ["Ana's cat is called Miso."]
    rig.model.will_say("Miso sounds lovely.")
    await rig.say("Do you remember my cat?")
    messages = await rig.settled()
    await rig.captures.sent_here(rig.conversation.id)

    assert rig.memory.recalls == [("ana", "Do you remember my cat?")]
    assert "Ana's cat is called Miso." in str(rig.model.conversations[0])
    said, answered = messages
    assert rig.memory.captured == [
        Captured("ana", said.text, answered.text, [said.seq, answered.seq], [], answered.text)
    ]


async def test_the_fold_waits_until_no_message_is_waiting(rig: Rig) -> None:
    await rig.say(*(f"Line {n} of a long story." for n in range(1, WINDOW // 2 + 3)))

    messages = await rig.settled()
    turns = WINDOW // 2 + 2
    assert len(answers(messages)) == turns
    # The window was full before the last answers, but a fold then would have summarised
    # messages still waiting for theirs.
    assert rig.model.calls == [REPLY] * turns + [FOLD]
    assert "Line 1 " in await rig.store.summaries.of(rig.conversation.id)


async def test_the_last_turn_gives_the_lock_back_in_the_trip_that_stores_its_answer(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = released_by_a_trip_of_its_own(rig.lock, monkeypatch)
    await rig.say("Hello.")
    await rig.settled()

    assert released == []
    another_replica = turn_lock(rig.store.database, "replica-b", 5.0)
    assert await another_replica.try_acquire(rig.conversation.id)


async def test_a_turn_a_fold_follows_keeps_the_lock_until_the_fold_is_done(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    released = released_by_a_trip_of_its_own(rig.lock, monkeypatch)
    another_replica = turn_lock(rig.store.database, "replica-b", 5.0)
    taken_meanwhile: list[bool] = []
    after_turn = Fold.after_turn

    async def fold_watched(fold: Fold, context: TurnContext, roll_over: bool = False) -> FoldResult:
        taken_meanwhile.append(await another_replica.try_acquire(rig.conversation.id))
        return await after_turn(fold, context, roll_over)

    monkeypatch.setattr(Fold, "after_turn", fold_watched)
    for n in range(1, WINDOW // 2 + 1):
        await rig.say(f"Line {n} of a long story.")
        await rig.settled()

    assert rig.model.calls[-1] == FOLD
    assert taken_meanwhile == [False]  # the one fold ran under the lock
    assert released == [rig.conversation.id]  # given back once, after the fold
    assert await another_replica.try_acquire(rig.conversation.id)


async def test_a_turn_after_the_first_is_two_trips_to_the_database_and_its_capture_one(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    await rig.say("Hello.")
    await rig.settled()
    trips = trips_of(rig.store.database, monkeypatch)
    rig.runner.schedule(rig.conversation)  # nothing waits: one look
    await rig.runner.idle(rig.conversation)
    assert trips == ["waiting_on"]
    trips.clear()
    await rig.store.transcript.append_say(rig.conversation, "d2", "And again.")
    rig.runner.schedule(rig.conversation, waiting=True)  # as a say just stored does
    await rig.runner.idle(rig.conversation)
    await rig.captures.sent_here(rig.conversation.id)

    # The lock taken with what waits and what its turn begins with; the answer stored with
    # its capture owed and the look for what waits next, and the lock given back; once memory
    # took the capture, it is deleted with a look for any owed after it.
    assert trips == ["_say", "_take_on", "_answer_on", "_done_then_next_on"]


async def test_a_say_can_take_its_turn_in_the_trip_that_stores_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig.model.will_say("One.")
    rig.model.will_say("Two.")
    await rig.say("Hello.")
    await rig.settled()
    trips = trips_of(rig.store.database, monkeypatch)
    placed = await rig.store.transcript.append_say_to(
        lambda _: rig.conversation.id, "d2", "And again.", rig.runner.take_on
    )
    assert placed is not None and placed[2] is not None and placed[2].held
    rig.runner.schedule(rig.conversation, waiting=True, taken=placed[2])

    assert answers(await rig.settled()) == [("d1", "One."), ("d2", "Two.")]
    # The capture goes in one trip more, once memory took it; and the test's own read.
    assert trips == ["_say", "_answer_on", "_done_then_next_on", "since_on"]


async def test_a_say_stored_during_a_drain_leaves_its_turn_to_that_drain(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    thinking, go_on = asyncio.Event(), asyncio.Event()
    reply = rig.model.reply

    async def slow_reply(**call):  # type: ignore[no-untyped-def]
        thinking.set()
        await go_on.wait()
        return await reply(**call)

    monkeypatch.setattr(rig.model, "reply", slow_reply)
    rig.model.will_say("One.")
    rig.model.will_say("Two.")
    await rig.say("Hello.")
    await thinking.wait()  # the first turn is under way, holding the lock
    placed = await rig.store.transcript.append_say_to(
        lambda _: rig.conversation.id, "d2", "And again.", rig.runner.take_on
    )
    assert placed is not None and placed[2] is None  # not taken: that drain answers it
    rig.runner.schedule(rig.conversation, waiting=True, taken=None)
    go_on.set()

    assert answers(await rig.settled()) == [("d1", "One."), ("d2", "Two.")]
    another_replica = turn_lock(rig.store.database, "replica-b", 5.0)
    assert await another_replica.try_acquire(rig.conversation.id)


def released_by_a_trip_of_its_own(lock: Lease, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys `lock.release` gives back (it still does), each in a trip of its own."""
    released: list[str] = []
    release = lock.release

    async def recorded(key: str) -> None:
        released.append(key)
        await release(key)

    monkeypatch.setattr(lock, "release", recorded)
    return released


async def test_a_work_result_is_told_in_violets_words_and_its_pins_closed(rig: Rig) -> None:
    rig.model.will_call(ToolCall("toolu_1", t.START_WORK, {"request": "find the ferry times"}))
    rig.model.will_say("I'll find them.")
    await rig.say("When do the ferries leave?")
    await rig.settled()

    result = "The ferries leave at 9:00 and 17:30."
    source = {"page": "https://ferry.example/times", "title": "Ferry times"}
    await rig.store.updates.store(
        rig.conversation.id, "result:1", rig.peers.topic, "result", result, sources=[source]
    )
    rig.model.will_say("The ferries leave at nine and half past five.")
    rig.runner.schedule(rig.conversation)

    messages = await rig.settled()
    await rig.captures.sent_here(rig.conversation.id)
    # What Violet told of the result is kept as told, with its page; it makes no fact.
    (told,) = [c for c in rig.memory.captured if not c.said]
    assert (told.answered, told.told, told.sources) == ("", messages[-1].text, [source])
    assert messages[-1].author == "violet" and messages[-1].reply_to is None
    assert messages[-1].text == "The ferries leave at nine and half past five."
    assert result in str(rig.model.conversations[-1])
    assert await rig.store.updates.next_untold(rig.conversation.id) is None
    assert await rig.store.pins.open(rig.conversation.id) == []


async def test_past_the_backlog_a_new_persons_say_is_refused_but_a_waiting_persons_is_not(
    tmp_path: Path,
) -> None:
    held = asyncio.Event()

    class HeldModel(FakeModel):
        async def reply(self, **call):  # type: ignore[no-untyped-def, override]
            await held.wait()
            return await super().reply(**call)

    async with session_tables(tmp_path) as sessions:
        model, memory = HeldModel(), FakeMemory()
        store = ConversationStore.open(sessions, notify=False)
        window = Window(WINDOW)
        actions = MainActions(store.pins, store.effects, FakePeers(), store.reminders)  # type: ignore[arg-type]
        runner = TurnRunner(
            store,
            MainSession(model, store.pins, memory, actions, window),  # type: ignore[arg-type]
            Fold(model, store, window, REPLICA),
            capture_delivery(sessions, memory, REPLICA)[0],
            Replica(REPLICA, "a secret only this test knows", turn_lock(sessions, REPLICA, 5.0)),
            backlog=1,
        )
        ana = await store.conversations.conversation_of("ana")
        bea = await store.conversations.conversation_of("bea")
        assert runner.queueing() is None  # any say may be stored
        await store.transcript.append_say(ana, "d1", "Hello there.")
        runner.schedule(ana)

        # Only Ana's: her turns queue behind the one under way anyway; Bea's is refused.
        assert runner.queueing() == frozenset({ana.id})
        assert bea.id not in runner.queueing()
        held.set()
        await runner.idle(ana)
        assert runner.queueing() is None
        await runner.stop(grace_s=5.0)
