"""Registers the shared fixtures: a whole Violet stack of real processes, on SQLite and PostgreSQL,
with the offline model and with the Anthropic client against a local Messages API server; and the
suite-wide checks that no fallback fires (`@pytest.mark.expects_fallbacks` where one must) and
that the local Messages API refuses no request (`@pytest.mark.expects_rejections` where it
must). The helpers themselves live in `tests.support`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.messages_api import MessagesAPI
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


@pytest.fixture(autouse=True)
def no_rejected_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """A request the local Messages API refuses by a documented rule of the models fails the
    test (in-process servers and every stack's), unless the test sends one on purpose."""
    servers: list[MessagesAPI] = []
    if "messages_api_server" in request.fixturenames:
        servers.append(request.getfixturevalue("messages_api_server"))
    before = [len(server.rejections()) for server in servers]
    known = {id(stack): _refused(stack) for stack in STACKS if stack.model_api}
    yield
    if request.node.get_closest_marker("expects_rejections"):
        return
    refused = [
        f"{record.body.get('model')}: {record.rejected}"
        for server, count in zip(servers, before, strict=True)
        for record in server.rejections()[count:]
    ]
    for stack in STACKS:
        if stack.model_api:
            fresh = _refused(stack)[len(known.get(id(stack), [])) :]
            refused += [f"{r['body'].get('model')}: {r['rejected']}" for r in fresh]
    assert not refused, "the local Messages API refused requests:\n" + "\n".join(refused)


def _refused(stack: Stack) -> list[dict]:
    assert stack.model_api is not None
    return stack.model_api.rejections()
