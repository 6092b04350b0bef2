"""Each turn's capture owed until memory has it: written with the turn's words, sent at once
while memory is there, kept through memory's absence and sent in order once it is back; the
fold waits for it; what is owed stays within its bounds. Over a SQLite transcript, with memory
stood in (`FakeMemory`, which fails as an unreachable memory does while `away`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update

from session.actions import MainActions
from session.capture import owed as owed_module
from session.capture.owed import Bounds, Conversations, OwedCaptures
from session.capture.sender import CaptureSender, backoff
from session.conversations import Conversation
from session.fold import Fold
from session.runner import Replica, TurnRunner
from session.store import ConversationStore
from session.tables import owed_captures
from session.turn import MainSession
from session.turn_lock import turn_lock
from session.window import Window
from tests.support.fakes import FakeMemory, FakeModel, FakePeers, capture_delivery, session_tables
from violet import fallbacks
from violet.clock import utc_now
from violet.models.structured import FOLD

WINDOW = 20
REPLICA = "replica-a"


@dataclass
class Rig:
    runner: TurnRunner
    store: ConversationStore
    model: FakeModel
    memory: FakeMemory
    captures: CaptureSender
    owed: OwedCaptures
    conversation: Conversation

    async def say(self, *texts: str) -> None:
        for text in texts:
            said = len(await self.store.transcript.since(self.conversation.id, 0))
            await self.store.transcript.append_say(self.conversation, f"d{said}", text)
            self.runner.schedule(self.conversation)
            await self.runner.idle(self.conversation)
        await self.captures.sent_here(self.conversation.id)

    async def owed_seqs(self) -> list[int]:
        async with self.store.database() as db:
            rows = await db.execute(select(owed_captures.c.seq).order_by(owed_captures.c.seq))
            return [row.seq for row in rows]

    async def due_now(self) -> None:
        """As though every backoff had passed."""
        async with self.store.database.begin() as db:
            await db.execute(update(owed_captures).values(due_at=utc_now()))

    async def memory_back(self) -> None:
        self.memory.away = False
        # A sweep's drain may still be trying while memory was away (on a slow run the first
        # backoff passes before the sweep): it ends first, or the next sweep leaves its
        # conversation to it.
        await self.captures.sent_here(self.conversation.id)
        await self.due_now()
        await self.captures.sweep()
        await self.captures.sent_here(self.conversation.id)


async def rig_with(tmp_path: Path, bounds: Bounds | None = None) -> AsyncIterator[Rig]:
    async with session_tables(tmp_path) as sessions:
        model, memory = FakeModel(), FakeMemory()
        store = ConversationStore.open(sessions, notify=False)
        window = Window(WINDOW)
        actions = MainActions(store.pins, store.effects, FakePeers(), store.reminders)  # type: ignore[arg-type]
        main = MainSession(model, store.pins, memory, actions, window)  # type: ignore[arg-type]
        if bounds is None:
            delivery, captures = capture_delivery(sessions, memory, REPLICA)
        else:
            delivery, captures = capture_delivery(sessions, memory, REPLICA, bounds)
        runner = TurnRunner(
            store,
            main,
            Fold(model, store, window, REPLICA),
            delivery,
            Replica(REPLICA, "a secret only this test knows", turn_lock(sessions, REPLICA, 5.0)),
        )
        conversation = await store.conversations.conversation_of("ana")
        owed = OwedCaptures(sessions, REPLICA, 5.0)
        yield Rig(runner, store, model, memory, captures, owed, conversation)
        await runner.stop(grace_s=5.0)
        await captures.stop(grace_s=5.0)


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async for made in rig_with(tmp_path):
        yield made


def said_texts(memory: FakeMemory) -> list[str]:
    return [captured.said for captured in memory.captured]


async def test_a_capture_is_sent_at_once_and_leaves_nothing_owed(rig: Rig) -> None:
    await rig.say("My locker number is 4817.")
    assert said_texts(rig.memory) == ["My locker number is 4817."]
    assert await rig.owed_seqs() == []


async def test_while_memory_is_away_people_are_answered_and_their_captures_kept_in_order(
    rig: Rig,
) -> None:
    rig.memory.away = True
    facts = ["My locker number is 4817.", "My bike lock code is 5520.", "I live in Lyon."]
    await rig.say(*facts)
    messages = await rig.store.transcript.since(rig.conversation.id, 0)
    assert [m.author for m in messages] == ["you", "violet"] * 3  # every say answered
    assert rig.memory.captured == []
    assert await rig.owed_seqs() == [2, 4, 6]

    # Not sent again before its backoff has passed.
    async with rig.store.database.begin() as db:
        await db.execute(update(owed_captures).values(due_at=utc_now() + timedelta(hours=1)))
    assert await rig.captures.sweep() == 0
    await rig.memory_back()
    assert said_texts(rig.memory) == facts  # each once, in the order said
    assert await rig.owed_seqs() == []


async def test_a_capture_owed_behind_another_waits_for_it(rig: Rig) -> None:
    rig.memory.away = True
    await rig.say("My locker number is 4817.")
    rig.memory.away = False
    await rig.say("My bike lock code is 5520.")
    # Memory is back, but the second may not go before the first.
    assert rig.memory.captured == []
    assert await rig.owed_seqs() == [2, 4]
    await rig.memory_back()
    assert said_texts(rig.memory) == ["My locker number is 4817.", "My bike lock code is 5520."]


async def test_the_fold_waits_for_an_unacknowledged_capture_and_goes_on_once_it_is(
    rig: Rig,
) -> None:
    rig.memory.away = True
    await rig.say(*(f"Line {n} of a long story." for n in range(1, WINDOW // 2 + 1)))
    # The window is full: a fold is due, but it would fold messages memory has not taken.
    assert FOLD not in rig.model.calls
    assert await rig.store.summaries.of(rig.conversation.id) == ""

    await rig.memory_back()
    await rig.say("One more line.")
    assert rig.model.calls.count(FOLD) == 1
    assert "Line 1 " in await rig.store.summaries.of(rig.conversation.id)


@pytest.mark.expects_fallbacks
async def test_at_twice_the_window_the_rollover_happens_anyway_and_the_captures_stay_owed(
    rig: Rig,
) -> None:
    rig.memory.away = True
    before = fallbacks.counts()["fold_before_capture"]
    await rig.say(*(f"Line {n} of a long story." for n in range(1, WINDOW + 1)))
    assert rig.model.calls.count(FOLD) == 1  # at 2 x window, after the last turn
    assert fallbacks.counts()["fold_before_capture"] - before == 1
    assert len(await rig.owed_seqs()) == WINDOW  # nothing dropped: memory gets them later

    await rig.memory_back()
    assert len(rig.memory.captured) == WINDOW
    assert await rig.owed_seqs() == []


@pytest.mark.expects_fallbacks
async def test_past_its_bounds_the_oldest_owed_captures_are_dropped_and_counted(
    tmp_path: Path,
) -> None:
    async for rig in rig_with(tmp_path, Bounds(per_person=2, in_all=100)):
        rig.memory.away = True
        before = fallbacks.counts()["capture_dropped"]
        await rig.say("One.", "Two.", "Three.", "Four.")
        await rig.captures.sweep()
        assert await rig.owed_seqs() == [6, 8]  # the newest two
        assert fallbacks.counts()["capture_dropped"] - before == 1

        await rig.memory_back()
        assert said_texts(rig.memory) == ["Three.", "Four."]


def test_the_bounds_keep_each_person_within_theirs_and_all_within_the_whole() -> None:
    now = utc_now()
    found = [Conversations(c, c, owed, now, None) for c, owed in [("a", 50), ("b", 8), ("c", 3)]]
    assert owed_module._kept(found, Bounds(per_person=20, in_all=100)) == {"a": 20, "b": 8, "c": 3}
    # Past the whole: those owed the most lose theirs first, down to one level.
    assert owed_module._kept(found, Bounds(per_person=20, in_all=15)) == {"a": 6, "b": 6, "c": 3}


@pytest.mark.expects_fallbacks
async def test_a_capture_memory_refuses_for_its_content_is_dropped_and_the_rest_go_on(
    rig: Rig,
) -> None:
    rig.memory.refused.add("A text memory refuses.")
    before = fallbacks.counts()["capture_refused"]
    await rig.say("A text memory refuses.", "My locker number is 4817.")
    assert said_texts(rig.memory) == ["My locker number is 4817."]
    assert await rig.owed_seqs() == []
    assert fallbacks.counts()["capture_refused"] - before == 1


async def test_a_replica_takes_no_capture_another_one_holds(rig: Rig) -> None:
    rig.memory.away = True
    await rig.say("My locker number is 4817.")
    await rig.due_now()
    other = OwedCaptures(rig.store.database, "replica-b", 5.0)
    taken = await other.take(rig.conversation.id, "ana")
    assert [row.seq for row in taken] == [2]
    assert await rig.owed.take(rig.conversation.id, "ana") == []  # held by replica-b
    assert await rig.owed.held(rig.conversation.id, "ana")


def test_each_failure_waits_twice_as_long_up_to_half_a_minute() -> None:
    assert [backoff(n) for n in (0, 1, 2, 5, 10)] == [
        timedelta(seconds=s) for s in (1, 2, 4, 30, 30)
    ]
