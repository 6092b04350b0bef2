"""The person's time zone: IANA names only, and the moment there, daylight saving both ways."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from violet.zones import is_zone, local_moment, spoken, zone


@pytest.mark.parametrize("name", ["Europe/Lisbon", "Asia/Kolkata", "Pacific/Chatham", "UTC"])
def test_iana_names_are_zones(name: str) -> None:
    assert is_zone(name)


@pytest.mark.parametrize(
    "name", ["", "Lisbon", "CEST", "+05:30", "UTC ", "/etc/localtime", 3, None]
)
def test_anything_else_is_not(name: object) -> None:
    assert not is_zone(name)


def test_a_name_no_longer_known_falls_back_to_the_default() -> None:
    assert zone("Atlantis/Capital", "Europe/Lisbon").key == "Europe/Lisbon"
    assert zone(None).key == "UTC"


def test_the_clock_reads_local_time_across_daylight_saving_both_ways() -> None:
    # Lisbon moves from UTC+0 to UTC+1 at 01:00 UTC on 29 March 2026, and back on 25 October.
    assert local_moment(datetime(2026, 3, 29, 0, 59, tzinfo=UTC), "Europe/Lisbon").hour == 0
    assert local_moment(datetime(2026, 3, 29, 1, 0, tzinfo=UTC), "Europe/Lisbon").hour == 2
    assert local_moment(datetime(2026, 10, 25, 0, 59, tzinfo=UTC), "Europe/Lisbon").hour == 1
    assert local_moment(datetime(2026, 10, 25, 1, 0, tzinfo=UTC), "Europe/Lisbon").hour == 1


def test_the_model_is_told_weekday_date_time_and_zone() -> None:
    moment = local_moment(datetime(2026, 12, 6, 10, 5, tzinfo=UTC), "Pacific/Auckland")
    assert spoken(moment) == "Sunday 6 December 2026, 23:05 (Pacific/Auckland)"
    moment = local_moment(datetime(2026, 12, 6, 10, 5, tzinfo=UTC), "America/Los_Angeles")
    assert spoken(moment) == "Sunday 6 December 2026, 02:05 (America/Los_Angeles)"
