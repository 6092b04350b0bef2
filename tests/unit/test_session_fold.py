"""When the fold runs and what a failed one leaves: it is asked for only once the live messages
reach the window, a failure changes nothing and is retried after the next turn, and at twice the
window the rollover happens anyway, keeping the previous summary."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from session.fold import Folder, FoldResult
from session.pins import Pins
from session.tables import conversations
from session.transcript import Conversation, Transcript
from session.updates import Updates
from session.window import Window
from tests.support.fakes import FakeModel, session_tables
from violet.models.structured import FOLD

WINDOW = 20


@dataclass
class Talk:
    """One person's conversation, told exchange by exchange, with the fold run after each as
    the turn runs it."""

    sessions: async_sessionmaker[AsyncSession]
    model: FakeModel
    transcript: Transcript
    pins: Pins
    folder: Folder
    conversation: Conversation
    said: int = 0

    async def exchange(self) -> FoldResult:
        self.said += 1
        appended = await self.transcript.append_say(
            self.conversation, f"m{self.said}", f"Line {self.said}: the cat sat on the mat."
        )
        [asked] = await self.transcript.since(self.conversation.id, appended.seq - 1)
        await self.transcript.append_answer(self.conversation, asked, f"Noted {self.said}.", "m")
        return await self.folder.after_turn(self.conversation)

    async def live(self) -> int:
        return len(await self.transcript.live(self.conversation.id))

    async def summary(self) -> str:
        return await self.transcript.summary_of(self.conversation.id)

    async def fold_failures(self) -> int:
        async with self.sessions() as db:
            query = select(conversations.c.fold_failures).where(
                conversations.c.id == self.conversation.id
            )
            return int(await db.scalar(query) or 0)


@pytest.fixture
async def talk(tmp_path: Path) -> AsyncIterator[Talk]:
    async with session_tables(tmp_path) as sessions:
        model, transcript, pins = FakeModel(), Transcript(sessions, notify=False), Pins(sessions)
        folder = Folder(model, transcript, pins, Updates(sessions), Window(WINDOW), "replica")
        conversation = await transcript.conversation_of("ana")
        await transcript.start_model_conversation(conversation.id, "first message", "replica", 1)
        yield Talk(sessions, model, transcript, pins, folder, conversation)


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


async def test_fold_failure_is_retried_after_next_turn(talk: Talk) -> None:
    await exchanges_until_the_window_is_full(talk)
    talk.model.failing.add(FOLD)
    assert await talk.exchange() == FoldResult(folded=False, failed=True)
    assert (await talk.live(), await talk.summary(), await talk.fold_failures()) == (WINDOW, "", 1)

    talk.model.failing.clear()
    assert await talk.exchange() == FoldResult(folded=True)
    assert talk.model.calls_of(FOLD) == 2
    assert await talk.fold_failures() == 0
    assert await talk.live() == WINDOW // 2
    assert "Line 1:" in await talk.summary()


async def test_a_failed_fold_closes_no_promise_the_conversation_shows_kept(talk: Talk) -> None:
    promise = await talk.pins.add(talk.conversation.id, "promise", "check the cat's mat")
    await exchanges_until_the_window_is_full(talk)
    talk.model.failing.add(FOLD)
    await talk.exchange()
    assert [pin.id for pin in await talk.pins.open(talk.conversation.id)] == [promise.id]


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
