"""What Violet says of reminders in each language she follows: the message when one comes (on
time, or late with how late and an apology, naming the day when it was another), when one comes
next ("today at 17:00", "every Monday at 07:30"), and why a time makes no reminder, read back
from the English sentence the tool answers with."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from session.reminders.words import reminder_words
from violet import when

DUE = datetime(2026, 12, 6, 17, 0, tzinfo=UTC)  # a Sunday
LISBON = "Europe/Lisbon"  # UTC+0 in December
TODAY = date(2026, 12, 6)


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "Reminder (17:00): call Sam"),
        ("pt", "Lembrete (17:00): call Sam"),
        ("es", "Recordatorio (17:00): call Sam"),
        ("fr", "Rappel (17:00) : call Sam"),
        ("de", "Erinnerung (17:00): call Sam"),
    ],
)
def test_a_reminder_on_time_says_its_time_and_words(language: str, said: str) -> None:
    assert reminder_words("call Sam", DUE, DUE + timedelta(minutes=2), LISBON, language) == said


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "Reminder (17:00, 25 minutes late, sorry): call Sam"),
        ("pt", "Lembrete (17:00, com 25 minutos de atraso, desculpe): call Sam"),
        ("es", "Recordatorio (17:00, con 25 minutos de retraso, perdona): call Sam"),
        ("fr", "Rappel (17:00, avec 25 minutes de retard, désolée) : call Sam"),
        ("de", "Erinnerung (17:00, 25 Minuten zu spät, Entschuldigung): call Sam"),
    ],
)
def test_a_late_reminder_says_how_late_and_sorry(language: str, said: str) -> None:
    assert reminder_words("call Sam", DUE, DUE + timedelta(minutes=25), LISBON, language) == said


def test_late_means_more_than_five_minutes() -> None:
    on_time = reminder_words("x", DUE, DUE + timedelta(minutes=5), LISBON, "en")
    late = reminder_words("x", DUE, DUE + timedelta(minutes=5, seconds=1), LISBON, "en")
    assert (on_time, late) == ("Reminder (17:00): x", "Reminder (17:00, 5 minutes late, sorry): x")


def test_a_reminder_from_another_day_names_the_day() -> None:
    said = reminder_words("call Sam", DUE, DUE + timedelta(hours=9), LISBON, "en")
    assert said == "Reminder (Sun, December 6, 17:00, 9 hours late, sorry): call Sam"


def test_the_day_is_named_in_the_persons_language() -> None:
    said = reminder_words("ligar ao Sam", DUE, DUE + timedelta(hours=9), LISBON, "pt")
    assert (
        said
        == "Lembrete (dom., 6 de dezembro, 17:00, com 9 horas de atraso, desculpe): ligar ao Sam"
    )


def test_the_day_and_time_are_the_persons_wall_clock() -> None:
    # 23:30 UTC is 15:30 in Los Angeles, and two hours on is still the same day there though
    # the next in UTC.
    due = datetime(2026, 12, 6, 23, 30, tzinfo=UTC)
    said = reminder_words("x", due, due + timedelta(hours=2), "America/Los_Angeles", "en")
    assert said == "Reminder (15:30, 2 hours late, sorry): x"


def test_an_unknown_language_is_told_in_english() -> None:
    said = reminder_words("x", DUE, DUE + timedelta(minutes=25), LISBON, "sw")
    assert said == "Reminder (17:00, 25 minutes late, sorry): x"


@pytest.mark.parametrize(
    ("language", "today", "tomorrow", "another"),
    [
        ("en", "today at 17:00", "tomorrow at 08:00", "on Fri, December 11 at 08:00"),
        ("pt", "hoje às 17:00", "amanhã às 08:00", "em sex., 11 de dezembro às 08:00"),
        ("es", "hoy a las 17:00", "mañana a las 08:00", "el vie, 11 de diciembre a las 08:00"),
        ("fr", "aujourd'hui à 17:00", "demain à 08:00", "le ven. 11 décembre à 08:00"),
        ("de", "heute um 17:00", "morgen um 08:00", "am Fr., 11. Dezember um 08:00"),
    ],
)
def test_an_occurrence_is_today_tomorrow_or_a_named_day(
    language: str, today: str, tomorrow: str, another: str
) -> None:
    assert [
        when.occurrence(datetime(2026, 12, 6, 17), TODAY, language),
        when.occurrence(datetime(2026, 12, 7, 8), TODAY, language),
        when.occurrence(datetime(2026, 12, 11, 8), TODAY, language),
    ] == [today, tomorrow, another]


@pytest.mark.parametrize(
    ("repeat", "following", "said"),
    [
        ("FREQ=DAILY", datetime(2026, 12, 6, 21), "every day at 21:00"),
        ("FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 7, 30), "every Monday at 07:30"),
        # no BYDAY: the day of its next occurrence
        ("FREQ=WEEKLY", datetime(2026, 12, 9, 9), "every Wednesday at 09:00"),
        (
            "FREQ=WEEKLY;BYDAY=MO,WE,FR",
            datetime(2026, 12, 7, 18),
            "every Monday, Wednesday and Friday at 18:00",
        ),
        ("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", datetime(2026, 12, 7, 8), "every weekday at 08:00"),
        ("FREQ=MINUTELY;INTERVAL=30", datetime(2026, 12, 6, 14, 30), "every 30 minutes"),
        (
            "FREQ=MONTHLY;BYMONTHDAY=1",
            datetime(2027, 1, 1, 9),
            "repeatedly, next on Fri, January 1 at 09:00",
        ),
        ("FREQ=DAILY;INTERVAL=2", datetime(2026, 12, 7, 9), "repeatedly, next tomorrow at 09:00"),
    ],
)
def test_a_recurrence_in_english(repeat: str, following: datetime, said: str) -> None:
    assert when.recurrence(repeat, following, TODAY) == said


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("pt", ["toda segunda-feira e quinta-feira às 18:00", "de segunda a sexta às 18:00"]),
        ("es", ["cada lunes y jueves a las 18:00", "de lunes a viernes a las 18:00"]),
        ("fr", ["chaque lundi et jeudi à 18:00", "du lundi au vendredi à 18:00"]),
        ("de", ["jeden Montag und Donnerstag um 18:00", "montags bis freitags um 18:00"]),
    ],
)
def test_weekly_recurrences_in_other_languages(language: str, said: list[str]) -> None:
    monday = datetime(2026, 12, 7, 18)
    assert [
        when.recurrence("FREQ=WEEKLY;BYDAY=MO,TH", monday, TODAY, language),
        when.recurrence("FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", monday, TODAY, language),
    ] == said


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("pt", "a cada 30 minutos"),
        ("es", "cada 30 minutos"),
        ("fr", "toutes les 30 minutes"),
        ("de", "alle 30 Minuten"),
    ],
)
def test_an_interval_in_other_languages(language: str, said: str) -> None:
    following = datetime(2026, 12, 6, 14, 30)
    assert when.recurrence("FREQ=MINUTELY;INTERVAL=30", following, TODAY, language) == said


@pytest.mark.parametrize(
    ("day", "said"),
    [("SA", "todo sábado às 09:00"), ("SU", "todo domingo às 09:00")],
)
def test_portuguese_weekend_days_take_todo(day: str, said: str) -> None:
    assert (
        when.recurrence(f"FREQ=WEEKLY;BYDAY={day}", datetime(2026, 12, 12, 9), TODAY, "pt") == said
    )


@pytest.mark.parametrize("kind", list(when.REFUSALS))
def test_each_english_refusal_maps_back_to_its_kind(kind: str) -> None:
    sentence = when.refusal(kind)
    assert when.refusal_kind(sentence) == kind
    assert when.refusal_kind(f"  {sentence}\n") == kind


def test_a_sentence_that_is_no_english_refusal_maps_to_none() -> None:
    assert when.refusal_kind(when.refusal("past", "pt")) is None
    assert when.refusal_kind("There is no open reminder with that id.") is None
