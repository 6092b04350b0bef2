from __future__ import annotations

import pytest

from session.settings import SessionSettings
from violet.settings import SettingsError, load_settings


def test_the_window_defaults_to_30(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIOLET_WINDOW", raising=False)
    assert load_settings(SessionSettings).window == 30


@pytest.mark.parametrize("window", ["19", "51", "many"])
def test_a_window_outside_20_to_50_stops_the_service_with_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], window: str
) -> None:
    monkeypatch.setenv("VIOLET_WINDOW", window)
    with pytest.raises(SettingsError):
        load_settings(SessionSettings)
    assert "VIOLET_WINDOW" in capsys.readouterr().err


@pytest.mark.parametrize("zone", ["Europe/Lisbon", "Pacific/Auckland", "UTC"])
def test_the_default_time_zone_is_an_iana_name(monkeypatch: pytest.MonkeyPatch, zone: str) -> None:
    monkeypatch.setenv("VIOLET_TIMEZONE", zone)
    assert load_settings(SessionSettings).timezone == zone


@pytest.mark.parametrize("zone", ["CET+1", "Lisbon", "+01:00"])
def test_any_other_default_time_zone_stops_the_session_saying_which_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], zone: str
) -> None:
    monkeypatch.setenv("VIOLET_TIMEZONE", zone)
    with pytest.raises(SettingsError):
        load_settings(SessionSettings)
    said = capsys.readouterr().err
    assert "VIOLET_TIMEZONE" in said and "IANA" in said


def test_a_short_operator_secret_stops_the_session(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VIOLET_OPERATOR_SECRET", "too-short")
    with pytest.raises(SettingsError):
        load_settings(SessionSettings)
    assert "the operator secret needs at least 32 characters" in capsys.readouterr().err
    monkeypatch.setenv("VIOLET_OPERATOR_SECRET", "x" * 32)
    assert load_settings(SessionSettings).operator_secret == "x" * 32
