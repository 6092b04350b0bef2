"""Row-level security on PostgreSQL: the service's own connections cannot see past the person."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from memory.indexing import index_items
from memory.passages import PassageQueue
from memory.queries import RecentQueries
from memory.recall import Recaller
from memory.runtime import migrate
from memory.settings import MemorySettings
from memory.store import (
    FACT,
    Item,
    MemoryStore,
    NewTurn,
    PersonMemory,
    new_item_id,
    open_memory_database,
)
from memory.tables import memory_items
from tests.support.postgres import fresh_schema
from violet import database
from violet.database import Database
from violet.embedder import get_embedder
from violet.vectors import EdgeVectorStore

AT = datetime(2025, 5, 1, tzinfo=UTC)
SERVICE_ROLE = database.service_role("memory")


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with fresh_schema() as schema_url:
        migrate(MemorySettings(home=tmp_path, database_url=schema_url))
        yield schema_url


@pytest.fixture
async def db(url: str) -> AsyncIterator[Database]:
    settings = MemorySettings(database_url=url)
    opened = open_memory_database(database.service_database(settings, "memory"))
    yield opened
    await opened.dispose()


def fact(person: str, words: str) -> Item:
    return Item(
        id=new_item_id(),
        person=person,
        kind=FACT,
        text=words,
        origin="you",
        quote=words,
        speaker="",
        source_seqs=(1,),
        turn_items=(),
        previous_item=None,
        subject=None,
        subject_value=None,
        created_at=AT,
        updated_at=AT,
    )


async def remember(db: Database, person: str, words: str) -> Item:
    item = fact(person, words)
    await MemoryStore(db).run(person, partial(PersonMemory.add_items, items=[item]))
    return item


def rows_as_superuser(url: str) -> list[str]:
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain) as connection:
        return [row[0] for row in connection.execute("SELECT person FROM memory_items")]


async def test_the_service_connects_as_a_role_that_cannot_bypass_row_security(
    db: Database,
) -> None:
    async with db() as connection:
        role = (
            await connection.execute(
                text(
                    "SELECT current_user AS who, rolsuper, rolbypassrls, "
                    "(SELECT tableowner FROM pg_tables WHERE tablename = 'memory_items' "
                    "AND schemaname = current_schema()) AS owner "
                    "FROM pg_roles WHERE rolname = current_user"
                )
            )
        ).one()
    assert role.who == SERVICE_ROLE
    assert role.rolsuper is False and role.rolbypassrls is False
    assert role.owner != SERVICE_ROLE


async def test_a_query_without_the_person_set_returns_nothing(db: Database, url: str) -> None:
    await remember(db, "ann", "My cat is called Miso")
    await remember(db, "bob", "My cat is called Miso")
    async with db() as connection:
        assert (await connection.execute(text("SELECT count(*) FROM memory_items"))).scalar() == 0
    assert sorted(rows_as_superuser(url)) == ["ann", "bob"]


async def test_a_query_without_the_person_filter_sees_only_the_person_set(
    db: Database,
) -> None:
    await remember(db, "ann", "My cat is called Miso")
    await remember(db, "bob", "My cat is called Miso")
    async with db.begin() as connection:
        await connection.execute(text("SELECT set_config('app.person_id', 'ann', true)"))
        people = (await connection.execute(text("SELECT person FROM memory_items"))).scalars()
        assert list(people) == ["ann"]


async def test_the_person_set_lasts_one_transaction(db: Database) -> None:
    await remember(db, "ann", "My cat is called Miso")
    async with db() as connection:
        async with connection.begin():
            await connection.execute(text("SELECT set_config('app.person_id', 'ann', true)"))
        count = await connection.execute(text("SELECT count(*) FROM memory_items"))
        assert count.scalar() == 0


async def test_no_row_of_another_person_can_be_written_changed_or_deleted(
    db: Database, url: str
) -> None:
    bobs = await remember(db, "bob", "My cat is called Miso")
    with pytest.raises(DBAPIError, match="row-level security"):
        async with db.begin() as connection:
            await connection.execute(text("SELECT set_config('app.person_id', 'ann', true)"))
            await connection.execute(insert(memory_items).values(fact("bob", "planted").columns()))
    async with db.begin() as connection:
        await connection.execute(text("SELECT set_config('app.person_id', 'ann', true)"))
        changed = await connection.execute(text("UPDATE memory_items SET text = 'changed'"))
        deleted = await connection.execute(text("DELETE FROM memory_items"))
    assert database.rows_changed(changed) == database.rows_changed(deleted) == 0
    kept = await MemoryStore(db).read("bob", partial(PersonMemory.get, item_id=bobs.id))
    assert kept is not None and kept.text == "My cat is called Miso"
    assert rows_as_superuser(url) == ["bob"]


async def test_an_id_of_another_person_finds_nothing(db: Database) -> None:
    bobs = await remember(db, "bob", "My cat is called Miso")
    ann = MemoryStore(db)
    assert await ann.read("ann", partial(PersonMemory.get, item_id=bobs.id)) is None
    assert await ann.read("ann", PersonMemory.page) == []


async def test_consolidation_finds_its_people_only_through_the_owners_scan_functions(
    db: Database,
) -> None:
    store = MemoryStore(db)
    for person in ("ann", "bob"):
        turn = NewTurn("My cat is called Miso", "Noted.", (1,), AT)
        await store.run(person, partial(PersonMemory.add_turn, turn=turn))
    async with db() as connection:
        assert (await connection.execute(text("SELECT count(*) FROM memory_people"))).scalar() == 0
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert sorted(await store.people()) == ["ann", "bob"]
    assert sorted(await store.quiet_people(later)) == ["ann", "bob"]
    assert await store.claim_consolidation("ann", later)
    assert not await store.claim_consolidation("ann", later)
    await store.consolidated("ann", later)
    assert await store.quiet_people(later) == ["bob"]


async def test_memory_versions_and_changes_show_only_the_person_set(db: Database) -> None:
    await remember(db, "ann", "My cat is called Miso")
    await remember(db, "bob", "My dog is called Pixel")
    for table in ("memory_versions", "memory_changes"):
        async with db.begin() as connection:
            none = await connection.execute(text(f"SELECT count(*) FROM {table}"))
            assert none.scalar() == 0
        async with db.begin() as connection:
            await connection.execute(text("SELECT set_config('app.person_id', 'ann', true)"))
            people = await connection.execute(text(f"SELECT DISTINCT person FROM {table}"))
            assert list(people.scalars()) == ["ann"]


async def test_a_forget_on_one_replica_counts_at_the_next_recall_on_another(
    url: str, tmp_path: Path
) -> None:
    embedder = get_embedder()
    vectors = EdgeVectorStore(tmp_path / "vectors", embedder.dim)
    settings = MemorySettings(database_url=url)
    dbs = [open_memory_database(database.service_database(settings, "memory")) for _ in "ab"]
    stores = [MemoryStore(db) for db in dbs]
    one, other = (Recaller(store, vectors, RecentQueries(embedder)) for store in stores)
    passages = PassageQueue(embedder)
    try:
        items = [fact("ann", "My cat is called Miso"), fact("ann", "I take my tea with honey")]
        await index_items(passages, vectors, items, {})
        await stores[0].run("ann", partial(PersonMemory.add_items, items=items))
        for recaller in (one, other):
            recalled = await recaller.recall("ann", "what is my cat called?", 1)
            assert [r.item.id for r in recalled] == [items[0].id]
        left = await stores[0].run("ann", partial(PersonMemory.forget, item=items[0]))
        await vectors.delete("ann", left)
        recalled = await other.recall("ann", "what is my cat called?", 2)
        assert [r.item.id for r in recalled] == [items[1].id]
    finally:
        await passages.close()
        for db in dbs:
            await db.dispose()
        await vectors.close()
