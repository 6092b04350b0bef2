"""Registers the shared fixtures: a whole Violet stack of real processes, on SQLite and PostgreSQL,
with the offline model and with the Anthropic client against a local Messages API server; and the
suite-wide check that no fallback fires in a test that does not make one fire on purpose
(`@pytest.mark.expects_fallbacks`). The helpers themselves live in `tests.support`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.stack import STACKS, Stack, running_stack
from violet import fallbacks

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


@pytest.fixture(autouse=True)
def no_silent_fallbacks(request: pytest.FixtureRequest) -> Iterator[None]:
    """A fallback (`violet.fallbacks`) fired in this process or logged by a stack's services
    fails the test, unless the test is about one."""
    counted = fallbacks.counts()
    logged = {id(stack): stack.log_sizes() for stack in STACKS}
    yield
    if request.node.get_closest_marker("expects_fallbacks"):
        return
    fired = [f"{kind} x{n}" for kind, n in (fallbacks.counts() - counted).items()]
    for stack in STACKS:
        fired += stack.fallbacks_since(logged.get(id(stack), {}))
    assert not fired, "fallbacks fired on the happy path:\n" + "\n".join(fired)
