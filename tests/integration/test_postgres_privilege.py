"""Least privilege on PostgreSQL: each service logs in as its own role that can do no more than
log in, and every table of a person's rows shows a transaction only the rows of the person it
names; naming nobody shows nothing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    Engine,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    create_engine,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError

from memory.tables import metadata as memory_tables
from router.tables import metadata as router_tables
from session.tables import metadata as session_tables
from tests.support.device import Device
from tests.support.postgres import fresh_database, fresh_schema
from tests.support.stack import running_stack
from violet import database
from violet.clock import UtcDateTime
from violet.settings import CommonSettings
from worker.tables import metadata as worker_tables

pytestmark = pytest.mark.postgres

TABLES: dict[str, MetaData] = {
    "session": session_tables,
    "memory": memory_tables,
    "router": router_tables,
    "worker": worker_tables,
}
PEOPLE = ("ann", "bob")
AT = datetime(2025, 5, 1, tzinfo=UTC)
QUICK = {
    "VIOLET_SWEEP_S": "0.5",
    "VIOLET_WORK_SWEEP_S": "0.5",
    "VIOLET_SAYS_PER_MINUTE": "1000",
    "VIOLET_SAY_BURST": "100",
}


# The operator's records, no person's rows: a removed person's keyed digest (their name only
# while the removal runs), and removed people's usage sums. Every transaction sees them all.
ACROSS_PEOPLE = {"removals", "erased_usage", "retention_passes"}


def every_table() -> list[tuple[str, Table]]:
    return [
        (service, table) for service, tables in TABLES.items() for table in tables.sorted_tables
    ]


def persons_tables() -> list[tuple[str, Table]]:
    return [(service, table) for service, table in every_table() if table.name not in ACROSS_PEOPLE]


def migrate_all(url: str) -> None:
    for service in TABLES:
        version_table = f"alembic_version_{service}"
        database.migrate(
            database.sync_url(CommonSettings(database_url=url), service),
            f"{service}.migrations",
            version_table,
        )


def service_db(url: str, service: str) -> Engine:
    return create_engine(database.service_url(CommonSettings(database_url=url), service))


def owner_db(url: str) -> Engine:
    return create_engine(make_url(url).set(drivername="postgresql+psycopg"))


def naming(db: Connection, person: str) -> None:
    db.execute(text("SELECT set_config('app.person_id', :person, true)"), {"person": person})


def a_row(table: Table, person: str, parents: dict[str, dict[str, str]]) -> dict[str, object]:
    """A row of the person's with every required column filled."""
    values: dict[str, object] = {}
    for column in table.columns:
        foreign = next(iter(column.foreign_keys), None)
        if foreign is not None:
            values[column.name] = parents[foreign.column.table.name][person]
        elif column.name == "person":
            values[column.name] = person
        elif column.primary_key and isinstance(column.type, Integer):
            continue  # numbered by its sequence
        elif column.nullable and not column.primary_key:
            continue
        elif isinstance(column.type, DateTime | UtcDateTime):
            values[column.name] = AT
        elif isinstance(column.type, Date):
            values[column.name] = AT.date()
        elif isinstance(column.type, LargeBinary):
            values[column.name] = uuid.uuid4().bytes
        elif isinstance(column.type, Boolean):
            values[column.name] = False
        elif isinstance(column.type, Integer):
            values[column.name] = 1
        elif isinstance(column.type, Float):
            values[column.name] = 0.5
        elif isinstance(column.type, JSON):
            values[column.name] = []
        else:
            length = getattr(column.type, "length", None) or 8
            values[column.name] = uuid.uuid4().hex[: min(length, 8)]
    return values


@pytest.fixture(scope="module")
def seeded() -> Iterator[tuple[str, dict[str, dict[str, str]]]]:
    """A schema with every service's tables, holding one row of each person in each, written by
    the services' own roles; and the key of each person's row, by table."""
    with fresh_schema() as url:
        migrate_all(url)
        keys: dict[str, dict[str, str]] = {}
        for service, table in persons_tables():
            engine = service_db(url, service)
            for person in PEOPLE:
                with engine.begin() as db:
                    naming(db, person)
                    row = a_row(table, person, keys)
                    db.execute(insert(table).values(row))
                keys.setdefault(table.name, {})[person] = str(row.get("id", person))
            engine.dispose()
        yield url, keys


def owners(table: Table) -> str:
    """The column that says whose a row is (directly or through its parent)."""
    if "person" in table.c:
        return "person"
    return next(column.name for column in table.columns if column.foreign_keys)


@pytest.mark.parametrize(
    ("service", "table"), persons_tables(), ids=lambda v: getattr(v, "name", v)
)
def test_a_table_shows_no_row_without_a_person_and_only_the_persons_with_one(
    seeded: tuple[str, dict[str, dict[str, str]]], service: str, table: Table
) -> None:
    url, keys = seeded
    column = table.c[owners(table)]
    engine = service_db(url, service)
    try:
        with engine.begin() as db:
            assert db.scalar(select(func.count()).select_from(table)) == 0
        with engine.begin() as db:
            naming(db, "ann")
            seen = list(db.scalars(select(column)))
        parent = next(iter(column.foreign_keys), None)
        expected = keys[parent.column.table.name]["ann"] if parent else "ann"
        assert seen == [expected]
        theirs = keys[parent.column.table.name]["bob"] if parent else "bob"
        with engine.begin() as db:
            naming(db, "ann")
            assert db.execute(table.update().values({column.name: column})).rowcount == 1
            assert db.execute(table.delete().where(column == theirs)).rowcount == 0
    finally:
        engine.dispose()
    with owner_db(url).connect() as db:
        assert db.scalar(select(func.count()).select_from(table)) == len(PEOPLE)


@pytest.mark.parametrize(
    ("service", "table"), persons_tables(), ids=lambda v: getattr(v, "name", v)
)
def test_no_row_of_another_person_can_be_written(
    seeded: tuple[str, dict[str, dict[str, str]]], service: str, table: Table
) -> None:
    url, keys = seeded
    engine = service_db(url, service)
    try:
        with pytest.raises(DBAPIError, match="row-level security"), engine.begin() as db:
            naming(db, "ann")
            db.execute(insert(table).values(a_row(table, "bob", keys)))
    finally:
        engine.dispose()


def test_every_table_of_every_service_forces_row_level_security(
    seeded: tuple[str, dict[str, dict[str, str]]],
) -> None:
    url, _ = seeded
    with owner_db(url).connect() as db:
        forced = dict(
            db.execute(
                text(
                    "SELECT relname, relrowsecurity AND relforcerowsecurity FROM pg_class "
                    "WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' "
                    "AND relname NOT LIKE 'alembic_version%'"
                )
            ).all()
        )
    assert forced == {table.name: True for _, table in every_table()}


def test_the_services_roles_can_only_log_in_and_own_nothing(
    seeded: tuple[str, dict[str, dict[str, str]]],
) -> None:
    url, _ = seeded
    roles = [database.service_role(service) for service in TABLES]
    with owner_db(url).connect() as db:
        found = db.execute(
            text(
                "SELECT rolname, rolcanlogin, rolsuper OR rolbypassrls OR rolcreaterole "
                "OR rolcreatedb, (SELECT count(*) FROM pg_tables WHERE tableowner = rolname) "
                "FROM pg_roles WHERE rolname = ANY(:roles) ORDER BY rolname"
            ),
            {"roles": roles},
        ).all()
    assert [tuple(row) for row in found] == [(role, True, False, 0) for role in sorted(roles)]


def test_only_the_owners_scan_functions_see_past_the_person(
    seeded: tuple[str, dict[str, dict[str, str]]],
) -> None:
    url, _ = seeded
    engine = service_db(url, "memory")
    try:
        with engine.begin() as db:
            everyone = db.execute(text("SELECT * FROM memory_people_all()")).scalars()
            assert sorted(everyone) == list(PEOPLE)
        with pytest.raises(DBAPIError, match="permission denied"), engine.begin() as db:
            db.execute(text("SELECT * FROM worker_due_outbox(now(), 10)"))
    finally:
        engine.dispose()


async def test_after_a_conversation_with_work_and_memory_no_service_connection_is_privileged(
    tmp_path: Path,
) -> None:
    """The URL names the superuser; the services still log in as their own roles."""
    with fresh_database() as url:
        assert make_url(url).username == "postgres"
        env = {**QUICK, "VIOLET_DATABASE_URL": url}
        with running_stack(tmp_path, "sqlite", env=env) as stack:
            person = "privilege-" + uuid.uuid4().hex[:6]
            phone, _ = await Device.open(stack.live_url, stack.token(person))
            await phone.ask("My cat is Miso")
            await phone.ask("calculate 6*7")
            await phone.until(lambda f: f["type"] == "message" and "42" in f["text"])
            await recalled(phone, "What is my cat?", "Miso")
            connections = service_connections(url)
        with psycopg.connect(url) as db:
            for table in ("messages", "memory_items", "work_requests", "outbox", "route_decisions"):
                assert db.execute(f"SELECT count(*) FROM {table}").fetchone() != (0,), table
            unforced = db.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace "
                "AND relkind = 'r' AND relname NOT LIKE 'alembic_version%' "
                "AND NOT (relrowsecurity AND relforcerowsecurity)"
            ).fetchall()
    assert unforced == []
    assert {name for name, _, _ in connections} >= {
        database.application_name(service) for service in TABLES
    }
    for name, role, privileged in connections:
        own = database.application_name(role.removeprefix("violet_"))
        assert name == own or name.startswith(f"{own}-listen-"), (name, role)
        assert not privileged, role


async def recalled(phone: Device, question: str, words: str, timeout_s: float = 20.0) -> None:
    """Asks until the answer holds `words` (memory captures beside the conversation)."""
    async with asyncio.timeout(timeout_s):
        while words not in (await phone.ask(question))["text"]:  # noqa: ASYNC110 - asks again
            await asyncio.sleep(0.2)


def service_connections(url: str) -> list[tuple[str, str, bool]]:
    """Every other connection to the database: its name, role, and whether the role is a
    superuser or bypasses row-level security."""
    with psycopg.connect(url) as db:
        return [
            (name, role, privileged)
            for name, role, privileged in db.execute(
                "SELECT a.application_name, a.usename, r.rolsuper OR r.rolbypassrls "
                "FROM pg_stat_activity AS a JOIN pg_roles AS r ON r.oid = a.usesysid "
                "WHERE a.datname = current_database() AND a.pid != pg_backend_pid()"
            )
        ]
