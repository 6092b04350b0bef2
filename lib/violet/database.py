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

A service reaches its database from the event loop either through SQLAlchemy's asyncio engine
(`open_engine`) or through a `Database` (`open_database`): SQLAlchemy's plain connections, each
call handed to a worker thread once. Over aiosqlite the asyncio engine hands every statement to
the connection's thread four or five times (a cursor, the statement, its rows, closing), which
made a session of one read cost 0.74 ms of CPU against 0.42 ms through a `Database`; work given
whole to `Database.run`, any number of statements in one trip, costs 0.3 ms for one read
(docs/benchmarks.md, "Where a turn's CPU goes").
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, asynccontextmanager, suppress
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar, cast

from alembic import command
from alembic.config import Config
from psycopg import sql
from sqlalchemy import Engine, Executable, MetaData, ScalarResult, Table, create_engine, event, text
from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, Connection, CursorResult, Result, Row, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import TimeoutError as PoolTimeout
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

T = TypeVar("T")
# A statement's bound values, by name (a list of them runs it once for each).
Parameters = dict[str, Any] | Sequence[dict[str, Any]] | None

SQLITE_BUSY_TIMEOUT_MS = 30_000
# Times a new file's switch to WAL is asked for while another connection switches it.
WAL_TRIES = 20
# How long a session waits for a connection of the pool (SQLAlchemy's pool waits as long).
POOL_TIMEOUT_S = 30.0
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


def open_database(url: URL, pool_size: int = 5, max_overflow: int = 5) -> Database:
    """A `Database` on `url`, tuned as `open_engine` tunes its engine."""
    sqlite = url.drivername == "sqlite"
    engine = create_engine(
        url,
        pool_pre_ping=not sqlite,
        pool_size=pool_size,
        max_overflow=max_overflow,
        hide_parameters=True,
        # A connection serves one session at a time, on whichever worker thread is free.
        connect_args={"check_same_thread": False} if sqlite else {},
    )
    if sqlite:
        event.listen(engine, "connect", _tune_sqlite)
    if is_postgres(url):
        event.listen(engine, "begin", _name_the_person)
    return Database(engine, pool_size + max_overflow)


def service_database(settings: CommonSettings, service: str) -> Database:
    """The `Database` a service works through (its role, its pool sizes)."""
    return open_database(
        service_url(settings, service),
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_max_overflow,
    )


class Database:
    """A database reached from the event loop: work run whole on a worker thread (`run`,
    `execute`, `scalar`: one trip each), or `Session`s whose calls each make a trip, on a plain
    SQLAlchemy connection. Sessions are used as `async with database() as db` (a read, or
    `db.begin()` for a transaction) or `async with database.begin() as db`; work that needs no
    answer from the event loop between its statements is better given to `run`.

    At most `connections` sessions hold a connection at once, the rest wait on the event loop:
    a worker thread never waits for the pool, so a session that holds a connection always finds
    a thread for its next statement."""

    def __init__(self, engine: Engine, connections: int) -> None:
        self.engine = engine
        self._threads = ThreadPoolExecutor(connections, thread_name_prefix="sql")
        self._free = asyncio.Semaphore(connections)

    def __call__(self) -> Session:
        return Session(self)

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[Session]:
        """A session in a transaction, committed when the block ends without an error."""
        async with self() as db, db.begin():
            yield db

    async def run(self, work: Callable[..., T], *args: object) -> T:
        """`work(connection, *args)` in one transaction, on one trip to a worker thread:
        committed when it returns, rolled back when it raises. For any number of statements
        that belong together, at the cost of one: a session makes a trip for each statement
        and one more to end. `work` returns what it read, complete (rows, not a cursor).

        A caller cancelled before the work starts leaves it undone; once it has started, it
        ends as a whole, committed or rolled back, as though the caller had waited, and the
        cancellation reaches the caller only then: what it does next (its cleanup) comes after
        the work, never beside it."""
        return await self._trip({}, work, *args)

    async def run_through(
        self,
        work: Callable[..., Coroutine[Any, Any, T]],
        *args: object,
        options: dict[str, object] | None = None,
    ) -> T:
        """`work(statements, *args)` in one transaction, on one trip, like `run`: for work
        written against a `Session`'s statements (`Statements`) that awaits nothing else. On
        the worker thread its statements run on the connection and return at once, so the
        coroutine runs to its end without suspending. `options` are the connection's execution
        options, set before it begins."""
        return await self._trip(options or {}, _run_through, work, args)

    async def execute(self, statement: Executable, parameters: Parameters = None) -> Result[Any]:
        """One statement in a transaction of its own, its rows read: one trip."""
        return await self.run(_execute_read, statement, parameters)

    async def scalar(self, statement: Executable, parameters: Parameters = None) -> Any:
        return (await self.execute(statement, parameters)).scalar()

    async def _trip(self, options: dict[str, object], work: Callable[..., T], *args: object) -> T:
        """`work(connection, *args)` in one transaction on a worker thread, once a place is
        free; the place is given back when the work ends, even if the caller stopped waiting."""
        await self.take_place()
        done = self.submit(self._transaction, options, work, *args)
        try:
            return await asyncio.wrap_future(done)
        except asyncio.CancelledError:
            if not done.done():  # begun, so not cancelled with its caller: it ends first
                with suppress(Exception):
                    await asyncio.shield(asyncio.wrap_future(done))
            raise
        finally:
            # A caller that waited frees the place itself, sparing the loop a second wake-up
            # from the thread; one that stopped waiting frees it once the work ends.
            self.free_place_after(None if done.done() else done)

    def _transaction(self, options: dict[str, object], work: Callable[..., T], *args: object) -> T:
        with self.engine.connect() as connection:
            if options:
                connection.execution_options(**options)
            with connection.begin():
                return work(connection, *args)

    def submit(self, call: Callable[..., T], *args: object) -> Future[T]:
        """`call(*args)` on a worker thread, with the caller's context (the person a
        transaction names, the current span)."""
        return self._threads.submit(contextvars.copy_context().run, call, *args)

    async def take_place(self) -> None:
        """Waits until fewer than `connections` sessions hold a connection."""
        if not self._free.locked():
            await self._free.acquire()  # a place is free: taken at once, no timer set
            return
        try:
            await asyncio.wait_for(self._free.acquire(), POOL_TIMEOUT_S)
        except TimeoutError:
            waited = f"{POOL_TIMEOUT_S:.0f} s"
            raise PoolTimeout(f"no database connection came free in {waited}") from None

    def free_place_after(self, closing: Future[Any] | None) -> None:
        """Frees a session's place once its connection is closed (`closing` is done)."""
        if closing is None:
            self._free.release()
            return
        loop = asyncio.get_running_loop()
        closing.add_done_callback(lambda _: loop.call_soon_threadsafe(self._free.release))

    async def dispose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._dispose)

    def _dispose(self) -> None:
        self._threads.shutdown(wait=True)
        self.engine.dispose()


class _Reading:
    """`scalar` and `scalars` on top of a class's `execute`."""

    async def execute(self, statement: Executable, parameters: Parameters = None) -> Result[Any]:
        raise NotImplementedError

    async def scalar(self, statement: Executable, parameters: Parameters = None) -> Any:
        return (await self.execute(statement, parameters)).scalar()

    async def scalars(
        self, statement: Executable, parameters: Parameters = None
    ) -> ScalarResult[Any]:
        return (await self.execute(statement, parameters)).scalars()


class Session(_Reading):
    """One connection's statements, in order, for one task. Rows are read on the worker thread,
    so a result is complete when it is returned. Without `begin()`, what it did is rolled back
    when it closes."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._placed = False
        # Opened by the first statement, on its worker thread.
        self._connection: Connection | None = None
        # The last call handed to a thread: a cancelled caller's call may still be running, and
        # the connection must not be used by two threads at once.
        self._pending: Future[Any] | None = None

    def get_bind(self) -> Engine:
        return self._database.engine

    async def execute(self, statement: Executable, parameters: Parameters = None) -> Result[Any]:
        if not self._placed:
            await self._database.take_place()
            self._placed = True
        await self._settled()
        self._pending = self._database.submit(self._execute, statement, parameters)
        return cast(Result[Any], await asyncio.wrap_future(self._pending))

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[Session]:
        """Commits what the block did when it ends without an error, else rolls it back."""
        try:
            yield self
        except BaseException:
            await self._finish(Connection.rollback)
            raise
        await self._finish(Connection.commit)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._finish(Connection.close)

    def _execute(self, statement: Executable, parameters: Parameters) -> Result[Any]:
        """On the worker thread: runs a statement, and reads all of its rows."""
        if self._connection is None:
            self._connection = self._database.engine.connect()
        return _execute_read(self._connection, statement, parameters)

    async def _finish(self, step: Callable[[Connection], None]) -> None:
        """Commits, rolls back or closes (and frees the session's place): run to its end even
        when the caller is cancelled meanwhile."""
        await self._settled()
        connection = self._connection
        closing = step is Connection.close
        finished = None if connection is None else self._database.submit(step, connection)
        if closing and self._placed:
            self._connection, self._placed = None, False
            self._database.free_place_after(finished)
        self._pending = finished
        if finished is not None:
            await asyncio.shield(asyncio.wrap_future(finished))

    async def _settled(self) -> None:
        pending = self._pending
        if pending is not None and not pending.done():
            await asyncio.shield(asyncio.wait([asyncio.wrap_future(pending)]))


class Statements(Protocol):
    """Statements run in order in one transaction, as a `Session` runs them (a trip each) and
    as `Database.run_through` does (all in one trip)."""

    async def execute(
        self, statement: Executable, parameters: Parameters = None
    ) -> Result[Any]: ...

    async def scalar(self, statement: Executable, parameters: Parameters = None) -> Any: ...

    async def scalars(
        self, statement: Executable, parameters: Parameters = None
    ) -> ScalarResult[Any]: ...


class _Held(_Reading):
    """`Statements` on a connection the worker thread holds: each returns without suspending."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def execute(self, statement: Executable, parameters: Parameters = None) -> Result[Any]:
        return _execute_read(self._connection, statement, parameters)


def _run_through(
    connection: Connection, work: Callable[..., Coroutine[Any, Any, T]], args: tuple[object, ...]
) -> T:
    """On the worker thread: runs `work`'s coroutine to its end, in the caller's transaction."""
    coroutine = work(_Held(connection), *args)
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return cast(T, finished.value)
    coroutine.close()
    raise RuntimeError("work run in one trip awaited something other than its statements")


def _execute_read(
    connection: Connection, statement: Executable, parameters: Parameters
) -> Result[Any]:
    """Runs a statement and reads all of its rows, so the result outlives its cursor."""
    result = connection.execute(statement, parameters)
    return result.freeze()() if result.returns_rows else result


def _name_the_person(connection: Connection) -> None:
    # Every transaction names its person, or names nobody: a pooled connection never carries
    # the last transaction's person (the setting is local to the transaction anyway).
    connection.exec_driver_sql(
        "SELECT set_config('app.person_id', %(person)s, true)", {"person": current_person()}
    )


async def across_people(
    db: AsyncSession | Session, scan: str, fallback: Select[Any], **arguments: object
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
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    into_wal(cursor)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def into_wal(cursor: Any, tries: int = WAL_TRIES, pause_s: float = 0.05) -> None:
    """Puts the file in WAL mode. Two replicas opening a new file at once both ask; the switch
    needs the file alone, and SQLite may answer the second "database is locked" at once rather
    than wait for it: asked again, a little later each time, until it takes."""
    for attempt in range(1, tries + 1):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or attempt == tries:
                raise
            time.sleep(pause_s * attempt)


def conflict_insert(table: Table, *, postgres: bool) -> SqliteInsert | PostgresInsert:
    """An INSERT that can say what to do on a conflict (`on_conflict_do_update`/`_nothing`),
    in the dialect of the backend: PostgreSQL's or SQLite's, which spell it alike."""
    return (postgres_insert if postgres else sqlite_insert)(table)


def is_postgres_session(db: AsyncSession | Session | Connection) -> bool:
    bind = db if isinstance(db, Connection) else db.get_bind()
    return bind.dialect.name == "postgresql"


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
