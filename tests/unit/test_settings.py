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
