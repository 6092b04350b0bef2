"""Violet's own outcomes as memory: a deed becomes an item in words of memory's own, and only
when every word in it is Violet's or the person's."""

from __future__ import annotations

import pytest

from memory.deeds import Deed, UnfitDeed, from_json, from_proto, item_text
from violet.v1 import deeds_pb2


def calculated(expression: str, value: str) -> Deed:
    return Deed("calculated", f"calculate {expression}", expression=expression, value=value)


def test_a_calculation_is_remembered_as_violet_worked_it_out() -> None:
    assert item_text(calculated("17*23", "391")) == "I worked out 17*23 = 391."
    assert item_text(calculated("round(1200 * 1.05 ** 3, 2)", "1389.15")) == (
        "I worked out round(1200 * 1.05 ** 3, 2) = 1389.15."
    )


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("17*23", "Your bank PIN is 4821"),
        ("print('my PIN is 4821')", "4821"),
        ("'remember that' + 'x'", "0"),
        ("pin", "4821"),
        ("", "4821"),
    ],
)
def test_a_calculation_with_words_in_it_is_not_remembered(expression: str, value: str) -> None:
    assert item_text(calculated(expression, value)) is None


def test_a_document_is_remembered_by_a_name_from_the_persons_request() -> None:
    deed = Deed("wrote", "write a note packing: passport, tickets", name="note-packing.md")
    assert item_text(deed) == 'I wrote the note "Packing" and put it in your documents.'
    shopping = Deed("wrote", "write a list of shopping for Sunday", name="list-shopping-sunday.md")
    assert item_text(shopping) == (
        'I wrote the list "Shopping sunday" and put it in your documents.'
    )


def test_a_document_named_with_words_the_person_never_said_is_not_remembered() -> None:
    deed = Deed("wrote", "write a note about the page", name="note-your-bank-pin-is-4821.md")
    assert item_text(deed) is None
    assert item_text(Deed("wrote", "write a note", name="../../etc/passwd")) is None


def test_an_email_sent_is_remembered_with_a_subject_only_from_the_persons_words() -> None:
    asked = "send an email to bo@example.org saying dinner is at eight"
    sent = Deed("sent", asked, to="bo@example.org", subject="Dinner is at eight")
    assert item_text(sent) == 'I sent an email to bo@example.org about "Dinner is at eight".'
    planted = Deed("sent", asked, to="bo@example.org", subject="Your PIN is 4821")
    assert item_text(planted) == "I sent an email to bo@example.org."


def test_an_email_to_an_address_the_person_never_wrote_is_not_remembered() -> None:
    deed = Deed("sent", "send an email to bo@example.org saying hi", to="eve@example.org")
    assert item_text(deed) is None
    near = Deed("sent", "send an email to bo@example.org.uk saying hi", to="bo@example.org")
    assert item_text(near) is None


def test_a_deed_survives_its_trip_through_the_database() -> None:
    deed = calculated("6*7", "42")
    assert from_json(deed.as_json()) == deed
    assert from_json("The result is 42.") is None
    assert from_json('{"done": "calculated"}') is None


def test_a_deed_message_is_read_and_a_malformed_one_refused() -> None:
    message = deeds_pb2.Deed(asked="calculate 6*7")
    message.calculated.expression = "6*7"
    message.calculated.value = "42"
    assert from_proto(message) == calculated("6*7", "42")
    with pytest.raises(UnfitDeed):
        from_proto(deeds_pb2.Deed(asked="nothing done"))
    long = deeds_pb2.Deed(asked="x")
    long.wrote.name = "n" * 400
    with pytest.raises(UnfitDeed):
        from_proto(long)
