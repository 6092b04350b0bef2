"""The pinned block stays within its budget whatever is open, and the fold reviews the open
promises: kept ones close, overdue ones become a question for the person, none is lost."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from session.conversations import Conversation
from session.fold import Fold, FoldResult
from session.pins import (
    OVERDUE_AFTER_FOLDS,
    PINNED_CHARS,
    PINNED_ITEMS,
    Pin,
    check_in,
    overdue,
    pinned,
    render,
)
from session.store import ConversationStore
from session.tables import pins as pins_table
from session.tables import updates as updates_table
from session.transcript import Message
from session.turn_context import load_turn_context
from session.window import Window
from tests.support.fakes import session_tables
from violet.database import Database
from violet.identity import Identity
from violet.models import OfflineModelClient, UsageLedger

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def pin(number: int, kind: str = "promise", text: str = "") -> Pin:
    made = START + timedelta(minutes=number)
    return Pin(f"x_{number}", kind, text or f"item {number}", made)  # type: ignore[arg-type]


def test_the_pinned_block_stays_within_its_budget_whatever_is_open() -> None:
    flood = [pin(n, "promise", "a very long promise " * 40) for n in range(60)]
    flood += [pin(100 + n, "approval", "Shall I send it? " * 30) for n in range(5)]
    shown = pinned(flood)
    assert len(shown) <= PINNED_ITEMS
    assert len(render(shown)) <= PINNED_CHARS


def test_approvals_come_first_then_the_newest_promises_then_work_listed_oldest_first() -> None:
    open_pins = [pin(n) for n in range(10)] + [pin(20, "approval"), pin(21, "work")]
    shown = pinned(open_pins)
    assert [p.id for p in shown] == [f"x_{n}" for n in range(3, 10)] + ["x_20"]


def test_a_promise_is_overdue_after_four_folds_or_once_it_no_longer_fits() -> None:
    old, new, waiting = pin(1), pin(150), pin(2, "approval")  # new: made after two folds
    folds = [START + timedelta(hours=h) for h in range(1, OVERDUE_AFTER_FOLDS + 1)]
    assert overdue([old, new, waiting], folds[:-1]) == []
    assert overdue([old, new, waiting], folds) == [old]
    crowded = [pin(n) for n in range(PINNED_ITEMS + 2)]
    assert overdue(crowded, []) == crowded[:2]


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[Database]:
    async with session_tables(tmp_path) as migrated:
        yield migrated


async def rows(sessions: Database, query) -> list:  # type: ignore[no-untyped-def]
    async with sessions() as db:
        return list(await db.execute(query))


class Talk:
    """One person's conversation, told exchange by exchange, folded after each like a turn."""

    def __init__(self, sessions: Database, window: int = 20) -> None:
        self.store = ConversationStore.open(sessions, notify=False)
        self.pins, self.updates = self.store.pins, self.store.updates
        model = OfflineModelClient(ledger=UsageLedger())
        self.fold = Fold(model, self.store, Window(window), "replica")
        self.said = 0

    async def open(self) -> Conversation:
        self.conversation = await self.store.conversations.conversation_of("ana")
        await self.store.model_conversations.start(self.conversation.id, "first", "r", 1)
        return self.conversation

    async def exchange(self, answer: str = "") -> None:
        self.said += 1
        transcript = self.store.transcript
        appended = await transcript.append_say(
            self.conversation, f"m{self.said}", f"Here is thought {self.said} about roses."
        )
        asked = (await transcript.since(self.conversation.id, appended.seq - 1))[0]
        reply = answer or f"How lovely, thought {self.said}."
        await transcript.append_answer(self.conversation, asked, reply, "m")

    async def after_turn(self) -> FoldResult:
        """The fold after a turn, given what that turn read."""
        identity = Identity("ana", "internal-token")
        context = await load_turn_context(self.store, self.conversation, identity)
        return await self.fold.after_turn(context)

    async def live(self) -> list[Message]:
        """The messages the current model conversation holds, as a turn reads them."""
        identity = Identity("ana", "internal-token")
        return (await load_turn_context(self.store, self.conversation, identity)).live

    async def until_folded(self) -> int:
        """Exchanges until a fold happens; the overdue promises it asked about."""
        while True:
            await self.exchange()
            result = await self.after_turn()
            if result.folded:
                return result.asked


async def test_a_fold_waits_for_the_window_and_carries_half_of_it(sessions) -> None:
    talk = Talk(sessions)
    conversation = await talk.open()
    for _ in range(9):
        await talk.exchange()
        assert not (await talk.after_turn()).folded
    await talk.exchange()
    assert (await talk.after_turn()).folded
    live = await talk.live()
    assert len(live) == 10 and live[0].author == "you"
    assert "thought 1" in await talk.store.summaries.of(conversation.id)


async def test_a_promise_the_conversation_shows_kept_is_closed_by_the_fold(sessions) -> None:
    talk = Talk(sessions)
    conversation = await talk.open()
    await talk.pins.add(conversation.id, "promise", "look up the tides")
    await talk.exchange("Done: the tides are high at noon.")
    assert await talk.until_folded() == 0
    assert await talk.pins.open(conversation.id) == []


async def test_a_promise_open_across_four_folds_is_asked_about_and_keeps_its_row(sessions) -> None:
    talk = Talk(sessions)
    conversation = await talk.open()
    promise = await talk.pins.add(conversation.id, "promise", "send the photos on Friday")
    for _ in range(OVERDUE_AFTER_FOLDS - 1):
        assert await talk.until_folded() == 0
    assert [p.id for p in await talk.pins.open(conversation.id)] == [promise.id]
    assert await talk.until_folded() == 1

    assert await talk.pins.open(conversation.id) == []
    question = await talk.updates.next_untold(conversation.id)
    assert question is not None and question.kind == "check_in"
    assert question.text == check_in(promise) and question.topic == promise.id
    assert question.text.endswith("?") and "send the photos on Friday" in question.text
    [row] = await rows(sessions, select(pins_table).where(pins_table.c.id == promise.id))
    assert row.closed_at is not None and row.text == "send the photos on Friday"


async def test_promises_that_no_longer_fit_are_asked_about_at_the_next_fold(sessions) -> None:
    talk = Talk(sessions)
    conversation = await talk.open()
    made = [
        await talk.pins.add(conversation.id, "promise", f"promise {n}")
        for n in range(PINNED_ITEMS + 3)
    ]
    assert await talk.until_folded() == 3
    assert [p.id for p in await talk.pins.open(conversation.id)] == [p.id for p in made[3:]]


async def test_a_question_stored_before_a_crash_is_not_stored_twice(sessions) -> None:
    talk = Talk(sessions)
    conversation = await talk.open()
    made = [await talk.pins.add(conversation.id, "promise", f"p {n}") for n in range(9)]
    # A fold stored its question about the oldest, then stopped before closing the pin.
    await talk.updates.store(
        conversation.id, f"check-in:{made[0].id}", made[0].id, "check_in", check_in(made[0])
    )
    assert await talk.until_folded() == 1
    first = await talk.updates.next_untold(conversation.id)
    assert first is not None and first.topic == made[0].id
    assert await talk.pins.open(conversation.id) == made[1:]
    stored = await rows(sessions, select(updates_table.c.key))
    assert [row.key for row in stored] == [f"check-in:{made[0].id}"]
