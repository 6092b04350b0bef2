"""Ending background tasks, the one way every part does it."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any


async def cancel_all(tasks: Collection[asyncio.Task[Any]]) -> None:
    """Cancels the tasks and waits until each has ended, whatever it ended with."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def end_within(tasks: Collection[asyncio.Task[Any]], grace_s: float) -> None:
    """Lets the tasks finish on their own for up to `grace_s`, then cancels those still running."""
    if tasks:
        await asyncio.wait(tasks, timeout=grace_s)
    await cancel_all(tasks)
