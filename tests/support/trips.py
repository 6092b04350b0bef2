"""Counting a database's trips in a test: the work of each `Database.run`, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

from violet.database import Database

T = TypeVar("T")


def trips_of(db: Database, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The work of each `db.run` from now on, by name, in order."""
    trips: list[str] = []
    run = db.run

    async def counted(work: Callable[..., T], *args: object) -> T:
        trips.append(work.__name__)
        return await run(work, *args)

    monkeypatch.setattr(db, "run", counted)
    return trips
