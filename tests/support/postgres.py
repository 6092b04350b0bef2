"""A fresh PostgreSQL schema per test run, so runs never see each other's rows."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from urllib.parse import quote

import psycopg
from sqlalchemy.engine import make_url

from tests.support.ci import unavailable

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def base_url() -> str:
    return os.environ.get("VIOLET_TEST_DATABASE_URL", DEFAULT_URL)


def require_postgres() -> str:
    """The test database's URL; skips (or fails, in CI) when no server answers."""
    url = base_url()
    try:
        with psycopg.connect(url, connect_timeout=3):
            pass
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL at {url} does not answer ({error}); set VIOLET_TEST_DATABASE_URL")
    return url


@contextlib.contextmanager
def fresh_schema() -> Iterator[str]:
    """Yields a SQLAlchemy URL whose connections work in a new, empty schema."""
    url = require_postgres()
    schema = "violet_test_" + secrets.token_hex(4)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        separator = "&" if "?" in url else "?"
        yield f"{url}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """Yields the URL of a new, empty database on the test server (as its superuser), so every
    connection to it is the test's own."""
    url = require_postgres()
    name = "violet_test_" + secrets.token_hex(4)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield str(make_url(url).set(database=name).render_as_string(hide_password=False))
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
