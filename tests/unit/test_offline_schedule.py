"""The offline model's reminder turns, through the main conversation's rules as the session calls
them: the person's words and the note of their date and time become a `set_reminder` call, a
question back, a listing or a cancel of the reminder they name; once a tool answers, Violet
says what was done in the person's language."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from violet.models import tools as t
from violet.models.messages import (
    ContentBlock,
    JsonObject,
    ModelMessage,
    ToolResultBlock,
    ToolUseBlock,
)
from violet.models.offline_rules import respond
from violet.models.offline_schedule import asks_to_cancel, asks_to_list, local_now
from violet.when import refusal
from violet.zones import spoken

SYSTEM = "You are Violet, a personal assistant."
# Sunday 6 December 2026, 14:00 in Lisbon.
NOW = datetime(2026, 12, 6, 14, 0, tzinfo=ZoneInfo("Europe/Lisbon"))
TODAY = "2026-12-06"
OFFERED = [tool.name for tool in t.MAIN_TOOLS]
SAM = t.reminder_item("r_sam", "pick up Sam", False, "2026-12-06T17:00", "")
BINS = t.reminder_item(
    "r_bins", "put the bins out", False, "2026-12-07T07:30", "FREQ=WEEKLY;BYDAY=MO"
)


def said(words: str) -> ModelMessage:
    """The person's words, with the note of their date and time after them."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": words},
            {"type": "text", "text": t.now_note(spoken(NOW))},
        ],
    }


def answer(messages: list[ModelMessage], offered: Sequence[str] = OFFERED) -> list[ContentBlock]:
    return respond(tier="main", system=SYSTEM, messages=messages, offered=offered)


def the_call(blocks: list[ContentBlock]) -> ToolUseBlock:
    (block,) = blocks
    assert block["type"] == "tool_use"
    return block


def the_text(blocks: list[ContentBlock]) -> str:
    (block,) = blocks
    assert block["type"] == "text"
    return block["text"]


def returned(call: ToolUseBlock, result: str, is_error: bool = False) -> list[ModelMessage]:
    """The call, then its result."""
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": call["id"], "content": result}
    if is_error:
        block["is_error"] = True
    return [{"role": "assistant", "content": [call]}, {"role": "user", "content": [block]}]


def answered(words: str, result: str, is_error: bool = False) -> list[ModelMessage]:
    """The person's words, the call they gave, and that call's result."""
    return [said(words), *returned(the_call(answer([said(words)])), result, is_error)]


def listed(*reminders: JsonObject) -> str:
    return t.reminders_result("reminders", list(reminders), TODAY)


def test_the_note_of_the_persons_time_is_read_back_to_the_minute() -> None:
    assert local_now(t.now_note(spoken(NOW))) == datetime(2026, 12, 6, 14, 0)


def test_a_reminder_at_a_clock_time_calls_set_reminder_for_that_local_time() -> None:
    call = the_call(answer([said("remind me at 5 pm to pick up Sam")]))
    assert call["name"] == t.SET_REMINDER
    assert call["input"] == {
        "text": "pick up Sam",
        "work": False,
        "at": "2026-12-06T17:00",
        "repeat": "",
    }


def test_a_repeating_reminder_calls_set_reminder_with_its_rule() -> None:
    call = the_call(answer([said("remind me every Monday at 7:30 to put the bins out")]))
    assert (call["input"]["at"], call["input"]["repeat"]) == (
        "2026-12-07T07:30",
        "FREQ=WEEKLY;BYDAY=MO",
    )


@pytest.mark.parametrize(
    ("words", "asked"),
    [
        ("remind me later to pick up Sam", "When should I remind you?"),
        ("lembra-me mais tarde de ligar à mãe", "Quando devo lembrar você?"),
    ],
)
def test_an_unreadable_time_is_asked_about_without_a_call(words: str, asked: str) -> None:
    assert the_text(answer([said(words)])).startswith(asked)


def test_without_the_persons_time_no_reminder_is_set() -> None:
    # With no note of the date and time, "at 5 pm" has no day: nothing is guessed.
    blocks = answer([{"role": "user", "content": "remind me at 5 pm to pick up Sam"}])
    assert all(block["type"] == "text" for block in blocks)


def test_no_reminder_tool_is_called_when_set_reminder_is_not_offered() -> None:
    for words in ("remind me at 5 pm to pick up Sam", "what reminders do I have?"):
        blocks = answer([said(words)], offered=[t.START_WORK, t.RECORD_PROMISE])
        assert all(block["type"] == "text" for block in blocks)


@pytest.mark.parametrize(
    "words", ["what reminders do I have?", "show my reminders", "quais são os meus lembretes?"]
)
def test_asking_for_reminders_lists_them(words: str) -> None:
    assert asks_to_list(words)
    assert the_call(answer([said(words)]))["name"] == t.LIST_REMINDERS


def test_a_listing_is_told_soonest_first_with_local_times() -> None:
    blocks = answer(answered("what reminders do I have?", listed(SAM, BINS)))
    assert the_text(blocks) == "\n".join(
        [
            "Your reminders:",
            "- today at 17:00: pick up Sam",
            "- every Monday at 07:30: put the bins out",
        ]
    )


def test_an_empty_listing_says_there_are_none() -> None:
    assert (
        the_text(answer(answered("what reminders do I have?", listed())))
        == "You have no reminders right now."
    )


@pytest.mark.parametrize(
    ("words", "meant"),
    [
        ("cancel the Sam reminder", "r_sam"),
        ("stop the Monday one", "r_bins"),  # by the day it repeats on
        ("delete the reminder about the bins", "r_bins"),
        ("cancela o lembrete do Sam", "r_sam"),
    ],
)
def test_a_cancel_request_lists_then_cancels_the_reminder_it_names(words: str, meant: str) -> None:
    assert asks_to_cancel(words)
    assert the_call(answer([said(words)]))["name"] == t.LIST_REMINDERS
    call = the_call(answer(answered(words, listed(SAM, BINS))))
    assert (call["name"], call["input"]) == (t.CANCEL_REMINDER, {"reminder_id": meant})


def test_a_cancel_request_matching_no_reminder_says_it_was_not_found() -> None:
    blocks = answer(answered("cancel the dentist reminder", listed(SAM, BINS)))
    assert the_text(blocks).startswith("I couldn't find that reminder.")


def test_a_cancelled_reminder_is_named() -> None:
    messages = answered("cancel the Sam reminder", listed(SAM, BINS))
    call = the_call(answer(messages))
    cancelled = returned(call, t.reminders_result("cancelled", SAM, TODAY))
    assert the_text(answer([*messages, *cancelled])) == "Done, I've cancelled it: pick up Sam"


def test_a_set_reminder_is_told_with_its_local_time_and_words() -> None:
    result = t.reminders_result("reminder", SAM, TODAY)
    blocks = answer(answered("remind me at 5 pm to pick up Sam", result))
    assert the_text(blocks) == "I'll remind you today at 17:00: pick up Sam"


def test_scheduled_work_is_told_as_work_with_how_it_repeats() -> None:
    tides = t.reminder_item("r_t", "look up the tides", True, "2026-12-07T07:00", "FREQ=DAILY")
    blocks = answer(
        answered(
            "every morning at 7 look up the tides", t.reminders_result("reminder", tides, TODAY)
        )
    )
    assert the_text(blocks) == "I'll do it every day at 07:00: look up the tides"


@pytest.mark.parametrize(
    ("words", "told"),
    [
        (
            "remind me at 5 pm to pick up Sam",
            "I couldn't set that reminder: That time has already passed.",
        ),
        (
            "lembra-me às 17h de buscar o Sam",
            "Não consegui criar esse lembrete: Essa hora já passou.",
        ),
    ],
)
def test_a_refused_time_is_told_with_why_in_the_persons_language(words: str, told: str) -> None:
    blocks = answer(answered(words, refusal("past"), is_error=True))
    assert the_text(blocks) == told


def test_the_monday_one_is_the_one_that_repeats_on_mondays_not_a_daily_one() -> None:
    pills = t.reminder_item("r_pills", "take my pills", False, "2026-12-07T07:00", "FREQ=DAILY")
    call = the_call(answer(answered("stop the Monday one", listed(pills, BINS))))
    assert call["input"] == {"reminder_id": "r_bins"}
