"""What the main model is handed: the conversation as it reads, not as it was stored."""

from __future__ import annotations

from datetime import UTC, datetime

from session.context import as_said, model_messages
from session.transcript import Message

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
