"""Violet follows the person's language: the detector, measured on held-aside sentences, and the
fixed phrases and activity lines it picks in each of the languages of LANGUAGES. The detector's
scripts, mixed messages and new Latin-script languages are in test_language_scripts.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from session.activity import THINKING
from session.notify.wording import ONE
from session.pins import CHECK_IN, Pin, check_in
from session.reminders.words import ON_TIME
from session.transcript import Message
from session.turn import APOLOGY, DECLINED
from session.turn_context import person_language as session_language
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
    "it": "Ciao Violet, come stai oggi?",
    "nl": "Hallo Violet, hoe gaat het vandaag met je?",
    "pl": "Cześć Violet, jak się dzisiaj masz?",
    "tr": "Merhaba Violet, bugün nasılsın?",
    "id": "Halo Violet, apa kabar hari ini?",
    "vi": "Chào Violet, hôm nay bạn thế nào?",
    "ru": "Привет, Violet, как у тебя дела сегодня?",
    "ar": "مرحبا Violet، كيف حالك اليوم؟",
    "hi": "नमस्ते Violet, आज आप कैसी हैं?",
    "zh": "你好 Violet，今天过得怎么样？",
    "ja": "こんにちは Violet、今日の調子はどう？",
    "ko": "안녕 Violet, 오늘 어떻게 지내?",
}
# The question mark of each script: Latin and Devanagari, Arabic, Chinese and Japanese.
QUESTION_MARKS = ("?", "؟", "？")
ALL_ACTIVITY = [*ACTIVITY.values(), *WRITING.values(), WORKING, SENDING, STARTING]


def accuracy(histories: list[tuple[list[str], str]]) -> float:
    return sum(detect(said) == language for said, language in histories) / len(histories)


def test_one_message_is_told_right_nine_times_in_ten() -> None:
    assert len(HELD_ASIDE) == 12 * len(LANGUAGES) == 204
    assert {row["language"] for row in HELD_ASIDE} == set(LANGUAGES)
    assert accuracy([([row["text"]], row["language"]) for row in HELD_ASIDE]) >= 0.9


@pytest.mark.parametrize("language", LANGUAGES)
def test_one_message_is_told_right_nine_times_in_ten_in_each_language(language: str) -> None:
    rows = [row for row in HELD_ASIDE if row["language"] == language]
    assert len(rows) == 12
    assert accuracy([([row["text"]], language) for row in rows]) >= 0.9


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


# Chinese and Japanese write no spaces between words (Korean does, between phrases): their
# activity lines are held to a length a glance reads, as seven words are elsewhere.
UNSPACED = frozenset({"zh", "ja"})
UNSPACED_MOST_CHARS = 16


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_activity_line_is_two_to_seven_words_in_each_language(language: str) -> None:
    for translations in ALL_ACTIVITY:
        line = phrase(translations, language)
        if language in UNSPACED:  # no spaces between words: a short line, by characters
            assert 2 <= len(line) <= UNSPACED_MOST_CHARS, translations
        else:
            assert 2 <= len(line.split()) <= 7, translations
    lines = {phrase(translations, language) for translations in ALL_ACTIVITY}
    assert len(lines) == len(ALL_ACTIVITY), "each activity reads differently"


@pytest.mark.parametrize("language", LANGUAGES)
def test_activity_lines_follow_the_persons_language(language: str) -> None:
    assert (
        activity_line(ToolCall("c", t.FETCH_PAGE, {}), language) == ACTIVITY[t.FETCH_PAGE][language]
    )
    note = ToolCall("c", t.WRITE_DOCUMENT, {"name": "list-trip.md"})
    assert activity_line(note, language) == WRITING["list"][language]


def test_every_fixed_phrase_has_every_language() -> None:
    # Not dunder names: the builtins' own dict has an "id" too.
    phrases = [
        value
        for name, value in vars(say).items()
        if not name.startswith("__") and isinstance(value, dict) and set(value) & set(LANGUAGES)
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
    assert question.rstrip().endswith(QUESTION_MARKS)
    if language != "en":
        assert question != approval_question(email, "en")


def test_an_unknown_language_falls_back_to_english() -> None:
    assert "sw" not in LANGUAGES
    assert phrase(say.ON_IT, "sw") == say.ON_IT["en"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_person_writing_a_language_sees_every_kind_of_fixed_phrase_in_it(language: str) -> None:
    """The session reads the language from the person's own messages; what they then see of
    Violet's fixed words (the activity line, an apology, a refusal, a notification, a reminder)
    is that language's, never English standing in."""
    said = [held["text"] for held in HELD_ASIDE if held["language"] == language][:2]
    messages = [
        Message(seq, "you", text, datetime(2026, 12, 6, tzinfo=UTC), client_id=str(seq))
        for seq, text in enumerate(said, 1)
    ]
    told = session_language(messages)
    assert told == language
    seen = [
        phrase(THINKING, told),
        phrase(APOLOGY, told),
        phrase(DECLINED, told),
        phrase(ONE["result"], told),
        phrase(ONE["reminder"], told),
        phrase(ON_TIME, told),
    ]
    tables = (THINKING, APOLOGY, DECLINED, ONE["result"], ONE["reminder"], ON_TIME)
    assert seen == [table[language] for table in tables]
    if language != "en":
        assert not set(seen) & {table["en"] for table in tables}
