"""Shared fixtures: a whole Violet stack of real processes, on SQLite and PostgreSQL, with the
offline model and with the Anthropic client against a local Messages API server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.messages_api import MessagesAPIProcess
from tests.support.postgres import fresh_schema
from tests.support.stack import Stack

STACK_VARIANTS = ["sqlite-offline", "postgres-offline", "sqlite-anthropic", "postgres-anthropic"]


@contextlib.contextmanager
def running_stack(
    home: Path, database: str, model: str = "offline", env: dict[str, str] | None = None
) -> Iterator[Stack]:
    with contextlib.ExitStack() as cleanup:
        extra = dict(env or {})
        api = None
        if database == "postgres":
            extra["VIOLET_DATABASE_URL"] = cleanup.enter_context(fresh_schema())
        if model == "anthropic":
            api = MessagesAPIProcess().start()
            cleanup.callback(api.stop)
            extra.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        stack = Stack(home, extra_env=extra, model_api=api)
        cleanup.callback(stack.stop)
        stack.start()
        yield stack


@pytest.fixture(scope="session", params=STACK_VARIANTS)
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """All five services, started once per variant for the tests that can share them."""
    database, model = request.param.split("-")
    home = tmp_path_factory.mktemp(f"violet-{request.param}")
    with running_stack(home, database, model) as started:
        yield started
