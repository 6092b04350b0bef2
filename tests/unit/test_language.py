"""Violet follows the person's language: the detector, measured on held-aside sentences, and the
fixed phrases and activity lines it picks in English, Portuguese, Spanish, French and German."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from session.pins import CHECK_IN, Pin, check_in
from session.turn import APOLOGY
from violet.language import LANGUAGES, detect, phrase
from violet.models import ToolCall
from violet.models import offline_phrases as say
from violet.models import tools as t
from violet.models.offline_rules import Turn, after_tools, person_language, respond
from worker.agent import FINISHED, GAVE_UP, MODEL_FAILED, STARTING
from worker.mail import Email
from worker.toolbox import ACTIVITY, SENDING, WORKING, WRITING, activity_line, approval_question

# Sentences written apart from the detector's word lists, never used to tune them.
HELD_ASIDE = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "language_sentences.jsonl").open()
]
GREETING = {
    "en": "Hello Violet, how are you doing today?",
    "pt": "Olá Violet, tudo bem com você hoje?",
    "es": "Hola Violet, ¿cómo estás hoy?",
    "fr": "Bonjour Violet, comment allez-vous aujourd'hui ?",
    "de": "Hallo Violet, wie geht es Ihnen heute?",
}
ALL_ACTIVITY = [*ACTIVITY.values(), *WRITING.values(), WORKING, SENDING, STARTING]


def accuracy(histories: list[tuple[list[str], str]]) -> float:
    return sum(detect(said) == language for said, language in histories) / len(histories)


def test_one_message_is_told_right_nine_times_in_ten() -> None:
    assert len(HELD_ASIDE) == 60 and {row["language"] for row in HELD_ASIDE} == set(LANGUAGES)
    assert accuracy([([row["text"]], row["language"]) for row in HELD_ASIDE]) >= 0.9


def test_two_recent_messages_are_told_right_every_time() -> None:
    by_language = {
        language: [row["text"] for row in HELD_ASIDE if row["language"] == language]
        for language in LANGUAGES
    }
    histories = [
        ([texts[index - 1], text], language)
        for language, texts in by_language.items()
        for index, text in enumerate(texts)
    ]
    assert accuracy(histories) == 1.0


def test_the_newest_message_weighs_most_so_a_change_of_language_is_followed() -> None:
    assert detect(["Hello, how are you?", "Merci, je vais très bien aujourd'hui."]) == "fr"


def test_with_nothing_to_go_by_it_is_english() -> None:
    assert detect([]) == "en"
    assert detect(["42", "https://example.org"]) == "en"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_persons_greeting_is_answered_in_their_language(language: str) -> None:
    messages = [{"role": "user", "content": GREETING[language]}]
    assert person_language(messages) == language
    [reply] = respond(tier="main", system="", messages=messages, offered=[])
    assert reply["text"] in say.ASKED[language] + say.FRIENDLY[language]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_answer_after_starting_work_is_in_the_persons_language(language: str) -> None:
    turn = Turn(text=None, calls=[{"id": "c", "name": t.START_WORK}], results={"c": ("", False)})
    assert after_tools(turn, language) == say.ON_IT[language]


def test_update_notes_and_memory_notes_do_not_count_as_the_persons_words() -> None:
    messages = [
        {"role": "user", "content": "Olá, tudo bem? Obrigada pela ajuda."},
        {"role": "user", "content": t.UPDATE_PREFIX + "The page says: the weather is fine."},
    ]
    assert person_language(messages) == "pt"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_activity_line_is_two_to_seven_words_in_each_language(language: str) -> None:
    for translations in ALL_ACTIVITY:
        assert 2 <= len(phrase(translations, language).split()) <= 7, translations
    lines = {phrase(translations, language) for translations in ALL_ACTIVITY}
    assert len(lines) == len(ALL_ACTIVITY), "each activity reads differently"


@pytest.mark.parametrize("language", LANGUAGES)
def test_activity_lines_follow_the_persons_language(language: str) -> None:
    assert (
        activity_line(ToolCall("c", t.FETCH_PAGE, {}), language) == ACTIVITY[t.FETCH_PAGE][language]
    )
    note = ToolCall("c", t.WRITE_DOCUMENT, {"name": "list-trip.md"})
    assert activity_line(note, language) == WRITING["list"][language]


def test_every_fixed_phrase_has_all_five_languages() -> None:
    phrases = [
        value
        for value in vars(say).values()
        if isinstance(value, dict) and set(value) & set(LANGUAGES)
    ]
    worker = [FINISHED, GAVE_UP, MODEL_FAILED]
    for translations in [*phrases, *ALL_ACTIVITY, *worker, APOLOGY, CHECK_IN]:
        assert set(translations) == set(LANGUAGES), translations


@pytest.mark.parametrize("language", LANGUAGES)
def test_violets_questions_are_asked_in_the_persons_language(language: str) -> None:
    pin = Pin(id="p", kind="promise", text="look up the tides", created_at=datetime.now(UTC))
    asked = check_in(pin, language)
    assert '"look up the tides"' in asked and asked == CHECK_IN[language].format(
        promise="look up the tides"
    )
    email = Email("ana@example.org", "Dinner", "Dinner is at eight.")
    question = approval_question(email, language)
    assert "ana@example.org" in question and '"Dinner is at eight."' in question
    assert question.rstrip().endswith("?")
    if language != "en":
        assert question != approval_question(email, "en")


def test_an_unknown_language_falls_back_to_english() -> None:
    assert phrase(say.ON_IT, "it") == say.ON_IT["en"]
