"""The test suite's one way to wait for state: the first truthy value, or a failure that names
what was awaited and what was seen last."""

from __future__ import annotations

import pytest

from tests.support.waiting import eventually, eventually_blocking


async def test_eventually_returns_the_first_truthy_value_of_a_sync_or_async_check() -> None:
    seen = iter([[], [], ["ready"]])
    assert await eventually(lambda: next(seen), "the third value", every_s=0) == ["ready"]

    async def counted() -> int:
        counted.calls += 1  # type: ignore[attr-defined]
        return counted.calls if counted.calls >= 2 else 0  # type: ignore[attr-defined]

    counted.calls = 0  # type: ignore[attr-defined]
    assert await eventually(counted, "the second call", every_s=0) == 2


async def test_eventually_fails_naming_what_was_awaited_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"not within 0.05 s: the reply \(last seen: \[\]\)"):
        await eventually(lambda: [], "the reply", timeout_s=0.05, every_s=0.01)


def test_eventually_blocking_waits_and_fails_alike() -> None:
    seen = iter([0, 0, 3])
    assert eventually_blocking(lambda: next(seen), "a count", every_s=0) == 3
    with pytest.raises(AssertionError, match="not within 0.05 s: a row"):
        eventually_blocking(lambda: None, "a row", timeout_s=0.05, every_s=0.01)
