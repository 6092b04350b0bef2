"""What the main model is handed: the conversation as it reads, not as it was stored, laid out
for the prompt cache."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from session.context import SUMMARY_HEADING, SYSTEM_PROMPT, as_said, main_prompt, model_messages
from session.pins import Pin
from session.transcript import Message
from violet.models import OfflineModelClient, UsageLedger
from violet.models.cache import EPHEMERAL, MAX_BREAKPOINTS
from violet.models.tools import (
    MAIN_TOOLS,
    MEMORY_HEADING,
    NOW_HEADING,
    PINNED_HEADING,
    UPDATE_PREFIX,
    without_said_at,
)

AT = datetime(2026, 1, 1, tzinfo=UTC)


def you(seq: int, text: str) -> Message:
    return Message(seq, "you", text, AT, client_id=f'"{seq}"')


def violet(seq: int, text: str, answers: int | None = None) -> Message:
    return Message(seq, "violet", text, AT, reply_to=f'"{answers}"' if answers else None)


# Three messages said back to back are stored before any answer.
STORED = [
    you(1, "my dog is called Rex"),
    you(2, "what is my dog called?"),
    you(3, "calculate 6*7"),
    violet(4, "Thanks, I'll remember that.", answers=1),
    violet(5, "Rex!", answers=2),
]


def test_answering_a_message_sees_earlier_answers_right_after_their_questions() -> None:
    said = as_said(STORED, upto=2)
    assert [m.seq for m in said] == [1, 4, 2]
    assert model_messages(said)[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "what is my dog called?"}],
    }


def test_later_messages_and_their_answers_are_not_seen_yet() -> None:
    assert [m.seq for m in as_said(STORED, upto=3)] == [1, 4, 2, 5, 3]
    assert [m.seq for m in as_said(STORED, upto=1)] == [1]


def test_a_told_update_keeps_its_place() -> None:
    stored = [
        you(1, "look up the tides"),
        violet(2, "On it.", answers=1),
        violet(3, "The tides are high at noon."),
        you(4, "thanks"),
    ]
    assert [m.seq for m in as_said(stored, upto=4)] == [1, 2, 3, 4]
    assert [m.seq for m in as_said(stored)] == [1, 2, 3, 4]


def pin(number: int, kind: str = "promise", text: str = "") -> Pin:
    return Pin(f"p_{number}", kind, text or f"send the photos, part {number}", AT)  # type: ignore[arg-type]


def exchange(turns: int) -> list[Message]:
    said: list[Message] = []
    for number in range(turns):
        said.append(you(2 * number + 1, f"Thought {number} about the garden."))
        said.append(violet(2 * number + 2, f"Lovely thought {number}.", answers=2 * number + 1))
    return said


def blocks(system: list[dict], messages: list[dict]) -> list[dict]:
    """The request as the prompt cache reads it, without the breakpoints."""
    flat = [*system, *(b for m in messages for b in m["content"])]
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in flat]


def test_a_main_call_puts_stable_parts_first_and_the_memory_note_after_the_last_breakpoint():
    conversation = [*exchange(2), you(5, "what is my dog called?")]
    system, messages = main_prompt(
        "Person: has a dog.", [pin(1)], conversation, remembered=["My dog is called Rex"]
    )
    assert [block["cache_control"] for block in system] == [EPHEMERAL] * 3
    assert system[0]["text"] == SYSTEM_PROMPT
    assert system[1]["text"] == f"{SUMMARY_HEADING}\nPerson: has a dog."
    assert system[2]["text"].startswith(PINNED_HEADING)
    newest = messages[-1]["content"]
    assert newest[0] == {
        "type": "text",
        "text": "what is my dog called?",
        "cache_control": EPHEMERAL,
    }
    assert newest[1]["text"] == f"{MEMORY_HEADING}\n- My dog is called Rex"
    assert "cache_control" not in newest[1]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 2 + ["user"]
    assert len(system) + 1 == MAX_BREAKPOINTS  # the most a request may hold


def test_each_call_starts_with_everything_the_call_before_it_cached():
    before_system, before = main_prompt("", [pin(1)], exchange(3)[:-1], remembered=["A fact"])
    after_system, after = main_prompt("", [pin(1)], exchange(4)[:-1], remembered=["Other"])
    cached = blocks(before_system, before)[:-1]  # all but the memory note
    assert blocks(after_system, after)[: len(cached)] == cached


def test_an_update_is_told_in_a_user_turn_of_its_own_after_the_conversation():
    system, messages = main_prompt(
        "", [], exchange(2), update="The tides are high at noon.", remembered=["I sail"]
    )
    assert len(system) == 1  # no summary and nothing pinned: the instructions alone
    assert messages[-2]["content"][-1]["cache_control"] == EPHEMERAL
    assert messages[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": UPDATE_PREFIX + "The tides are high at noon."},
            {"type": "text", "text": f"{MEMORY_HEADING}\n- I sail"},
        ],
    }


async def test_the_offline_model_reads_the_memory_note_at_the_end_and_not_as_the_persons_words():
    system, messages = main_prompt(
        "", [], [you(1, "what is my dog called?")], remembered=["My dog is called Rex"]
    )
    reply = await OfflineModelClient(ledger=UsageLedger()).reply(
        tier="main", system=system, messages=messages, tools=MAIN_TOOLS, person="ana"
    )
    assert "My dog is called Rex" in reply.text


NOW = "Sunday 6 December 2026, 14:05 (Europe/Lisbon)"


def test_the_persons_time_now_comes_after_the_last_breakpoint_and_changes_no_cached_part():
    earlier_system, earlier = main_prompt("", [pin(1)], exchange(3)[:-1], now=NOW)
    later_system, later = main_prompt(
        "", [pin(1)], exchange(3)[:-1], now="Sunday 6 December 2026, 14:06 (Europe/Lisbon)"
    )
    newest = earlier[-1]["content"]
    assert newest[-1] == {"type": "text", "text": f"{NOW_HEADING}\n{NOW}"}
    assert newest[-2]["cache_control"] == EPHEMERAL  # the person's words end the cached part
    assert blocks(earlier_system, earlier)[:-1] == blocks(later_system, later)[:-1]


async def test_the_offline_model_takes_the_time_note_for_no_words_of_the_person():
    system, messages = main_prompt("", [], [you(1, "what is my dog called?")], now=NOW)
    reply = await OfflineModelClient(ledger=UsageLedger()).reply(
        tier="main", system=system, messages=messages, tools=MAIN_TOOLS, person="ana"
    )
    assert "Lisbon" not in reply.text and "December" not in reply.text


def test_a_persons_message_after_a_day_of_quiet_carries_its_local_date_and_violets_never():
    def at(days: float, seq: int, author: str, text: str) -> Message:
        moment = AT + timedelta(days=days)
        if author == "you":
            return Message(seq, "you", text, moment, client_id=f'"{seq}"')
        return Message(seq, "violet", text, moment)

    window = [
        at(0, 1, "you", "my dog is called Rex"),
        at(0.01, 2, "you", "and he is five"),
        at(2, 3, "violet", "Reminder (09:00): walk Rex"),  # told after two days: not marked
        at(2.01, 4, "you", "done, thanks"),
        at(5, 5, "you", "I'm back"),
    ]
    said = [
        block["text"]
        for turn in model_messages(window, "Pacific/Auckland")
        for block in turn["content"]
    ]
    assert said[:4] == [
        "my dog is called Rex",
        "and he is five",
        "Reminder (09:00): walk Rex",
        "done, thanks",
    ]
    assert said[4] == "[Tuesday 6 January 2026, 13:00 (Pacific/Auckland)] I'm back"
    assert without_said_at(said[4]) == "I'm back"
    # Without a zone (the benchmarks), or for the same window again: the same blocks.
    assert [b["text"] for turn in model_messages(window) for b in turn["content"]][4] == "I'm back"
    assert model_messages(window, "Pacific/Auckland") == model_messages(window, "Pacific/Auckland")


async def test_the_offline_model_reads_a_dated_message_as_the_persons_own_words():
    stale = Message(1, "you", "my dog is called Rex", AT, client_id='"1"')
    answer = Message(2, "violet", "Thanks, I'll remember that.", AT, reply_to='"1"')
    fresh = Message(3, "you", "what is my dog called?", AT + timedelta(days=3), client_id='"3"')
    system, messages = main_prompt(
        "", [], [stale, answer, fresh], remembered=["My dog is called Rex"], now=NOW, zone="UTC"
    )
    assert messages[-1]["content"][0]["text"].startswith("[Sunday 4 January 2026")
    reply = await OfflineModelClient(ledger=UsageLedger()).reply(
        tier="main", system=system, messages=messages, tools=MAIN_TOOLS, person="ana"
    )
    assert "Rex" in reply.text
