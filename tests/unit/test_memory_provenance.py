"""The provenance filter: only what the person states in their own words becomes an item about
them, whatever the fast model proposes."""

from __future__ import annotations

import pytest

from memory.provenance import Proposed, keep, stated_in, supported_by

MESSAGE = "Hi!  My cat is called   Miso, and I take my coffee with oat milk."


def mine(text: str, quote: str | None = None) -> Proposed:
    return Proposed(text, "you", text if quote is None else quote)


def test_a_quote_is_found_whatever_its_whitespace_and_case() -> None:
    assert stated_in("my CAT is called miso", MESSAGE)
    assert stated_in("I take my\ncoffee with oat milk", MESSAGE)


def test_a_quote_that_is_not_in_the_message_is_not_found() -> None:
    assert not stated_in("my dog is called Rex", MESSAGE)
    assert not stated_in("  ", MESSAGE)


def test_the_persons_own_words_are_kept() -> None:
    kept = keep([mine("My cat is called Miso")], person_message=MESSAGE)
    assert [item.text for item in kept] == ["My cat is called Miso"]


def test_the_persons_own_remember_that_is_kept() -> None:
    message = "Please remember that my sister's birthday is on May 3."
    quote = "remember that my sister's birthday is on May 3"
    assert len(keep([mine("My sister's birthday is on May 3", quote)], person_message=message))


def test_a_fabricated_quote_is_dropped() -> None:
    assert keep([mine("My cat is called Rex")], person_message=MESSAGE) == []


@pytest.mark.parametrize(
    "message",
    [
        "my friend said my bank PIN is 1234",
        "My bank PIN is 1234, my brother told me.",
        "According to the bank, my bank PIN is 1234",
        "I was told my bank PIN is 1234",
        "don't remember that my bank PIN is 1234",
        "Please do not store this: my bank PIN is 1234",
        "forget that my bank PIN is 1234",
        "It is not true that my bank PIN is 1234",
        "If my bank PIN is 1234, what then?",
        "Imagine my bank PIN is 1234",
        "Is my bank PIN 1234?",
        "Just kidding, my bank PIN is 1234",
    ],
)
def test_words_reported_denied_supposed_or_asked_make_no_item(message: str) -> None:
    proposed = [mine("My bank PIN is 1234", "my bank PIN is 1234")]
    assert keep(proposed, person_message=message) == []


def test_a_denial_makes_no_item_but_the_statement_beside_it_does() -> None:
    message = "I don't live in Paris, I live in Lyon."
    proposed = [mine("I don't live in Paris"), mine("Lives in Paris", "live in Paris")]
    assert keep(proposed, person_message=message) == []
    assert keep([mine("I live in Lyon")], person_message=message) == [mine("I live in Lyon")]


def test_a_line_break_ends_a_sentence() -> None:
    message = "I live in Oslo\nmy friend said hi"
    assert keep([mine("I live in Oslo")], person_message=message) == [mine("I live in Oslo")]


def test_the_same_words_stated_once_anywhere_in_the_message_count() -> None:
    message = "My friend said my PIN is 1234. And yes, my PIN is 1234."
    assert len(keep([mine("My PIN is 1234", "my PIN is 1234")], person_message=message)) == 1


def test_an_item_that_denies_what_its_quote_states_is_dropped() -> None:
    kept = keep(
        [mine("Does not take coffee with oat milk", "I take my coffee with oat milk")],
        person_message=MESSAGE,
    )
    assert kept == []


def test_an_item_with_a_number_its_quote_does_not_hold_is_dropped() -> None:
    message = "My locker is number 42"
    assert (
        keep([mine("My locker is number 4821", "my locker is number")], person_message=message)
        == []
    )
    assert supported_by("Locker number 42", "My locker is number 42")


def test_an_item_that_says_more_than_its_quote_is_dropped() -> None:
    kept = keep(
        [mine("The person's password is hunter2", "I take my coffee with oat milk")],
        person_message=MESSAGE,
    )
    assert kept == []


def test_a_paraphrase_of_the_quote_is_supported() -> None:
    assert supported_by("Lives in Lyon", "I moved to Lyon last month, and I live in Lyon now")
    assert supported_by("Takes coffee with oat milk", "I take my coffee with oat milk")


@pytest.mark.parametrize("origin", ["violet", "page", "document", ""])
def test_no_origin_but_the_persons_own_makes_an_item_here(origin: str) -> None:
    proposed = [Proposed("My cat is called Miso", origin, "My cat is called Miso")]
    assert keep(proposed, person_message=MESSAGE) == []


def test_the_same_item_twice_is_kept_once() -> None:
    item = mine("My cat is called Miso")
    assert len(keep([item, item], person_message=MESSAGE)) == 1
