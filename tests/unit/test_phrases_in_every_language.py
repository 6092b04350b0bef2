"""Every fixed phrase table of the offline model (`offline_phrases`, `offline_reports`) and of
`violet.when` is in all seventeen languages Violet follows, each with the English placeholders;
and the times `violet.when` says come out in each language's own words."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, timedelta
from string import Formatter
from types import ModuleType

import pytest

from violet import when
from violet.models import offline_phrases, offline_reports

CODES = (
    *("en", "pt", "es", "fr", "de", "it", "nl", "pl", "tr"),
    *("id", "vi", "ru", "ar", "hi", "zh", "ja", "ko"),
)
OTHERS = CODES[1:]
MODULES = (offline_phrases, offline_reports, when)
TODAY = date(2026, 12, 6)  # a Sunday


def tables(module: ModuleType) -> Iterator[tuple[str, Mapping[str, object]]]:
    """(name, table) of each dict in `module` keyed by language, nested ones included."""

    def found(name: str, value: object) -> Iterator[tuple[str, Mapping[str, object]]]:
        if not isinstance(value, Mapping):
            return
        if "pt" in value:
            yield name, value
            return
        for key, inner in value.items():
            yield from found(f"{name}[{key!r}]", inner)

    for name, value in vars(module).items():
        if not name.startswith("__"):
            yield from found(f"{module.__name__}.{name}", value)


def placeholders(text: str) -> list[str]:
    return sorted(field for _, field, _, _ in Formatter().parse(text) if field is not None)


def phrase_tables() -> list[tuple[str, Mapping[str, object]]]:
    return [(name, table) for module in MODULES for name, table in tables(module) if "en" in table]


def test_each_module_has_phrase_tables() -> None:
    names = [name for name, _ in phrase_tables()]
    for module in MODULES:
        assert any(name.startswith(module.__name__) for name in names), module


@pytest.mark.parametrize(("name", "table"), phrase_tables(), ids=lambda v: str(v)[:60])
def test_every_table_holds_all_languages_with_the_english_placeholders(
    name: str, table: Mapping[str, object]
) -> None:
    assert tuple(table) == CODES, name
    english = table["en"]
    for language in OTHERS:
        said = table[language]
        assert said, (name, language)
        if isinstance(english, tuple):
            assert isinstance(said, tuple) and len(said) == len(english), (name, language)
            for original, translated in zip(english, said, strict=True):
                assert placeholders(translated) == placeholders(original), (name, language)
        elif isinstance(english, str):
            assert isinstance(said, str), (name, language)
            assert placeholders(said) == placeholders(english), (name, language)


def test_reasons_are_told_in_every_other_language() -> None:
    # The English of a reason is its key.
    for reason, table in offline_reports.REASONS.items():
        assert tuple(table) == OTHERS, reason
        for language in OTHERS:
            assert table[language] and placeholders(table[language]) == placeholders(reason)


@pytest.mark.parametrize("language", CODES)
def test_babel_has_a_locale_for_each_language(language: str) -> None:
    assert language in when.LOCALES
    assert when.lateness(timedelta(minutes=25), language)


# English words a time could leak; "minutes" (French) and "december" (Dutch) are left out, as
# other languages write them too.
ENGLISH_WORDS = frozenset(
    (
        *("today", "tomorrow", "on", "at", "every", "day", "days", "and", "weekday"),
        *("weekdays", "hour", "hours", "late", "repeatedly", "next", "monday", "tuesday"),
        *("wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue", "wed", "thu"),
        *("fri", "sat", "sun"),
    )
)


def said_of_time(language: str) -> list[str]:
    monday = datetime(2026, 12, 7, 18)
    return [
        when.occurrence(datetime(2026, 12, 6, 17), TODAY, language),
        when.occurrence(datetime(2026, 12, 7, 8), TODAY, language),
        when.occurrence(datetime(2026, 12, 11, 8), TODAY, language),
        when.recurrence("FREQ=DAILY", datetime(2026, 12, 6, 21), TODAY, language),
        when.recurrence("FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), TODAY, language),
        when.recurrence("FREQ=WEEKLY;BYDAY=MO,WE,FR", monday, TODAY, language),
        when.recurrence("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", monday, TODAY, language),
        when.recurrence(
            "FREQ=MINUTELY;INTERVAL=30", datetime(2026, 12, 6, 14, 30), TODAY, language
        ),
        when.lateness(timedelta(minutes=25), language),
    ]


@pytest.mark.parametrize("language", OTHERS)
def test_times_are_said_without_english_words(language: str) -> None:
    said = said_of_time(language)
    for text in said:
        assert text.strip(), language
        words = {word.lower() for word in re.findall(r"[^\W\d_]+", text)}
        assert not words & ENGLISH_WORDS, (language, text)
    # Lateness aside: French "25 minutes" is English too.
    english = said_of_time("en")
    assert all(mine != theirs for mine, theirs in zip(said[:-1], english[:-1], strict=True))


@pytest.mark.parametrize(
    ("language", "repeat", "following", "said"),
    [
        ("ru", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "каждый понедельник в 07:30"),
        ("ru", "FREQ=WEEKLY;BYDAY=WE", datetime(2026, 12, 9, 7, 30), "каждую среду в 07:30"),
        ("ru", "FREQ=WEEKLY;BYDAY=SU", datetime(2026, 12, 13, 9), "каждое воскресенье в 09:00"),
        (
            "ru",
            "FREQ=WEEKLY;BYDAY=MO,TH",
            datetime(2026, 12, 7, 18),
            "по понедельникам и четвергам в 18:00",
        ),
        ("pl", "FREQ=WEEKLY;BYDAY=WE", datetime(2026, 12, 9, 7, 30), "w każdą środę o 07:30"),
        (
            "pl",
            "FREQ=WEEKLY;BYDAY=TU,WE,FR",
            datetime(2026, 12, 8, 18),
            "we wtorki, środy i piątki o 18:00",
        ),
        ("ar", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "كل يوم اثنين الساعة 07:30"),
        ("ar", "FREQ=HOURLY;INTERVAL=2", datetime(2026, 12, 6, 14), "كل ساعتين"),
        ("tr", "FREQ=MINUTELY;INTERVAL=30", datetime(2026, 12, 6, 14, 30), "30 dakikada bir"),
        ("tr", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "her pazartesi saat 07:30"),
        (
            "id",
            "FREQ=WEEKLY;BYDAY=MO,WE,FR",
            datetime(2026, 12, 7, 18),
            "setiap Senin, Rabu, dan Jumat pukul 18:00",
        ),
        ("zh", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "每周一 07:30"),
        ("zh", "FREQ=WEEKLY;BYDAY=MO,WE,FR", datetime(2026, 12, 7, 18), "每周一、周三和周五 18:00"),
        ("ja", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "毎週月曜日の07:30"),
        ("ja", "FREQ=MINUTELY;INTERVAL=30", datetime(2026, 12, 6, 14, 30), "30分ごと"),
        ("ko", "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "매주 월요일 07:30"),
        ("ko", "FREQ=WEEKLY;BYDAY=MO,TH", datetime(2026, 12, 7, 18), "매주 월요일과 목요일 18:00"),
    ],
)
def test_weekdays_and_spans_take_each_languages_grammar(
    language: str, repeat: str, following: datetime, said: str
) -> None:
    assert when.recurrence(repeat, following, TODAY, language) == said


@pytest.mark.parametrize(
    ("language", "day", "said"),
    [
        ("ru", 8, "во вт, 8 декабря в 08:00"),
        ("ru", 11, "в пт, 11 декабря в 08:00"),
        ("pl", 8, "we wt., 8 grudnia o 08:00"),
        ("pl", 11, "w pt., 11 grudnia o 08:00"),
        ("ja", 11, "12月11日金曜日の08:00"),
        ("ar", 11, "يوم الجمعة، 11 ديسمبر الساعة 08:00"),
    ],
)
def test_another_day_is_named_in_the_persons_language(language: str, day: int, said: str) -> None:
    assert when.occurrence(datetime(2026, 12, day, 8), TODAY, language) == said


def test_a_document_is_named_in_the_case_each_template_takes() -> None:
    wrote = offline_reports.document_told(offline_reports.WROTE, "ru", "note", title="Покупки")
    assert wrote.startswith("Готово: я записала вашу заметку «Покупки»")
    says = offline_reports.document_told(
        offline_reports.DOCUMENT_SAYS, "pl", "list", title="Zakupy", sentence="Mleko."
    )
    assert says == "Twoją listę „Zakupy” otworzyłam. Zaczyna się tak: Mleko."


def test_a_search_report_keeps_chinese_and_japanese_punctuation() -> None:
    fields = {"query": "潮汐", "title": "潮汐表", "where": " (https://t.example)", "ending": "."}
    assert offline_reports.report(offline_reports.FOUND, "zh", **fields) == (
        "“潮汐”的第一条搜索结果是“潮汐表”（https://t.example）。"
    )
    fields["ending"] = ": 今日は大潮です。"
    assert offline_reports.report(offline_reports.FOUND, "ja", **fields).endswith(
        "「潮汐表」でした（https://t.example）：今日は大潮です。"
    )
    assert offline_reports.report(offline_reports.FOUND, "en", **fields).endswith(
        '"潮汐表" (https://t.example): 今日は大潮です。'
    )
