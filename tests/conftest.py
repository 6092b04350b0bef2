"""Registers the shared fixtures: a whole Violet stack of real processes, on SQLite and PostgreSQL,
with the offline model and with the Anthropic client against a local Messages API server. The
helpers themselves live in `tests.support`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.stack import Stack, running_stack

STACK_VARIANTS = ["sqlite-offline", "postgres-offline", "sqlite-anthropic", "postgres-anthropic"]


@pytest.fixture(scope="session", params=STACK_VARIANTS)
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """All five services, started once per variant for the tests that can share them."""
    database, model = request.param.split("-")
    home = tmp_path_factory.mktemp(f"violet-{request.param}")
    with running_stack(home, database, model) as started:
        yield started
