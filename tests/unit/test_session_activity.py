"""The thinking line: shown on the person's devices only when an answer takes more than a
moment, cleared when it is done, in the person's language and in 2 to 7 words."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from session import activity as activity_module
from session.activity import THINKING, Activity
from session.conversations import Conversation
from session.feed import Feed, Following

CONVERSATION = Conversation("c_0123456789abcdef", "ana")


@pytest.fixture
def followed() -> tuple[Activity, Following]:
    feed = Feed(1.0)
    single_replica = SimpleNamespace(notifies=False)  # lines go to this replica's followers
    return Activity(single_replica, feed), feed.follow(CONVERSATION.id, 0)  # type: ignore[arg-type]


def lines(following: Following) -> list[str]:
    return following.take_lines()


async def test_a_quick_answer_shows_no_line(followed, monkeypatch) -> None:
    activity, following = followed
    monkeypatch.setattr(activity_module, "SHOWN_AFTER_S", 0.2)
    async with activity.while_thinking(CONVERSATION, "en"):
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    assert lines(following) == []


@pytest.mark.parametrize("language", ["en", "pt", "es", "fr", "de"])
async def test_a_slow_answer_shows_the_line_in_the_persons_language_then_clears_it(
    followed, monkeypatch, language: str
) -> None:
    activity, following = followed
    monkeypatch.setattr(activity_module, "SHOWN_AFTER_S", 0.05)
    async with activity.while_thinking(CONVERSATION, language):
        await asyncio.sleep(0.2)
    assert lines(following) == [THINKING[language], ""]
    assert 2 <= len(THINKING[language].split()) <= 7
