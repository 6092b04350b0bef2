"""Tokens signed with the local stack's secret (`VIOLET_SECRET`, or the one in `VIOLET_HOME`)."""

from __future__ import annotations

from violet.identity import issue_token, resolve_secret
from violet.settings import CommonSettings, load_settings


def local_token(person: str) -> str:
    settings = load_settings(CommonSettings)
    return issue_token(person, resolve_secret(settings.secret, settings.home))
