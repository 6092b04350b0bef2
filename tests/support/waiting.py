"""Waiting for state another task or process writes, where there is no event to await.

`eventually` polls a check until it gives something truthy, and returns that; past the timeout it
fails naming what was awaited and the last thing the check gave, so a failure reads as the
behaviour that did not happen. `eventually_blocking` is the same for tests without an event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

TIMEOUT_S = 10.0
EVERY_S = 0.05
SHOWN_CHARS = 500  # of the last value, in the failure message


def _not_in_time(awaiting: str, timeout_s: float, last: object) -> AssertionError:
    shown = repr(last)
    if len(shown) > SHOWN_CHARS:
        shown = shown[:SHOWN_CHARS] + "..."
    return AssertionError(f"not within {timeout_s} s: {awaiting} (last seen: {shown})")


async def eventually(
    check: Callable[[], T | Awaitable[T]],
    awaiting: str,
    *,
    timeout_s: float = TIMEOUT_S,
    every_s: float = EVERY_S,
) -> T:
    """The first truthy value `check` gives (it may be a coroutine function)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise _not_in_time(awaiting, timeout_s, found)
        await asyncio.sleep(every_s)


def eventually_blocking(
    check: Callable[[], T],
    awaiting: str,
    *,
    timeout_s: float = TIMEOUT_S,
    every_s: float = EVERY_S,
) -> T:
    """The first truthy value `check` gives, blocking the thread while it waits."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise _not_in_time(awaiting, timeout_s, found)
        time.sleep(every_s)
