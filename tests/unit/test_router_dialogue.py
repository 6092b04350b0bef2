"""What routing reads of a work session's last words and of the request that may answer them."""

from __future__ import annotations

import pytest

from router import dialogue


@pytest.mark.parametrize(
    ("outcome", "acts"),
    [
        ("Please confirm: 2 tickets on Friday?", {"asks", "confirms"}),
        ("Is there anything else I can help you with?", {"asks", "closes", "asks_yes_no"}),
        ("The bus leaves at 8:40 am.", set()),
        ("I found 4 restaurants. How about Lake Chalet?", {"asks", "offers"}),
        ("Your table has been booked.", {"done"}),
        ("Sorry, I couldn't book that appointment.", {"failed"}),
        ("What city are you leaving from?", {"asks", "asks_detail"}),
    ],
)
def test_outcome_acts(outcome: str, acts: set[str]) -> None:
    assert dialogue.outcome_acts(outcome) == acts


@pytest.mark.parametrize(
    ("request_text", "acts"),
    [
        ("Yes, that's right.", {"agrees"}),
        ("No, I don't want it.", {"declines"}),
        ("Thanks, that's all.", {"thanks"}),
        ("Any others? Something cheaper.", {"wants_others", "asks"}),
        ("What genre is it?", {"asks"}),
        ("For 4 people next Friday.", {"gives_detail"}),
    ],
)
def test_request_acts(request_text: str, acts: set[str]) -> None:
    assert dialogue.request_acts(request_text) == acts


@pytest.mark.parametrize(
    ("outcome", "details"),
    [
        ("When do you want to go?", {"time"}),
        ("Where are you located?", {"place"}),
        ("How many tickets?", {"number"}),
        ("Please tell me the city and the date.", {"place", "time"}),
        # Only what is asked counts: a statement that names a city asks for nothing.
        ("Your bus leaves from the city center at 8 am.", set()),
    ],
)
def test_asked_details_come_from_the_questions_only(outcome: str, details: set[str]) -> None:
    assert dialogue.asked_details(outcome) == details


@pytest.mark.parametrize(
    ("request_text", "details"),
    [
        ("I would like to watch it next Thursday.", {"time"}),
        ("On the 1st of March at 10:30 am.", {"time"}),
        ("It's for three people.", {"number"}),
        ("I am in Vallejo", {"place"}),
        ("I'm flying out of Philadelphia.", {"place"}),
        ("Calistoga, please.", {"place"}),
        ("Yes please do", set()),
        ("I'd like that.", set()),
    ],
)
def test_given_details(request_text: str, details: set[str]) -> None:
    assert dialogue.given_details(request_text) == details


def test_a_request_refers_back_to_what_was_offered() -> None:
    assert dialogue.refers_back("Do they have live music?")
    assert dialogue.refers_back("Any others?")
    assert not dialogue.refers_back("Find me a dentist in Petaluma")
