"""The services' fixed phrases in every language Violet follows: each table holds all seventeen,
with the English placeholders and nothing else; activity lines stay short; and the filled
sentences come out whole in each language."""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta

import pytest

from gateway import phrases as gateway_phrases
from session import account_phrases, activity, pins, turn
from session.notify import wording
from session.reminders import words as reminder_words_module
from session.reminders.words import reminder_words
from violet.models import ToolCall
from violet.models import tools as t
from violet.models.credentials import Payer
from worker import agent, toolbox
from worker.mail import Email

# In the order of `violet.language.LANGUAGES`.
LANGUAGES = (
    *("en", "pt", "es", "fr", "de", "it", "nl", "pl", "tr"),
    *("id", "vi", "ru", "ar", "hi", "zh", "ja", "ko"),
)
# Written without spaces between words (Korean has them, but its lines are counted the same way).
CJK = frozenset({"zh", "ja", "ko"})
CJK_ACTIVITY_CHARS = 16

MODULES = [
    gateway_phrases,
    account_phrases,
    activity,
    wording,
    pins,
    reminder_words_module,
    turn,
    agent,
    toolbox,
]
ACTIVITY_LINES = [
    activity.THINKING,
    agent.STARTING,
    *toolbox.ACTIVITY.values(),
    *toolbox.WRITING.values(),
    toolbox.WORKING,
    toolbox.SENDING,
]


def tables_in(value: object, where: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    """Every phrase table (a dict keyed by language) in `value`, however deeply nested."""
    if not isinstance(value, Mapping):
        return
    if "en" in value and "pt" in value:
        yield where, value
        return
    for key, inner in value.items():
        yield from tables_in(inner, f"{where}[{key!r}]")


def all_tables() -> list[tuple[str, Mapping[str, object]]]:
    return [
        table
        for module in MODULES
        for name, value in vars(module).items()
        if name.isupper()
        for table in tables_in(value, f"{module.__name__}.{name}")
    ]


TABLES = all_tables()


def placeholders(text: str) -> list[tuple[str, str]]:
    """The fields of a format string, with their format specs, in a stable order."""
    return sorted(
        (field, spec or "")
        for _, field, spec, _ in string.Formatter().parse(text)
        if field is not None
    )


def texts(phrase: object) -> list[str]:
    """A phrase's strings: one, or each of a tuple of alternatives or parts."""
    if isinstance(phrase, str):
        return [phrase]
    assert isinstance(phrase, tuple | list), phrase
    return list(phrase)


def test_the_tables_are_found_in_every_module() -> None:
    found = {where.partition("[")[0].rpartition(".")[0] for where, _ in TABLES}
    assert found == {module.__name__ for module in MODULES}
    assert len(TABLES) > 50


@pytest.mark.parametrize(("where", "table"), TABLES, ids=[where for where, _ in TABLES])
def test_every_table_holds_all_seventeen_languages_in_order(
    where: str, table: Mapping[str, object]
) -> None:
    assert tuple(table) == LANGUAGES, where


@pytest.mark.parametrize(("where", "table"), TABLES, ids=[where for where, _ in TABLES])
def test_every_translation_has_the_english_placeholders(
    where: str, table: Mapping[str, object]
) -> None:
    english = texts(table["en"])
    for language in LANGUAGES:
        said = texts(table[language])
        assert len(said) == len(english), (where, language)
        for text, original in zip(said, english, strict=True):
            assert text.strip(), (where, language)
            assert placeholders(text) == placeholders(original), (where, language, text)


@pytest.mark.parametrize("language", LANGUAGES)
def test_activity_lines_are_two_to_seven_words(language: str) -> None:
    for translations in ACTIVITY_LINES:
        line = translations[language]
        if language in CJK:
            assert 2 <= len(line) <= CJK_ACTIVITY_CHARS, line
        else:
            assert 2 <= len(line.split()) <= 7, line
    lines = {translations[language] for translations in ACTIVITY_LINES}
    assert len(lines) == len(ACTIVITY_LINES), "each activity reads differently"


@pytest.mark.parametrize("language", LANGUAGES)
def test_activity_lines_follow_the_language(language: str) -> None:
    call = ToolCall("c", t.WEB_SEARCH, {})
    assert toolbox.activity_line(call, language) == toolbox.ACTIVITY[t.WEB_SEARCH][language]


DUE = datetime(2026, 12, 6, 17, 0, tzinfo=UTC)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_reminder_reads_whole_in_each_language(language: str) -> None:
    on_time = reminder_words("call Sam", DUE, DUE + timedelta(minutes=1), "UTC", language)
    late = reminder_words("call Sam", DUE, DUE + timedelta(minutes=25), "UTC", language)
    other_day = reminder_words("call Sam", DUE, DUE + timedelta(days=1, hours=2), "UTC", language)
    for said in (on_time, late, other_day):
        assert said.endswith("call Sam") and "17:00" in said and "{" not in said
    assert on_time != late != other_day


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_email_question_quotes_the_email_in_each_language(language: str) -> None:
    email = Email("ana@example.org", "Plans", "Dinner is at eight.")
    question = toolbox.approval_question(email, language)
    assert "ana@example.org" in question
    assert '"Plans"' in question and '"Dinner is at eight."' in question
    assert question.rstrip().endswith(("?", "？", "؟"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_notification_counts_in_each_language(language: str) -> None:
    several = wording.SEVERAL[language].format(count=3)
    more = wording.AND_MORE[language].format(count=2)
    assert "3" in several and "2" in more


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_account_notice_joins_its_sentences(language: str) -> None:
    said = account_phrases.notice_phrase("key_refused:x", Payer.NOBODY, language)
    refused = account_phrases.KEY_REFUSED[language]
    after = account_phrases.AFTER_REFUSAL[Payer.NOBODY][language]
    # Chinese and Japanese sentences follow one another without a space.
    space = "" if language in {"zh", "ja"} else " "
    assert said == f"{refused}{space}{after}"


def test_the_deletion_words_stay_english_in_every_language() -> None:
    for language in LANGUAGES:
        assert "delete everything" in gateway_phrases.NOTHING_DELETED[language], language


def test_every_told_failure_is_known_as_one_in_each_language() -> None:
    told = [agent.GAVE_UP, agent.DECLINED, agent.MODEL_FAILED, agent.SPEND_LIMIT]
    for language in LANGUAGES:
        for phrases in told:
            assert agent.told_failure(phrases[language]), language
        assert not agent.told_failure(agent.FINISHED[language]), language
