"""Violet's own text is checked in code before it is stored: no id the stack issues, no tool
name and no internal word of CONTRACTS section 4 reaches the person, whatever the model wrote."""

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
        # internal words, singular and plural, in any case
        ("A work session is on it.", "A background task is on it."),
        ("Two work sessions are running.", "Two background tasks are running."),
        ("Here is a summary.", "Here is a recap."),
        ("Summaries of both Cards.", "Recaps of both Notes."),
        ("The router picked a candidate route.", "The internet box picked a choice way."),
        ("Your pinned items and tools.", "Your saved items and helpers."),
        ("I will fold it in.", "I will tuck it in."),
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


def test_plain_words_are_left_as_they_are() -> None:
    text = "Your cardigan is in the folder by the tooltip, with 3 cardboard boxes (and p_12)."
    mended = in_plain_words(text)
    assert mended.text == text and not mended.changes


def test_what_was_mended_is_counted_by_kind() -> None:
    mended = in_plain_words("start_work made summary p_1a2b3c4d and p_5e6f7a8b.")
    assert mended.changes == {"id": 2, "tool name": 1, "internal word": 1}
