"""SQL storage shared by the services: URLs, engines and Alembic migrations applied at start.

Each service keeps its own tables and its own Alembic history (its own version table), so the
services can share one PostgreSQL database or use one each.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import MetaData, event
from sqlalchemy.engine import URL, Connection, CursorResult, Result, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from violet.settings import CommonSettings

SQLITE_BUSY_TIMEOUT_MS = 30_000
# The advisory lock key that serialises migrations (any fixed number; "violet" in ASCII).
MIGRATION_LOCK = 0x76696F6C6574


def sync_url(settings: CommonSettings, service: str) -> URL:
    """The service's database: `VIOLET_DATABASE_URL`, else a SQLite file in `VIOLET_HOME`."""
    if not settings.database_url:
        settings.home.mkdir(parents=True, exist_ok=True)
        return make_url(f"sqlite:///{(settings.home / f'{service}.db').resolve()}")
    url = make_url(settings.database_url)
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        return url.set(drivername="postgresql+psycopg")
    if url.drivername.startswith("sqlite"):
        return url.set(drivername="sqlite")
    raise SystemExit(
        f"VIOLET_DATABASE_URL uses {url.drivername!r}; Violet supports postgresql:// and sqlite://"
    )


def async_url(url: URL) -> URL:
    return url.set(drivername="sqlite+aiosqlite") if url.drivername == "sqlite" else url


def is_postgres(url: URL) -> bool:
    return url.get_backend_name() == "postgresql"


def migrate(url: URL, migrations_package: str, version_table: str) -> None:
    """Brings the service's tables up to date (idempotent; safe on every start)."""
    config = Config()
    location = resources.files(migrations_package)
    config.set_main_option("script_location", str(Path(str(location))))
    config.attributes["url"] = url  # not an ini option: URLs may hold '%'
    config.attributes["version_table"] = version_table
    command.upgrade(config, "head")


def open_engine(url: URL) -> AsyncEngine:
    engine = create_async_engine(async_url(url), pool_pre_ping=True)
    if url.drivername == "sqlite":
        event.listen(engine.sync_engine, "connect", _tune_sqlite)
    return engine


def _tune_sqlite(connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # WAL lets readers work beside the one writer; replicas in other processes wait, not fail.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def rows_changed(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE changed. A session's `execute` is typed as returning a
    plain `Result`; for those statements it is a `CursorResult`, which counts them."""
    return cast(CursorResult[Any], result).rowcount


def sessionmaker(engine: AsyncEngine) -> async_sessionmaker:
    return async_sessionmaker(engine, expire_on_commit=False)


class Alembic(Protocol):
    """What a migration run uses of `alembic.context`: the module that proxies the running
    environment."""

    config: Config

    def configure(
        self,
        *,
        connection: Connection,
        target_metadata: MetaData,
        version_table: str,
        render_as_batch: bool,
    ) -> None: ...

    def begin_transaction(self) -> AbstractContextManager[Any]: ...

    def run_migrations(self) -> None: ...


def run_migrations(context: Alembic, target_metadata: MetaData) -> None:
    """The body of every service's Alembic `env.py` (online mode only)."""
    from sqlalchemy import create_engine, pool

    config = context.config
    engine = create_engine(config.attributes["url"], poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            version_table=config.attributes.get("version_table", "alembic_version"),
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Replicas starting together migrate one after another, not over each other.
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            context.run_migrations()
    engine.dispose()
