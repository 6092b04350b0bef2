"""The session service's tables, migrated by their owner, on SQLite or PostgreSQL; the
service's engine then logs in as its own role on PostgreSQL, under row-level security."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from tests.support.postgres import fresh_schema
from violet import database
from violet.settings import CommonSettings


@contextlib.contextmanager
def session_settings(backend: str, folder: Path) -> Iterator[CommonSettings]:
    if backend == "sqlite":
        settings = CommonSettings(database_url=f"sqlite:///{folder / 'session.db'}")
        database.migrate_service(settings, "session")
        yield settings
        return
    with fresh_schema() as url:
        settings = CommonSettings(database_url=url)
        database.migrate_service(settings, "session")
        yield settings
