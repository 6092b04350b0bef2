"""The account frames a device may send (`account.show`, `key.set`, `key.remove`) and the
`account` frame that goes back: a key that is pasted is checked for its shape, and never shows up
in an error's words or in the parsed frame's repr."""

from __future__ import annotations

import json

import pytest

from gateway import frames
from gateway.frames import MAX_KEY_CHARS, AccountRequest, FrameError

KEY = "sk-ant-api03-Zq9xW8vU7tS6rR5qP4oN3mL2kJ1i-WXYZ"


def key_set(key: object) -> str:
    return json.dumps({"type": "key.set", "key": key})


def test_account_show_asks_for_the_account() -> None:
    assert frames.parse('{"type":"account.show"}') == AccountRequest("show")


def test_key_remove_asks_to_remove_the_key() -> None:
    assert frames.parse('{"type":"key.remove"}') == AccountRequest("remove_key")


def test_extra_fields_of_a_show_or_remove_are_ignored_and_carry_no_key() -> None:
    assert frames.parse(json.dumps({"type": "account.show", "key": KEY})).key == ""
    assert frames.parse(json.dumps({"type": "key.remove", "key": KEY})).key == ""


def test_a_key_set_carries_the_key_without_surrounding_space() -> None:
    request = frames.parse(key_set(f"  {KEY}\n"))
    assert request == AccountRequest("set_key", KEY)


def test_a_key_of_the_longest_allowed_length_is_taken() -> None:
    longest = "k" * MAX_KEY_CHARS
    assert frames.parse(key_set(longest)) == AccountRequest("set_key", longest)


def test_the_parsed_key_never_shows_in_its_repr() -> None:
    request = frames.parse(key_set(KEY))
    assert KEY not in repr(request)
    assert KEY not in str(request)
    assert "set_key" in repr(request)


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "key.set"},
        {"type": "key.set", "key": ""},
        {"type": "key.set", "key": "   "},
        {"type": "key.set", "key": "\n\t"},
        {"type": "key.set", "key": None},
        {"type": "key.set", "key": 12345},
        {"type": "key.set", "key": True},
    ],
    ids=["missing", "empty", "spaces", "blank lines", "null", "a number", "a boolean"],
)
def test_a_key_set_without_a_key_is_a_bad_frame(frame: dict[str, object]) -> None:
    with pytest.raises(FrameError) as refused:
        frames.parse(json.dumps(frame))
    assert refused.value.code == "bad_frame"
    assert "key" in refused.value.text


@pytest.mark.parametrize(
    "key",
    [
        f"{KEY} {KEY}",
        f"{KEY[:20]}\t{KEY[20:]}",
        f"{KEY[:20]}\n{KEY[20:]}",
        f"{KEY[:20]}\u00a0{KEY[20:]}",  # a space that is not ASCII is a space too
        f"{KEY[:20]}\x00{KEY[20:]}",
        KEY + "x" * (MAX_KEY_CHARS - len(KEY) + 1),
    ],
    ids=["two words", "a tab", "a line break", "a no-break space", "a NUL", "too long"],
)
def test_a_key_that_is_not_one_word_of_reasonable_length_is_a_bad_frame(key: str) -> None:
    with pytest.raises(FrameError) as refused:
        frames.parse(key_set(key))
    assert refused.value.code == "bad_frame"
    for told in (
        refused.value.text,
        str(refused.value),
        repr(refused.value),
        refused.value.told_in("pt"),
    ):
        assert KEY[:20] not in told
        assert KEY[20:] not in told


def test_the_account_frame_carries_the_accounts_fields() -> None:
    sent = frames.outgoing(
        "account", key="yours", ending="WXYZ", month_usd=1.25, text="In use.", note=""
    )
    assert json.loads(sent) == {
        "type": "account",
        "key": "yours",
        "ending": "WXYZ",
        "month_usd": 1.25,
        "text": "In use.",
        "note": "",
    }


@pytest.mark.parametrize("unknown", ["sealed", "kek_id", "person", "api_key"])
def test_the_account_frame_refuses_any_other_field(unknown: str) -> None:
    with pytest.raises(ValueError, match=unknown):
        frames.outgoing("account", key="yours", ending="WXYZ", **{unknown: "x"})
