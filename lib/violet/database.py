"""SQL storage shared by the services: URLs, engines and Alembic migrations applied at start.

Each service keeps its own tables and its own Alembic history (its own version table), so the
services can share one PostgreSQL database or use one each.

On PostgreSQL the URL's user owns the tables and runs the migrations; each service then logs in
as its own role (`violet_session`, `violet_memory`, ...): no superuser, no BYPASSRLS, not the
owner, with only the grants its migrations give it. Every table that holds a person's rows has
row-level security forced, and every transaction names the person it works for (the one set by
`violet.identity.acting_for`), so a transaction that names nobody sees none of those rows.
Work that spans people finds who has something due through the owner's narrow scan functions
(`violet.row_security`), then does it with that person named.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, cast

from alembic import command
from alembic.config import Config
from psycopg import sql
from sqlalchemy import MetaData, Table, event, text
from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, CursorResult, Result, Row, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql import Select

from violet.identity import current_person
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


def service_role(service: str) -> str:
    """The login role a service's connections use on PostgreSQL."""
    return f"violet_{service}"


def application_name(service: str) -> str:
    return f"violet-{service}"


def service_url(settings: CommonSettings, service: str) -> URL:
    """Where the service's own connections go: on PostgreSQL the URL's database, logged in as
    the service's role and named after the service in `pg_stat_activity`; SQLite as it is."""
    url = sync_url(settings, service)
    if not is_postgres(url):
        return url
    return url.set(
        username=service_role(service), password=settings.database_service_password or None
    ).update_query_dict({"application_name": application_name(service)})


def service_engine(settings: CommonSettings, service: str) -> AsyncEngine:
    """The engine a service works through (its role, its pool sizes)."""
    return open_engine(
        service_url(settings, service),
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_max_overflow,
    )


def async_url(url: URL) -> URL:
    return url.set(drivername="sqlite+aiosqlite") if url.drivername == "sqlite" else url


def is_postgres(url: URL) -> bool:
    return url.get_backend_name() == "postgresql"


def migrate(
    url: URL, migrations_package: str, version_table: str, service_password: str = ""
) -> None:
    """Brings the service's tables up to date (idempotent; safe on every start). On PostgreSQL
    it first makes (or corrects) the service's login role; the migrations grant it what it
    needs. The service is the package the migrations belong to."""
    service = migrations_package.partition(".")[0]
    config = Config()
    location = resources.files(migrations_package)
    config.set_main_option("script_location", str(Path(str(location))))
    if is_postgres(url):
        url = url.update_query_dict({"application_name": application_name(f"{service}-migrate")})
    config.attributes["url"] = url  # not an ini option: URLs may hold '%'
    config.attributes["version_table"] = version_table
    config.attributes["service_role"] = service_role(service)
    config.attributes["service_password"] = service_password
    command.upgrade(config, "head")


def migrate_service(settings: CommonSettings, service: str) -> None:
    """`migrate` for a service that keeps its migrations in `SERVICE.migrations` and their
    version in `alembic_version_SERVICE`, on its configured database."""
    migrate(
        sync_url(settings, service),
        f"{service}.migrations",
        f"alembic_version_{service}",
        settings.database_service_password,
    )


def open_engine(url: URL, pool_size: int = 5, max_overflow: int = 5) -> AsyncEngine:
    # A failed statement's error names its statement, never its values: those are people's
    # words and names, and errors end in logs. A pooled connection to a server is checked
    # before use (the server may have restarted or a proxy dropped it); one to a local SQLite
    # file cannot go stale, and the check cost a third of a small read's CPU.
    engine = create_async_engine(
        async_url(url),
        pool_pre_ping=url.drivername != "sqlite",
        pool_size=pool_size,
        max_overflow=max_overflow,
        hide_parameters=True,
    )
    if url.drivername == "sqlite":
        event.listen(engine.sync_engine, "connect", _tune_sqlite)
    if is_postgres(url):
        event.listen(engine.sync_engine, "begin", _name_the_person)
    return engine


def _name_the_person(connection: Connection) -> None:
    # Every transaction names its person, or names nobody: a pooled connection never carries
    # the last transaction's person (the setting is local to the transaction anyway).
    connection.exec_driver_sql(
        "SELECT set_config('app.person_id', %(person)s, true)", {"person": current_person()}
    )


async def across_people(
    db: AsyncSession, scan: str, fallback: Select[Any], **arguments: object
) -> list[Row[Any]]:
    """The ids and people of rows due for work that spans people, for the caller to do person
    by person. On PostgreSQL only the owner's `scan` function sees past row-level security; on
    SQLite (one process, no roles) the same question is the `fallback` query."""
    if db.get_bind().dialect.name != "postgresql":
        return list(await db.execute(fallback))
    names = ", ".join(f":{name}" for name in arguments)
    return list(await db.execute(text(f"SELECT * FROM {scan}({names})"), arguments))


def _tune_sqlite(connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    # WAL lets readers work beside the one writer; replicas in other processes wait, not fail.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def conflict_insert(table: Table, *, postgres: bool) -> SqliteInsert | PostgresInsert:
    """An INSERT that can say what to do on a conflict (`on_conflict_do_update`/`_nothing`),
    in the dialect of the backend: PostgreSQL's or SQLite's, which spell it alike."""
    return (postgres_insert if postgres else sqlite_insert)(table)


def is_postgres_session(db: AsyncSession) -> bool:
    return db.get_bind().dialect.name == "postgresql"


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
                ensure_login_role(
                    connection,
                    config.attributes["service_role"],
                    config.attributes.get("service_password", ""),
                )
            context.run_migrations()
    engine.dispose()


def ensure_login_role(connection: Connection, role: str, password: str) -> None:
    """Makes the service's role, able to log in and to nothing more (no superuser, no BYPASSRLS,
    no CREATEROLE or CREATEDB). Needs CREATEROLE, unless an operator made the role already."""
    state = connection.execute(
        text(
            "SELECT rolcanlogin AS can_login,"
            " rolsuper OR rolbypassrls OR rolcreaterole OR rolcreatedb AS mighty"
            " FROM pg_roles WHERE rolname = :role"
        ),
        {"role": role},
    ).first()
    may_manage = connection.execute(
        text("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user")
    ).scalar()
    if state is not None and state.mighty:
        raise SystemExit(
            f"PostgreSQL role {role} may do more than log in (superuser, BYPASSRLS, CREATEROLE or "
            f"CREATEDB); the service's role must not"
        )
    if (state is None or not state.can_login) and not may_manage:
        raise SystemExit(
            f"PostgreSQL role {role} is missing or cannot log in, and the migrating user may not "
            f"create roles: give it CREATEROLE, or make the role as docs/operations.md shows"
        )
    quoted = connection.dialect.identifier_preparer.quote(role)
    if state is None:
        # Roles belong to the whole cluster: another database's migration may make it meanwhile.
        connection.exec_driver_sql(
            f"""
            DO $$
            BEGIN
                CREATE ROLE {quoted} LOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$
            """
        )
    elif not state.can_login:
        connection.exec_driver_sql(f"ALTER ROLE {quoted} LOGIN")
    if password and may_manage:
        statement = sql.SQL("ALTER ROLE {} PASSWORD {}").format(
            sql.Identifier(role), sql.Literal(password)
        )
        connection.connection.cursor().execute(statement)  # no placeholders: '%' stays itself
