"""Tokens signed with the local stack's secret (`VIOLET_SECRET`, or the one in `VIOLET_HOME`)."""

from __future__ import annotations

from violet.identity import (
    OPERATOR_TOKEN_TTL_S,
    issue_internal_token,
    issue_token,
    resolve_secret,
)
from violet.settings import CommonSettings, load_settings


def local_token(person: str, internal: bool = False) -> str:
    """A device token for `person`; with `internal`, a token the internal gRPC services accept
    for an hour, for an operator calling them with grpcurl."""
    settings = load_settings(CommonSettings)
    secret = resolve_secret(settings.secret, settings.home)
    if internal:
        return issue_internal_token(person, secret, OPERATOR_TOKEN_TTL_S)
    return issue_token(person, secret)
