"""The rules of time a reminder keeps: wall-clock times in its zone across daylight-saving
changes both ways, a nonexistent wall time at the moment the clocks read it an hour on, an
ambiguous one once, weekly days, the shortest repeat, calendar dates that do not exist, one-off
times just gone, rules that never come, and missed occurrences skipped rather than caught up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from session.reminders.times import Schedule, TimeRefused, schedule, wall_time

LA, LISBON, AUCKLAND = "America/Los_Angeles", "Europe/Lisbon", "Pacific/Auckland"
DAILY = "FREQ=DAILY"


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, s: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, s, tzinfo=UTC)


def following(found: Schedule, now: datetime, count: int) -> list[datetime]:
    """The first occurrence set at `now` and the `count - 1` after it, each after the last."""
    moments = [found.first(now)]
    while len(moments) < count:
        after = found.next_after(moments[-1])
        assert after is not None
        moments.append(after)
    return moments


def local(moment: datetime, zone: str) -> str:
    return wall_time(moment, zone).strftime("%Y-%m-%d %H:%M")


def refused(at: str, repeat: str = "", zone: str = LISBON) -> str:
    with pytest.raises(TimeRefused) as caught:
        schedule(at, zone, repeat)
    return caught.value.kind


def test_a_one_off_in_auckland_comes_at_that_wall_time_there() -> None:
    found = schedule("2026-12-07T09:00", AUCKLAND)
    # New Zealand summer time: UTC+13, so the day before in UTC.
    assert found.first(utc(2026, 12, 6, 12)) == utc(2026, 12, 6, 20)


def test_a_one_off_in_los_angeles_comes_at_that_wall_time_there() -> None:
    found = schedule("2026-12-06T17:00", LA)
    assert found.first(utc(2026, 12, 6, 12)) == utc(2026, 12, 7, 1)
    assert found.next_after(utc(2026, 12, 7, 1)) is None


@pytest.mark.parametrize(
    ("zone", "at", "gap"),
    [
        (LA, "2027-03-13T21:00", timedelta(hours=23)),  # spring forward on the 14th
        (LA, "2026-10-31T21:00", timedelta(hours=25)),  # fall back on 1 November
        (LISBON, "2027-03-27T21:00", timedelta(hours=23)),  # forward on the 28th
        (LISBON, "2026-10-24T21:00", timedelta(hours=25)),  # back on the 25th
        (AUCKLAND, "2026-09-26T21:00", timedelta(hours=23)),  # forward on the 27th
        (AUCKLAND, "2027-04-03T21:00", timedelta(hours=25)),  # back on 4 April
    ],
)
def test_every_day_at_21_stays_21_local_across_a_daylight_saving_change(
    zone: str, at: str, gap: timedelta
) -> None:
    found = schedule(at, zone, DAILY)
    moments = following(found, utc(2026, 1, 1), 3)
    assert [wall_time(m, zone).strftime("%H:%M") for m in moments] == ["21:00"] * 3
    assert moments[1] - moments[0] == gap
    assert moments[2] - moments[1] == timedelta(hours=24)


def test_a_nonexistent_wall_time_comes_when_the_clocks_read_an_hour_on() -> None:
    # 2027-03-14 in Los Angeles: clocks jump from 02:00 to 03:00, so 02:30 never shows.
    found = schedule("2027-03-14T02:30", LA)
    due = found.first(utc(2027, 3, 14))
    assert local(due, LA) == "2027-03-14 03:30"
    assert due == utc(2027, 3, 14, 10, 30)


def test_a_daily_wall_time_that_does_not_exist_one_day_comes_an_hour_on_that_day_only() -> None:
    found = schedule("2027-03-13T02:30", LA, DAILY)
    moments = following(found, utc(2027, 3, 13), 3)
    assert [local(m, LA) for m in moments] == [
        "2027-03-13 02:30",
        "2027-03-14 03:30",
        "2027-03-15 02:30",
    ]


def test_an_ambiguous_one_off_on_the_fall_back_day_comes_the_first_time_only() -> None:
    # 2026-11-01 in Los Angeles: 01:30 happens in PDT (08:30 UTC), then again in PST.
    found = schedule("2026-11-01T01:30", LA)
    due = found.first(utc(2026, 11, 1))
    assert due == utc(2026, 11, 1, 8, 30)
    assert found.next_after(due) is None


def test_a_daily_ambiguous_wall_time_comes_once_on_the_fall_back_day() -> None:
    found = schedule("2026-10-31T01:30", LA, DAILY)
    moments = following(found, utc(2026, 10, 31), 3)
    assert moments[1:] == [utc(2026, 11, 1, 8, 30), utc(2026, 11, 2, 9, 30)]
    # Asked from inside the repeated hour (01:00 PST), the second 01:30 is not another.
    assert found.next_after(utc(2026, 11, 1, 9)) == utc(2026, 11, 2, 9, 30)


def test_weekly_on_several_days_comes_on_those_days_only() -> None:
    # Set on a Sunday for Monday, Wednesday and Friday: the Sunday start is not one of them.
    found = schedule("2026-12-06T08:00", LISBON, "FREQ=WEEKLY;BYDAY=MO,WE,FR")
    moments = following(found, utc(2026, 12, 6, 12), 5)
    assert [wall_time(m, LISBON).strftime("%a %d %H:%M") for m in moments] == [
        "Mon 07 08:00",
        "Wed 09 08:00",
        "Fri 11 08:00",
        "Mon 14 08:00",
        "Wed 16 08:00",
    ]


def test_every_15_minutes_is_allowed() -> None:
    found = schedule("2026-12-06T09:00", LISBON, "FREQ=MINUTELY;INTERVAL=15")
    moments = following(found, utc(2026, 12, 6, 8), 3)
    assert [m - moments[0] for m in moments] == [timedelta(minutes=m) for m in (0, 15, 30)]


@pytest.mark.parametrize(
    "repeat",
    [
        "FREQ=MINUTELY;INTERVAL=10",
        "FREQ=MINUTELY",
        "FREQ=SECONDLY",
        "FREQ=SECONDLY;INTERVAL=3600",  # an hour apart, still refused by its frequency
        "FREQ=HOURLY;BYMINUTE=0,5",
        "FREQ=DAILY;BYHOUR=9;BYMINUTE=0,5",
    ],
)
def test_a_repeat_more_often_than_15_minutes_is_refused(repeat: str) -> None:
    assert refused("2026-12-06T09:00", repeat) == "too_often"


@pytest.mark.parametrize("at", ["2027-02-30T09:00", "2026-13-01T09:00", "2026-12-06T25:00"])
def test_a_date_or_hour_not_on_the_calendar_is_impossible(at: str) -> None:
    assert refused(at) == "impossible"


@pytest.mark.parametrize(
    "at",
    ["tomorrow at 9", "2026-12-06 09:00", "2026-12-6T09:00", "2026-12-06T09:00Z", "", "09:00"],
)
def test_a_malformed_time_is_unreadable(at: str) -> None:
    assert refused(at) == "unreadable"


@pytest.mark.parametrize(
    "repeat",
    ["FREQ=FORTNIGHTLY", "BYDAY=MO", "FREQ=WEEKLY;BYDAY=XX", "FREQ=DAILY;DTSTART=20260101T000000"],
)
def test_a_rule_that_cannot_be_read_is_unreadable(repeat: str) -> None:
    assert refused("2026-12-06T09:00", repeat) == "unreadable"


def test_a_past_one_off_is_refused() -> None:
    with pytest.raises(TimeRefused) as caught:
        schedule("2026-12-06T13:58", "UTC").first(utc(2026, 12, 6, 14, 0, 30))
    assert caught.value.kind == "past"
    assert caught.value.reason == "That time has already passed."


def test_a_one_off_in_the_last_minute_is_due_at_once() -> None:
    now = utc(2026, 12, 6, 14, 0, 30)
    assert schedule("2026-12-06T14:00", "UTC").first(now) == now


def test_an_until_already_passed_when_set_is_refused_as_never() -> None:
    # Passed before its own start: no occurrence at all.
    assert refused("2026-12-06T09:00", "FREQ=DAILY;UNTIL=20261201T000000") == "never"


def test_an_until_passed_by_now_is_refused_as_never() -> None:
    found = schedule("2026-12-01T09:00", "UTC", "FREQ=DAILY;UNTIL=20261203T000000")
    with pytest.raises(TimeRefused) as caught:
        found.first(utc(2026, 12, 6))
    assert caught.value.kind == "never"


def test_a_count_ends_the_reminder() -> None:
    found = schedule("2026-12-06T09:00", "UTC", "FREQ=DAILY;COUNT=2")
    first, second = following(found, utc(2026, 12, 6), 2)
    assert found.next_after(second) is None


def test_next_after_a_gap_of_days_is_the_next_after_now_not_the_first_missed() -> None:
    found = schedule("2026-12-01T09:00", LISBON, DAILY)
    assert found.next_after(utc(2026, 12, 6, 12)) == utc(2026, 12, 7, 9)


def test_a_yearly_rule_from_a_leap_day_comes_on_leap_days_only() -> None:
    # dateutil's reading of RFC 5545: a 29 February that a year lacks is skipped, not moved.
    found = schedule("2028-02-29T09:00", "UTC", "FREQ=YEARLY")
    assert following(found, utc(2028, 2, 1), 2) == [utc(2028, 2, 29, 9), utc(2032, 2, 29, 9)]
    assert found.first(utc(2029, 1, 1)) == utc(2032, 2, 29, 9)


@pytest.mark.parametrize("repeat", ["FREQ=DAILY;INTERVAL=-1", "FREQ=MINUTELY;INTERVAL=-5"])
def test_a_negative_interval_is_refused_not_raised(repeat: str) -> None:
    assert refused("2026-12-06T09:00", repeat) == "unreadable"
