"""Shared fixtures: a whole Violet stack of real processes, on SQLite and on PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.postgres import fresh_schema
from tests.support.stack import Stack


@contextlib.contextmanager
def running_stack(home: Path, database: str, env: dict[str, str] | None = None) -> Iterator[Stack]:
    with contextlib.ExitStack() as cleanup:
        extra = dict(env or {})
        if database == "postgres":
            extra["VIOLET_DATABASE_URL"] = cleanup.enter_context(fresh_schema())
        stack = Stack(home, extra_env=extra)
        cleanup.callback(stack.stop)
        stack.start()
        yield stack


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """All five services, started once per database for the tests that can share them."""
    home = tmp_path_factory.mktemp(f"violet-{request.param}")
    with running_stack(home, request.param) as started:
        yield started
