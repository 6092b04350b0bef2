"""The offline model's reader of reminders and scheduled work: each rule of time read from fixed
words at a fixed moment, impossible dates and too-frequent repeats passed on for the scheduler to
refuse, unreadable times handed back to ask about, and everything else left alone."""

from __future__ import annotations

from datetime import datetime

import pytest

from violet.models.offline_reminders import Unreadable, Wanted, read_schedule

NOW = datetime(2026, 12, 6, 14, 0)  # a Sunday afternoon
MONDAY_MORNING = datetime(2026, 12, 7, 8, 0)
DAILY = "FREQ=DAILY"


def reminder(text: str, at: str, repeat: str = "") -> Wanted:
    return Wanted(text=text, work=False, at=at, repeat=repeat)


def work(text: str, at: str, repeat: str = "") -> Wanted:
    return Wanted(text=text, work=True, at=at, repeat=repeat)


@pytest.mark.parametrize(
    ("words", "at"),
    [
        ("remind me in 20 minutes to call Sam", "2026-12-06T14:20"),
        ("remind me in 1 min to call Sam", "2026-12-06T14:01"),
        ("remind me in 45 mins to call Sam", "2026-12-06T14:45"),
        ("remind me in an hour to call Sam", "2026-12-06T15:00"),
        ("remind me in two hrs to call Sam", "2026-12-06T16:00"),
        ("remind me in twelve hours to call Sam", "2026-12-07T02:00"),
        ("remind me in half an hour to call Sam", "2026-12-06T14:30"),
        ("remind me in 3 days to call Sam", "2026-12-09T14:00"),
        ("remind me in a week to call Sam", "2026-12-13T14:00"),
    ],
)
def test_in_some_time_counts_from_now(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("call Sam", at)


def test_seconds_of_now_are_dropped() -> None:
    now = datetime(2026, 12, 6, 14, 0, 42, 500)
    assert read_schedule("remind me in 5 minutes to stretch", now) == reminder(
        "stretch", "2026-12-06T14:05"
    )


@pytest.mark.parametrize(
    ("words", "at"),
    [
        # without am/pm: the sooner of 5:00 and 17:00 still ahead
        ("remind me at 5 to pick up Sam", "2026-12-06T17:00"),
        ("remind me at 3:30 to pick up Sam", "2026-12-06T15:30"),
        # both readings past: tomorrow, the morning one first
        ("remind me at 1 to pick up Sam", "2026-12-07T01:00"),
        ("remind me at 2 to pick up Sam", "2026-12-07T02:00"),
        ("remind me at 5pm to pick up Sam", "2026-12-06T17:00"),
        ("remind me at 5 p.m. to pick up Sam", "2026-12-06T17:00"),
        ("remind me at 9 in the evening to pick up Sam", "2026-12-06T21:00"),
        ("remind me at 17:00 to pick up Sam", "2026-12-06T17:00"),
        ("remind me at 17h to pick up Sam", "2026-12-06T17:00"),
        ("remind me at 7.30 to pick up Sam", "2026-12-06T19:30"),
        ("remind me at five o'clock to pick up Sam", "2026-12-06T17:00"),
        # a time already past today means tomorrow
        ("remind me at 7:30am to pick up Sam", "2026-12-07T07:30"),
        ("remind me at 07:30 to pick up Sam", "2026-12-07T07:30"),
        ("remind me at 13:00 to pick up Sam", "2026-12-07T13:00"),
        ("remind me at 14:00 to pick up Sam", "2026-12-07T14:00"),
        ("remind me at noon to pick up Sam", "2026-12-07T12:00"),
        ("remind me at midnight to pick up Sam", "2026-12-07T00:00"),
        ("remind me at 12 am to pick up Sam", "2026-12-07T00:00"),
        ("remind me at 12 pm to pick up Sam", "2026-12-07T12:00"),
        ("remind me at 12 to pick up Sam", "2026-12-07T12:00"),
    ],
)
def test_a_clock_time_is_the_next_one_strictly_after_now(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("pick up Sam", at)


def test_the_sooner_reading_in_the_morning() -> None:
    early = datetime(2026, 12, 6, 4, 0)
    assert read_schedule("remind me at 5 to feed the cat", early) == reminder(
        "feed the cat", "2026-12-06T05:00"
    )


@pytest.mark.parametrize(
    ("words", "at"),
    [
        ("remind me today at 5pm to water the plants", "2026-12-06T17:00"),
        ("remind me today at 5 to water the plants", "2026-12-06T17:00"),
        # past, and kept: refusing it is the scheduler's part
        ("remind me today at 9am to water the plants", "2026-12-06T09:00"),
        ("remind me today at 1 to water the plants", "2026-12-06T13:00"),
        ("remind me tonight to water the plants", "2026-12-06T20:00"),
        ("remind me tonight at 11 to water the plants", "2026-12-06T23:00"),
        ("remind me this evening to water the plants", "2026-12-06T19:00"),
        ("remind me at 8 tonight to water the plants", "2026-12-06T20:00"),
    ],
)
def test_today(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("water the plants", at)


@pytest.mark.parametrize(
    ("words", "at"),
    [
        ("remind me tomorrow to renew the permit", "2026-12-07T09:00"),
        ("remind me tomorrow morning to renew the permit", "2026-12-07T09:00"),
        ("remind me tomorrow morning at 7 to renew the permit", "2026-12-07T07:00"),
        ("remind me tomorrow afternoon to renew the permit", "2026-12-07T15:00"),
        ("remind me tomorrow evening to renew the permit", "2026-12-07T19:00"),
        ("remind me tomorrow evening at 8 to renew the permit", "2026-12-07T20:00"),
        ("remind me tomorrow at 10:15 to renew the permit", "2026-12-07T10:15"),
        ("remind me at 9 tomorrow to renew the permit", "2026-12-07T09:00"),
        ("remind me tomorrow at 7.30pm to renew the permit", "2026-12-07T19:30"),
        # a later day's hour under seven without am/pm is read in the afternoon
        ("remind me tomorrow at 5 to renew the permit", "2026-12-07T17:00"),
        ("remind me tomorrow at 5 am to renew the permit", "2026-12-07T05:00"),
    ],
)
def test_tomorrow(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("renew the permit", at)


@pytest.mark.parametrize(
    ("words", "at"),
    [
        ("remind me on Monday to book the vet", "2026-12-07T09:00"),
        ("remind me Wednesday at 4pm to book the vet", "2026-12-09T16:00"),
        ("remind me next Friday at 10am to book the vet", "2026-12-11T10:00"),
        ("remind me on Monday morning at 7 to book the vet", "2026-12-07T07:00"),
        ("remind me at 9 on Tuesday to book the vet", "2026-12-08T09:00"),
        # today is Sunday: today while the time is ahead, else a week on
        ("remind me on Sunday at 3 to book the vet", "2026-12-06T15:00"),
        ("remind me on Sunday at 8pm to book the vet", "2026-12-06T20:00"),
        ("remind me on Sunday to book the vet", "2026-12-13T09:00"),
        ("remind me on Sunday at 10am to book the vet", "2026-12-13T10:00"),
    ],
)
def test_a_weekday_is_the_next_one(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("book the vet", at)


@pytest.mark.parametrize(
    ("words", "at"),
    [
        ("remind me on December 25 to call grandma", "2026-12-25T09:00"),
        ("remind me on 25 December at 8 to call grandma", "2026-12-25T08:00"),
        ("remind me on the 31st of Dec at 11pm to call grandma", "2026-12-31T23:00"),
        # passed this year: next year
        ("remind me on the 5th of May to call grandma", "2027-05-05T09:00"),
        ("remind me on Jan 2 to call grandma", "2027-01-02T09:00"),
        ("remind me on December 6 at 10 to call grandma", "2027-12-06T10:00"),
        ("remind me on December 6 at 4pm to call grandma", "2026-12-06T16:00"),
        # impossible dates come through for the scheduler to refuse
        ("remind me on February 30 at 9 to call grandma", "2027-02-30T09:00"),
        ("remind me on the 31st of April to call grandma", "2027-04-31T09:00"),
    ],
)
def test_a_date_is_this_year_or_next(words: str, at: str) -> None:
    assert read_schedule(words, NOW) == reminder("call grandma", at)


@pytest.mark.parametrize(
    ("words", "at", "repeat"),
    [
        ("remind me every day at 9 to take my pills", "2026-12-07T09:00", DAILY),
        ("remind me every day to take my pills", "2026-12-07T09:00", DAILY),
        ("remind me every morning to take my pills", "2026-12-07T08:00", DAILY),
        ("remind me every morning at 7 to take my pills", "2026-12-07T07:00", DAILY),
        ("remind me every evening to take my pills", "2026-12-06T19:00", DAILY),
        ("remind me every evening at 6 to take my pills", "2026-12-06T18:00", DAILY),
        ("remind me every night to take my pills", "2026-12-06T21:00", DAILY),
        ("remind me every day at 5 to take my pills", "2026-12-06T17:00", DAILY),
        ("remind me each day at 2:30pm to take my pills", "2026-12-06T14:30", DAILY),
        (
            "remind me every weekday at 8 to take my pills",
            "2026-12-07T08:00",
            "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
        ),
        ("remind me every Friday to take my pills", "2026-12-11T09:00", "FREQ=WEEKLY;BYDAY=FR"),
        ("remind me every Mondays to take my pills", "2026-12-07T09:00", "FREQ=WEEKLY;BYDAY=MO"),
        ("remind me on Mondays to take my pills", "2026-12-07T09:00", "FREQ=WEEKLY;BYDAY=MO"),
        (
            "remind me every Monday and Thursday at 6pm to take my pills",
            "2026-12-07T18:00",
            "FREQ=WEEKLY;BYDAY=MO,TH",
        ),
        (
            "remind me every Sunday at 6pm to take my pills",
            "2026-12-06T18:00",
            "FREQ=WEEKLY;BYDAY=SU",
        ),
        (
            "remind me every Sunday at 9am to take my pills",
            "2026-12-13T09:00",
            "FREQ=WEEKLY;BYDAY=SU",
        ),
        (
            "remind me every 5 minutes to take my pills",
            "2026-12-06T14:05",
            "FREQ=MINUTELY;INTERVAL=5",
        ),
        ("remind me every hour to take my pills", "2026-12-06T15:00", "FREQ=HOURLY"),
        ("remind me every 2 hours to take my pills", "2026-12-06T16:00", "FREQ=HOURLY;INTERVAL=2"),
        (
            "remind me every three hours to take my pills",
            "2026-12-06T17:00",
            "FREQ=HOURLY;INTERVAL=3",
        ),
    ],
)
def test_every(words: str, at: str, repeat: str) -> None:
    assert read_schedule(words, NOW) == reminder("take my pills", at, repeat)


def test_every_starts_strictly_after_now() -> None:
    said = "remind me every Monday at 7:30 to put the bins out"
    assert read_schedule(said, MONDAY_MORNING) == reminder(
        "put the bins out", "2026-12-14T07:30", "FREQ=WEEKLY;BYDAY=MO"
    )
    assert read_schedule("remind me every Monday at 8 to stretch", MONDAY_MORNING) == reminder(
        "stretch", "2026-12-14T08:00", "FREQ=WEEKLY;BYDAY=MO"
    )


@pytest.mark.parametrize(
    ("words", "at", "repeat"),
    [
        ("remind me every minute to drink water", "2026-12-06T14:01", "FREQ=MINUTELY"),
        ("remind me every 1 minute to drink water", "2026-12-06T14:01", "FREQ=MINUTELY"),
        ("remind me every 2 mins to drink water", "2026-12-06T14:02", "FREQ=MINUTELY;INTERVAL=2"),
    ],
)
def test_too_frequent_repeats_are_passed_on(words: str, at: str, repeat: str) -> None:
    assert read_schedule(words, NOW) == reminder("drink water", at, repeat)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("remind me to call mum at 5 pm", reminder("call mum", "2026-12-06T17:00")),
        ("remind me to call mum at 5", reminder("call mum", "2026-12-06T17:00")),
        ("remind me to call mum tomorrow", reminder("call mum", "2026-12-07T09:00")),
        ("remind me to call mum tomorrow at 8", reminder("call mum", "2026-12-07T08:00")),
        ("remind me to call mum on Friday", reminder("call mum", "2026-12-11T09:00")),
        ("remind me to call mum in 20 minutes", reminder("call mum", "2026-12-06T14:20")),
        ("remind me to call mum, at 5", reminder("call mum", "2026-12-06T17:00")),
        (
            "remind me to water the plants every Monday at 7:30",
            reminder("water the plants", "2026-12-07T07:30", "FREQ=WEEKLY;BYDAY=MO"),
        ),
        ("remind me about the dentist on Friday", reminder("the dentist", "2026-12-11T09:00")),
        ("remind me about it in 5 mins", reminder("it", "2026-12-06T14:05")),
        (
            "remind me that the bins go out every Monday at 7",
            reminder("the bins go out", "2026-12-07T07:00", "FREQ=WEEKLY;BYDAY=MO"),
        ),
    ],
)
def test_the_text_first(words: str, expected: Wanted) -> None:
    assert read_schedule(words, NOW) == expected


def test_a_time_inside_the_text_after_the_time_stays_in_the_text() -> None:
    said = "remind me tomorrow to tell Ana the party is at 5"
    assert read_schedule(said, NOW) == reminder("tell Ana the party is at 5", "2026-12-07T09:00")


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("Remind me at 5 to call Sam.", reminder("call Sam", "2026-12-06T17:00")),
        ("REMIND ME AT 5 TO CALL SAM!!", reminder("CALL SAM", "2026-12-06T17:00")),
        ("please remind me at 5 to call Sam", reminder("call Sam", "2026-12-06T17:00")),
        ("can you remind me at 5 to call Sam?", reminder("call Sam", "2026-12-06T17:00")),
        ("remind me to call Sam at 5, please", reminder("call Sam", "2026-12-06T17:00")),
        ("remind me, at 5, to call Sam", reminder("call Sam", "2026-12-06T17:00")),
        ("remind me in 20 minutes", reminder("", "2026-12-06T14:20")),
    ],
)
def test_words_casing_and_punctuation(words: str, expected: Wanted) -> None:
    assert read_schedule(words, NOW) == expected


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            "Every morning at 7, look up the tide times for Porto",
            work("look up the tide times for Porto", "2026-12-07T07:00", DAILY),
        ),
        (
            "every Monday at 8 check the bus times",
            work("check the bus times", "2026-12-07T08:00", "FREQ=WEEKLY;BYDAY=MO"),
        ),
        (
            "Every weekday at 8:15 send me the headlines",
            work("send me the headlines", "2026-12-07T08:15", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
        ),
        ("every morning, look up the news", work("look up the news", "2026-12-07T08:00", DAILY)),
        (
            "every 30 minutes check the build",
            work("check the build", "2026-12-06T14:30", "FREQ=MINUTELY;INTERVAL=30"),
        ),
        ("at 6 pm look up the news", work("look up the news", "2026-12-06T18:00")),
        (
            "tomorrow at 9, look up flights to Lisbon",
            work("look up flights to Lisbon", "2026-12-07T09:00"),
        ),
        ("in 20 minutes check the oven", work("check the oven", "2026-12-06T14:20")),
        # a phrase opening on "every" without a work verb is a reminder
        ("every day at 9 take my pills", reminder("take my pills", "2026-12-07T09:00", DAILY)),
        ("every hour drink water", reminder("drink water", "2026-12-06T15:00", "FREQ=HOURLY")),
        # after "remind me" it is only ever a reminder
        (
            "remind me every morning at 7 to look up the tide times",
            reminder("look up the tide times", "2026-12-07T07:00", DAILY),
        ),
    ],
)
def test_work_on_a_schedule(words: str, expected: Wanted) -> None:
    assert read_schedule(words, NOW) == expected


@pytest.mark.parametrize(
    ("words", "text"),
    [
        ("remind me to call mum sometime", "call mum"),
        ("remind me to call mum later", "call mum"),
        ("remind me later to call mum", "call mum"),
        ("remind me at 25:99 to call mum", "call mum"),
        ("remind me to call mum at 24:00", "call mum"),
        ("remind me at 13 pm to call mum", "call mum"),
        ("remind me on blursday to call mum", "call mum"),
        ("remind me on the 45th of March to call mum", "call mum"),
        ("remind me every day at 25:00 to call mum", "call mum"),
        ("remind me every 0 minutes to call mum", "call mum"),
        ("remind me next week to call mum", "call mum"),
        # "today" alone names no time
        ("remind me today to call mum", "call mum"),
        # a deadline is not a time to remind at
        ("remind me to call mum by Friday", "call mum by Friday"),
        ("remind me to prepare for Monday", "prepare for Monday"),
        ("remind me to call mum at 5 about the party", "call mum at 5 about the party"),
        ("remind me", ""),
        ("remind me sometime", ""),
        ("every day at 25:00 look up the news", "look up the news"),
    ],
)
def test_an_unreadable_time_is_asked_about(words: str, text: str) -> None:
    assert read_schedule(words, NOW) == Unreadable(text)


@pytest.mark.parametrize(
    "words",
    [
        "look up the weather in Oslo",
        "what reminders do I have?",
        "cancel the Sam reminder",
        "I remember that day",
        "every day is a gift",
        "every day at 9",
        "every time I find a bug, write it down",
        "check the weather every day",
        "today find me a restaurant",
        "tomorrow, look up the weather",
        "at least find me a hotel",
        "remind me what the wifi password is",
        "remind me when I get home to call Sam",
        "",
    ],
)
def test_not_a_schedule(words: str) -> None:
    assert read_schedule(words, NOW) is None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            "lembra-me daqui a 20 minutos de tirar o bolo",
            reminder("tirar o bolo", "2026-12-06T14:20"),
        ),
        (
            "lembra-me daqui a meia hora de tirar o bolo",
            reminder("tirar o bolo", "2026-12-06T14:30"),
        ),
        ("lembre-me às 17h de ligar à Ana", reminder("ligar à Ana", "2026-12-06T17:00")),
        ("me lembra às 5 da tarde de buscar o Sam", reminder("buscar o Sam", "2026-12-06T17:00")),
        ("lembra-me amanhã às 8 de levar o lixo", reminder("levar o lixo", "2026-12-07T08:00")),
        ("lembra-me amanhã de manhã de regar", reminder("regar", "2026-12-07T09:00")),
        ("lembra-me na segunda às 9 de pagar", reminder("pagar", "2026-12-07T09:00")),
        ("lembra-me a 30 de fevereiro de pagar", reminder("pagar", "2027-02-30T09:00")),
        ("lembra-me mais tarde de ligar à mãe", Unreadable("ligar à mãe")),
        ("lembra-me às 26h de ligar à mãe", Unreadable("ligar à mãe")),
    ],
)
def test_portuguese(words: str, expected: Wanted | Unreadable) -> None:
    assert read_schedule(words, NOW) == expected


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("recuérdame en 20 minutos sacar el pan", reminder("sacar el pan", "2026-12-06T14:20")),
        ("recuérdame en dos horas sacar el pan", reminder("sacar el pan", "2026-12-06T16:00")),
        (
            "recuérdame a las 5 de la tarde que llame a mamá",
            reminder("llame a mamá", "2026-12-06T17:00"),
        ),
        ("recuérdame a las 18:30 que llame a mamá", reminder("llame a mamá", "2026-12-06T18:30")),
        (
            "recuérdame mañana a las 8 llamar al médico",
            reminder("llamar al médico", "2026-12-07T08:00"),
        ),
        (
            "recuérdame mañana por la tarde comprar leche",
            reminder("comprar leche", "2026-12-07T15:00"),
        ),
        ("recuérdame el lunes a las 9 que pague", reminder("pague", "2026-12-07T09:00")),
        ("recuérdame comprar pan mañana a las 8", reminder("comprar pan", "2026-12-07T08:00")),
        ("recuérdame luego llamar a Juan", Unreadable("llamar a Juan")),
        ("recuérdame a las 25 llamar a Juan", Unreadable("llamar a Juan")),
    ],
)
def test_spanish(words: str, expected: Wanted | Unreadable) -> None:
    assert read_schedule(words, NOW) == expected


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            "rappelle-moi dans 20 minutes de sortir le gâteau",
            reminder("sortir le gâteau", "2026-12-06T14:20"),
        ),
        (
            "rappelle-moi dans une heure de sortir le gâteau",
            reminder("sortir le gâteau", "2026-12-06T15:00"),
        ),
        ("rappelle-moi à 17h d'appeler Marie", reminder("appeler Marie", "2026-12-06T17:00")),
        ("rappelle-moi à 17h30 d’appeler Marie", reminder("appeler Marie", "2026-12-06T17:30")),
        # "8h" is the 24-hour clock: eight in the morning
        ("rappelle-moi à 8h de sortir le chien", reminder("sortir le chien", "2026-12-07T08:00")),
        (
            "rappelle-moi demain à 8h de sortir les poubelles",
            reminder("sortir les poubelles", "2026-12-07T08:00"),
        ),
        (
            "rappelle-moi ce soir de sortir le chien",
            reminder("sortir le chien", "2026-12-06T20:00"),
        ),
        ("rappelle-moi le 17 mars de payer", reminder("payer", "2027-03-17T09:00")),
        ("rappelle-moi plus tard d'appeler Marie", Unreadable("appeler Marie")),
        ("rappelle-moi à 31h d'appeler Marie", Unreadable("appeler Marie")),
    ],
)
def test_french(words: str, expected: Wanted | Unreadable) -> None:
    assert read_schedule(words, NOW) == expected


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("erinnere mich in 20 Minuten an den Kuchen", reminder("den Kuchen", "2026-12-06T14:20")),
        (
            "erinnere mich in einer halben Stunde an den Kuchen",
            reminder("den Kuchen", "2026-12-06T14:30"),
        ),
        ("erinnere mich um 17 Uhr an den Anruf", reminder("den Anruf", "2026-12-06T17:00")),
        ("erinnere mich an den Anruf um 17:30 Uhr", reminder("den Anruf", "2026-12-06T17:30")),
        ("erinnere mich morgen um 8 an den Müll", reminder("den Müll", "2026-12-07T08:00")),
        (
            "erinnere mich bitte morgen um 8 daran, Milch zu kaufen",
            reminder("Milch zu kaufen", "2026-12-07T08:00"),
        ),
        ("erinnere mich am Montag um 9 an die Miete", reminder("die Miete", "2026-12-07T09:00")),
        ("erinnere mich am 17. März an die Steuer", reminder("die Steuer", "2027-03-17T09:00")),
        ("erinnere mich später an den Anruf", Unreadable("den Anruf")),
        ("erinnere mich um 25 Uhr an den Anruf", Unreadable("den Anruf")),
    ],
)
def test_german(words: str, expected: Wanted | Unreadable) -> None:
    assert read_schedule(words, NOW) == expected
