"""The topic card a work session keeps with the router."""

from __future__ import annotations

from datetime import UTC, datetime

from worker.cards import card, entities, title_of


def test_entities_are_links_addresses_documents_and_names() -> None:
    found = entities(
        [
            "look up the weather in Oslo at http://example.org/oslo.",
            "Send an email to Anna Berg at anna@example.org. Then write note-plan.md",
        ]
    )
    assert found == [
        "http://example.org/oslo",
        "Oslo",
        "anna@example.org",
        "note-plan.md",
        "Anna Berg",
    ]


def test_the_card_carries_the_last_request_and_a_short_history() -> None:
    at = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    history = [(f"look up page {n}", f"Page {n} says hello.") for n in range(6)]
    made = card("t_1", title_of("look up page 0"), history, "look up page 6", "Page six.", at)
    assert made["title"] == "look up page 0"
    assert made["last_request"] == "look up page 6" and made["last_outcome"] == "Page six."
    assert made["summary"].startswith("look up page 3: Page 3 says hello.")
    assert made["summary"].endswith("look up page 6: Page six.")
    assert made["last_active"] == "2026-05-01T12:00:00+00:00"


def test_a_long_request_makes_a_short_title() -> None:
    assert len(title_of("look up " + "very " * 40 + "long")) <= 80
