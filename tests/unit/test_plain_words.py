"""Violet's own text is checked in code before it is stored: no id the stack issues, no tool or
model name and no name of her inner workings (CONTRACTS section 4) reaches the person, whatever
the model wrote; everyday words pass as they are."""

from __future__ import annotations

import pytest

from session.plain_words import in_plain_words
from tests.integration.test_phone_protocol import INTERNAL_WORDS
from violet.models import tools as t


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        # ids of every kind the stack issues or the API hands out
        ("Your promise p_1a2b3c4d is kept.", "Your promise is kept."),
        ("I answered approval a_0f0f0f0f for you.", "I answered approval for you."),
        ("Work w_deadbeef is open.", "Work is open."),
        ("That is topic t_0123456789abcdef.", "That is topic."),
        ("Approval ap_0123456789abcdef waits.", "Approval waits."),
        ("In conversation c_0123456789abcdef (m_fedcba9876543210).", "In conversation."),
        ("Call toolu_01AbCdEf23456789 went fine.", "Call went fine."),
        ("Item 6f1c2a9e-3b4d-4e5f-8a9b-0c1d2e3f4a5b is gone.", "Item is gone."),
        ("Request req_011CAbcdefGhij failed; msg_01XyZ123abc too.", "Request failed; too."),
        # tool names
        ("I used start_work for that.", "I used my background work for that."),
        ("Calling `send_email` now.", "Calling the email now."),
        ("I ran run_python and fetch_page.", "I ran a calculation and the page."),
        # model names
        ("I am claude-opus-5-5 today.", "I am today."),
        ("Asked `claude-haiku-5-5-20261001` first.", "Asked first."),
        # the names of inner workings, singular and plural, in any case
        ("A work session is on it.", "A background task is on it."),
        ("Two work sessions are running.", "Two background tasks are running."),
        ("Work Sessions ended.", "Background tasks ended."),
        ("The topic card says so.", "The note says so."),
        ("Both topic cards agree.", "Both notes agree."),
    ],
)
def test_each_kind_of_internal_text_is_mended(written: str, plain: str) -> None:
    mended = in_plain_words(written)
    assert mended.text == plain
    assert mended.changes
    assert not INTERNAL_WORDS.search(mended.text)


def test_every_tool_name_is_replaced() -> None:
    for tool in (*t.MAIN_TOOLS, *t.WORK_TOOLS):
        mended = in_plain_words(f"Then {tool.name} ran.")
        assert tool.name not in mended.text and mended.changes == {"tool name": 1}


@pytest.mark.parametrize(
    "text",
    [
        "Your cardigan is in the folder by the tooltip, with 3 cardboard boxes (and p_12).",
        "Fold in the egg whites, then the flour.",
        "I paid with my credit card.",
        "The bus route changes on Sunday.",
        "Here is a summary of the article.",
        "Restart the router in the hall; a tool box helps.",
        "I pinned it to the board: a haiku by Claude Monet's gardener.",
        "The candidate won the session.",
    ],
)
def test_everyday_words_are_left_as_they_are(text: str) -> None:
    mended = in_plain_words(text)
    assert mended.text == text and not mended.changes


def test_what_was_mended_is_counted_by_kind() -> None:
    mended = in_plain_words("start_work made a work session p_1a2b3c4d, p_5e6f7a8b on claude-x-1.")
    assert mended.changes == {"id": 2, "tool name": 1, "model name": 1, "internal word": 1}
