"""When the fold runs and what a failed one leaves: it is asked for only once the live messages
reach the window, a failure changes nothing and is retried after the next turn, and at twice the
window the rollover happens anyway, keeping the previous summary."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from session.conversations import Conversation
from session.fold import Fold, FoldResult
from session.store import ConversationStore
from session.tables import conversations
from session.turn_context import TurnContext, load_turn_context
from session.window import Window
from tests.support.fakes import FakeModel, session_tables
from violet import fallbacks
from violet.database import Database
from violet.identity import service_identity
from violet.models.structured import FOLD

WINDOW = 20


@dataclass
class Talk:
    """One person's conversation, told exchange by exchange, with the fold run after each as
    the turn runs it: on the context read at the turn's start, with the answer added."""

    sessions: Database
    model: FakeModel
    store: ConversationStore
    fold: Fold
    conversation: Conversation
    said: int = 0

    async def exchange(self) -> FoldResult:
        self.said += 1
        transcript = self.store.transcript
        appended = await transcript.append_say(
            self.conversation, f"m{self.said}", f"Line {self.said}: the cat sat on the mat."
        )
        [asked] = await transcript.since(self.conversation.id, appended.seq - 1)
        context = await self._context()
        answer = await transcript.append_answer(
            self.conversation, asked, f"Noted {self.said}.", context.model_conversation.id
        )
        return await self.fold.after_turn(context.after(answer))

    async def _context(self) -> TurnContext:
        identity = service_identity(self.conversation.person, "secret")
        return await load_turn_context(self.store, self.conversation, identity)

    async def live(self) -> int:
        return len((await self._context()).live)

    async def summary(self) -> str:
        return await self.store.summaries.of(self.conversation.id)

    async def fold_failures(self) -> int:
        async with self.sessions() as db:
            query = select(conversations.c.fold_failures).where(
                conversations.c.id == self.conversation.id
            )
            return int(await db.scalar(query) or 0)


@pytest.fixture
async def talk(tmp_path: Path) -> AsyncIterator[Talk]:
    async with session_tables(tmp_path) as sessions:
        model, store = FakeModel(), ConversationStore.open(sessions, notify=False)
        fold = Fold(model, store, Window(WINDOW), "replica")
        conversation = await store.conversations.conversation_of("ana")
        await store.model_conversations.start(
            conversation.id, "first message", "replica", carry_from_seq=1
        )
        yield Talk(sessions, model, store, fold, conversation)


async def exchanges_until_the_window_is_full(talk: Talk) -> None:
    for _ in range(WINDOW // 2 - 1):
        assert await talk.exchange() == FoldResult(folded=False)


async def test_the_fold_is_asked_for_only_once_the_live_messages_reach_the_window(
    talk: Talk,
) -> None:
    await exchanges_until_the_window_is_full(talk)
    assert talk.model.calls_of(FOLD) == 0
    assert await talk.exchange() == FoldResult(folded=True)
    assert talk.model.calls_of(FOLD) == 1
    assert await talk.live() == WINDOW // 2
    assert "Line 1:" in await talk.summary()


@pytest.mark.expects_fallbacks
async def test_fold_failure_is_retried_after_next_turn(talk: Talk) -> None:
    await exchanges_until_the_window_is_full(talk)
    talk.model.failing.add(FOLD)
    before = fallbacks.counts()
    assert await talk.exchange() == FoldResult(folded=False, failed=True)
    assert (await talk.live(), await talk.summary(), await talk.fold_failures()) == (WINDOW, "", 1)
    assert fallbacks.counts() - before == {"fold_kept_summary": 1}

    talk.model.failing.clear()
    assert await talk.exchange() == FoldResult(folded=True)
    assert talk.model.calls_of(FOLD) == 2
    assert await talk.fold_failures() == 0
    assert await talk.live() == WINDOW // 2
    assert "Line 1:" in await talk.summary()


@pytest.mark.expects_fallbacks
async def test_a_failed_fold_closes_no_promise_the_conversation_shows_kept(talk: Talk) -> None:
    promise = await talk.store.pins.add(talk.conversation.id, "promise", "check the cat's mat")
    await exchanges_until_the_window_is_full(talk)
    talk.model.failing.add(FOLD)
    await talk.exchange()
    assert [pin.id for pin in await talk.store.pins.open(talk.conversation.id)] == [promise.id]


@pytest.mark.expects_fallbacks
async def test_a_fold_failing_until_twice_the_window_rolls_over_keeping_the_summary(
    talk: Talk,
) -> None:
    await exchanges_until_the_window_is_full(talk)
    assert (await talk.exchange()).folded
    summary = await talk.summary()
    talk.model.failing.add(FOLD)

    results: list[FoldResult] = []
    while not (results and results[-1].forced):
        assert len(results) < WINDOW, "no rollover was forced"
        results.append(await talk.exchange())
    # Two messages a turn, from half the window carried: not due below the window, then failing
    # every turn from the window up to twice it.
    assert results.count(FoldResult(folded=False)) == WINDOW // 4 - 1
    assert results.count(FoldResult(folded=False, failed=True)) == WINDOW // 2
    assert results[-1] == FoldResult(folded=False, forced=True, failed=True)
    assert await talk.live() == WINDOW // 2
    assert await talk.summary() == summary
    assert await talk.fold_failures() == 0
