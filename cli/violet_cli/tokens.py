"""Tokens signed with the local stack's secret (`VIOLET_SECRET`, or the one in `VIOLET_HOME`), and
the operator's, signed with the operator secret (`VIOLET_OPERATOR_SECRET`, or the one there).

Without `VIOLET_HOME`, the stack's folder is found wherever the command runs: `./var` when the
current folder holds a stack, else the `var` beside this checkout (where `make run` keeps it).
"""

from __future__ import annotations

import os
from pathlib import Path

from violet.identity import (
    OPERATOR_SECRET_FILE,
    OPERATOR_TOKEN_TTL_S,
    issue_internal_token,
    issue_token,
    resolve_operator_secret,
    resolve_secret,
)
from violet.settings import CommonSettings, load_settings

CHECKOUT_HOME = Path(__file__).resolve().parents[2] / "var"


class NoLocalStack(Exception):
    """No secret of a local stack was found, and none may be made."""


def local_token(person: str, create: bool = True, internal: bool = False) -> str:
    """A device token for `person`; with `internal`, a token the internal gRPC services accept
    for an hour, for an operator calling them with grpcurl. `create` makes the secret when no
    stack has run yet (the stack started later uses the same one); without it, a missing secret
    is an error."""
    settings = load_settings(CommonSettings)
    secret = settings.secret or stack_secret(settings.home, create)
    if internal:
        return issue_internal_token(person, secret, OPERATOR_TOKEN_TTL_S)
    return issue_token(person, secret)


def stack_secret(configured: Path, create: bool) -> str:
    home = stack_home(configured)
    if not (home / "secret").exists() and not create:
        raise _never_ran(home)
    return resolve_secret("", home)


def stack_operator_secret(configured: Path) -> str:
    """The local stack's operator secret; never made here (the session makes it)."""
    home = stack_home(configured)
    if not (home / OPERATOR_SECRET_FILE).exists():
        raise _never_ran(home)
    return resolve_operator_secret("", home)


def _never_ran(home: Path) -> NoLocalStack:
    return NoLocalStack(
        f"Violet can't be reached: she has never run in {home.resolve()}. Start her with "
        "`make run` in Violet's folder, or run this command from there."
    )


def stack_home(configured: Path) -> Path:
    if "VIOLET_HOME" in os.environ or (configured / "secret").exists():
        return configured
    if (CHECKOUT_HOME / "secret").exists():
        return CHECKOUT_HOME
    return configured
