"""Memory items in SQL, one person at a time.

Every change to a person's items advances the person's version in the same transaction and
lists the changed items (`memory_versions`, `memory_changes`), so that recall on any replica reads
one small row to learn whether anything changed, and then only what did.

While a person's memory is being erased (`memory_erasures`), no capture of theirs is taken, and
no change is versioned for a person left without items: see `PersonMemory.being_erased` and
`PersonMemory._advance`.

Two layers keep people apart. Every query below filters by the person in code, on both
backends. On PostgreSQL the service also logs in as its own role and each transaction names its
person (`violet.database`), so row-level security hides every other person's rows and a
transaction that names nobody sees nothing; who is due for consolidation is asked of the
owner's scan function, which returns names only.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Row,
    Table,
    and_,
    case,
    delete,
    event,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry

from memory.deeds import Deed, from_json
from memory.sources import Source, sources_from
from memory.tables import (
    capture_marks,
    captured_turns,
    memory_changes,
    memory_erasures,
    memory_items,
    memory_people,
    memory_versions,
)
from violet import database
from violet.clock import utc_now
from violet.database import Database, Statements
from violet.identity import acting_for

FACT = "fact"
TURN = "turn"
TOLD = "told"
# An execution option: the transaction only reads.
READS_ONLY = "violet_reads_only"


def new_item_id() -> str:
    # A UUID, because the vector store accepts only UUIDs and integers as point ids.
    return str(uuid.uuid4())


def erasure_lock(person: str) -> int:
    """The PostgreSQL advisory lock key of the person's erase (a signed 64-bit number)."""
    digest = hashlib.blake2b(f"memory-erasure:{person}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def open_memory_database(db: Database) -> Database:
    if db.engine.dialect.name == "sqlite":
        event.listen(db.engine, "connect", _begin_explicitly)
        event.listen(db.engine, "begin", _begin_immediate)
    return db


def _begin_explicitly(connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    connection.isolation_level = None


def _begin_immediate(connection: Connection) -> None:
    # A SQLite transaction that reads and then writes fails at once ("database is locked") when
    # another writer committed in between; taking the write lock at the start makes it wait.
    # One that only reads takes no lock: under WAL it reads beside the writer, never behind it.
    reads_only = connection.get_execution_options().get(READS_ONLY, False)
    connection.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")


@dataclass(frozen=True)
class Item:
    id: str
    person: str
    kind: str
    text: str
    origin: str
    quote: str
    speaker: str
    source_seqs: tuple[int, ...]
    turn_items: tuple[str, ...]
    previous_item: str | None
    subject: str | None
    subject_value: str | None
    created_at: datetime
    updated_at: datetime
    forgotten_at: datetime | None = None
    forgotten_with: str | None = None
    superseded_by: str | None = None

    @property
    def active(self) -> bool:
        return self.forgotten_at is None and self.superseded_by is None

    def columns(self) -> dict[str, object]:
        values = {column.name: getattr(self, column.name) for column in memory_items.c}
        values["source_seqs"] = list(self.source_seqs)
        values["turn_items"] = list(self.turn_items)
        return values


def _item(row: Row) -> Item:
    return _item_of(dict(row._mapping))


def _item_of(values: dict[str, Any]) -> Item:
    values["source_seqs"] = tuple(values["source_seqs"])
    values["turn_items"] = tuple(values["turn_items"])
    return Item(**values)


@dataclass(frozen=True)
class MemoryVersion:
    """Where a person's memory stands: changes advance `version` within one `epoch`, and those
    from `listed_from` on are listed item by item."""

    epoch: str
    version: int
    listed_from: int


# Where a person's memory stands (`MemoryVersion`).
VERSION_COLUMNS = (
    memory_versions.c.epoch,
    memory_versions.c.version,
    memory_versions.c.listed_from,
)


@dataclass(frozen=True)
class Changes:
    """A person's memory version, and what changed since an earlier one."""

    version: MemoryVersion
    # Every item changed (added, changed or deleted), and the rows of those still there.
    changed: list[str]
    items: list[Item]


@dataclass(frozen=True)
class NewTurn:
    """A finished turn as Capture receives it: the person's words, Violet's answer, and what
    Violet did in background work."""

    person_message: str
    violet_answer: str
    source_seqs: tuple[int, ...]
    at: datetime
    speaker: str = ""
    deeds: tuple[Deed, ...] = ()
    # What Violet told (her answer, or a work result as she told it), and where it came from.
    told: str = ""
    told_sources: tuple[Source, ...] = ()
    # When the session stored the turn's answer, when it says (the capture's own time, not
    # stored): a turn answered before the person forgot everything is not taken.
    answered_at: datetime | None = None


@dataclass(frozen=True)
class CapturedTurn(NewTurn):
    """A stored turn still waiting for its facts."""

    id: int = 0
    turn_item: str | None = None
    attempts: int = 0
    captured_at: datetime | None = None


T = TypeVar("T")
# Work on one person's memory, in one transaction.
Work = Callable[["PersonMemory"], Coroutine[Any, Any, T]]


class MemoryStore:
    def __init__(self, db: Database) -> None:
        self._database = db
        self._postgres = db.engine.dialect.name == "postgresql"

    async def run(self, person: str, work: Work[T]) -> T:
        """`work` on the person's memory, and on nobody else's, in one transaction made in
        one trip to the database: for work whose only awaits are the memory's queries."""
        return await self._run(person, work, {})

    async def read(self, person: str, work: Work[T]) -> T:
        """`run` for work that only reads: it never waits for a writer (on SQLite it takes no
        lock, on PostgreSQL reads never wait)."""
        return await self._run(person, work, {READS_ONLY: True})

    async def _run(self, person: str, work: Work[T], options: dict[str, object]) -> T:
        if not person:
            raise ValueError("memory is always someone's: the person is empty")
        postgres = self._postgres

        async def on(statements: Statements) -> T:
            return await work(PersonMemory(statements, person, postgres))

        with acting_for(person):
            return await self._database.run_through(on, options=options)

    async def vectors_stored(self, person: str, ids: Sequence[str]) -> None:
        """The vectors of these items, and of the turns read after them, were stored or deleted
        after their change was committed: recall reads them again."""
        if ids:
            await self.run(person, lambda memory: _record_with_followers(memory, ids))

    async def people(self) -> list[str]:
        """Everyone with a memory (the nightly pass)."""
        async with self._database() as db:
            rows = await database.across_people(
                db, "memory_people_all", select(memory_people.c.person)
            )
            return [row.person for row in rows]

    async def quiet_people(self, quiet_since: datetime) -> list[str]:
        """People who said nothing since `quiet_since` and spoke after their last consolidation."""
        quiet = select(memory_people.c.person).where(
            memory_people.c.last_capture_at <= quiet_since,
            or_(
                memory_people.c.consolidated_at.is_(None),
                memory_people.c.consolidated_at < memory_people.c.last_capture_at,
            ),
        )
        async with self._database() as db:
            rows = await database.across_people(
                db, "memory_quiet_people", quiet, quiet_since=quiet_since
            )
            return [row.person for row in rows]

    async def claim_consolidation(self, person: str, until: datetime) -> bool:
        """True when this replica may consolidate the person now (no other one is)."""
        moment = utc_now()
        with acting_for(person):
            async with self._database.begin() as db:
                claimed = await db.execute(
                    update(memory_people)
                    .where(
                        memory_people.c.person == person,
                        or_(
                            memory_people.c.consolidating_until.is_(None),
                            memory_people.c.consolidating_until < moment,
                        ),
                        ~exists().where(_of(memory_erasures, person)),
                    )
                    .values(consolidating_until=until)
                )
                return database.rows_changed(claimed) == 1

    async def begin_erasure(self, person: str) -> None:
        """Names the person as being erased, once every capture of theirs under way on any
        replica has committed (on PostgreSQL the erase's lock waits for the shared locks those
        hold, see `PersonMemory.being_erased`); from then on none is taken."""
        with acting_for(person):
            async with self._database.begin() as db:
                if self._postgres:
                    await db.execute(select(func.pg_advisory_xact_lock(erasure_lock(person))))
                marked = database.conflict_insert(memory_erasures, postgres=self._postgres)
                await db.execute(
                    marked.values(person=person, started_at=utc_now()).on_conflict_do_nothing()
                )

    async def end_erasure(self, person: str) -> None:
        """Captures of the person are taken again: they start a new memory."""
        await self.run(person, lambda memory: memory.delete_erasure())

    async def consolidated(self, person: str, started: datetime) -> None:
        with acting_for(person):
            async with self._database.begin() as db:
                await db.execute(
                    update(memory_people)
                    .where(memory_people.c.person == person)
                    .values(consolidated_at=started, consolidating_until=None)
                )


async def _record_with_followers(memory: PersonMemory, ids: Sequence[str]) -> None:
    followers = await memory.followers(ids)
    await memory.record_changes([*ids, *(turn.id for turn in followers)])


class PersonMemory:
    """Queries on one person's memory, inside one transaction. Each filters by the person."""

    def __init__(self, statements: Statements, person: str, postgres: bool) -> None:
        self._db = statements
        self.person = person
        self._postgres = postgres
        # One version per transaction, taken at its first change.
        self._version: int | None = None

    # Versions and changes.

    async def version(self) -> MemoryVersion | None:
        """Where the person's memory stands; None when they have none."""
        row = (
            await self._db.execute(
                select(*VERSION_COLUMNS).where(_of(memory_versions, self.person))
            )
        ).first()
        return MemoryVersion(row.epoch, row.version, row.listed_from) if row else None

    async def version_and_changes(self, since: int) -> Changes | None:
        """Where the person's memory stands, the ids of the items changed after version
        `since`, and the rows of those still there, in one read; None when they have no memory.
        The changes are listed ones of the current epoch: the caller checks that its `since`
        belongs to it and is still listed (`MemoryVersion.listed_from`)."""
        changes = and_(
            memory_changes.c.person == memory_versions.c.person, memory_changes.c.version > since
        )
        changed_items = and_(
            memory_items.c.person == memory_changes.c.person,
            memory_items.c.id == memory_changes.c.item,
        )
        rows = (
            await self._db.execute(
                select(
                    *VERSION_COLUMNS,
                    memory_changes.c.item.label("changed_item"),
                    *memory_items.c,
                )
                .select_from(
                    memory_versions.outerjoin(memory_changes, changes).outerjoin(
                        memory_items, changed_items
                    )
                )
                .where(_of(memory_versions, self.person))
            )
        ).all()
        if not rows:
            return None
        first = rows[0]
        version = MemoryVersion(first.epoch, first.version, first.listed_from)
        changed = [row.changed_item for row in rows if row.changed_item is not None]
        items = [
            _item_of({column.name: row._mapping[column] for column in memory_items.c})
            for row in rows
            if row._mapping[memory_items.c.id] is not None
        ]
        return Changes(version, changed, items)

    async def record_changes(self, ids: Iterable[str]) -> None:
        """Advances the person's version (once per transaction) and lists the items under it."""
        changed = sorted(set(ids))
        if not changed:
            return
        version = await self._advance()
        if version is None:
            return
        moment = utc_now()
        upsert = self._insert(memory_changes)
        await self._db.execute(
            upsert.on_conflict_do_update(
                index_elements=[memory_changes.c.person, memory_changes.c.item],
                set_={"version": upsert.excluded.version, "changed_at": upsert.excluded.changed_at},
            ),
            [
                {"person": self.person, "item": item, "version": version, "changed_at": moment}
                for item in changed
            ],
        )

    async def _advance(self) -> int | None:
        """The transaction's version; None when the person has neither a version nor an item:
        a change recorded after their memory was erased or forgotten whole (by a background
        pass, on any replica) then starts no new version, so nothing of theirs is left."""
        if self._version is None:
            advanced = await self._db.scalar(
                update(memory_versions)
                .where(_of(memory_versions, self.person))
                .values(version=memory_versions.c.version + 1)
                .returning(memory_versions.c.version)
            )
            if advanced is None:
                if not await self._has_items():
                    return None
                upsert = self._insert(memory_versions).values(
                    person=self.person, epoch=uuid.uuid4().hex, version=1, listed_from=1
                )
                advanced = await self._db.scalar(
                    upsert.on_conflict_do_update(
                        index_elements=[memory_versions.c.person],
                        set_={"version": memory_versions.c.version + 1},
                    ).returning(memory_versions.c.version)
                )
            self._version = int(advanced)
        return self._version

    async def _has_items(self) -> bool:
        # On PostgreSQL the item found stays locked until the transaction ends, so an erase that
        # deletes it waits for this transaction, and then deletes the version it makes too.
        found = await self._db.scalar(
            select(memory_items.c.id)
            .where(_of(memory_items, self.person))
            .limit(1)
            .with_for_update(read=True, key_share=True)
        )
        return found is not None

    def _insert(self, table: Table) -> Any:
        """An INSERT that can say what to do on a conflict, in the backend's dialect."""
        return database.conflict_insert(table, postgres=self._postgres)

    async def _compact_changes(self, before: datetime) -> None:
        """Drops the listed changes of items deleted since before `before`; a replica that knows
        no version as recent reads the person's memory whole."""
        still_there = select(memory_items.c.id).where(_of(memory_items, self.person))
        dropped = (
            await self._db.scalars(
                delete(memory_changes)
                .where(
                    _of(memory_changes, self.person),
                    memory_changes.c.changed_at < before,
                    memory_changes.c.item.not_in(still_there),
                )
                .returning(memory_changes.c.version)
            )
        ).all()
        if dropped:
            await self._db.execute(
                update(memory_versions)
                .where(
                    _of(memory_versions, self.person),
                    memory_versions.c.listed_from < max(dropped),
                )
                .values(listed_from=max(dropped))
            )

    # Captured turns.

    async def take_capture(self, turn: NewTurn) -> bool:
        """Whether the turn is to be stored, moving the person's capture mark past it: False for
        a repeat of a capture taken already (captures come in the order of their transcript
        seqs, so a turn whose newest seq is not past the mark is one) and for a turn answered
        before the person last forgot everything. A turn that names no seqs is never a repeat.
        One statement, so that two deliveries of the same capture at once store it once (on
        PostgreSQL the second waits for the first's row, then finds the mark moved)."""
        newest = max(turn.source_seqs, default=0)
        upsert = self._insert(capture_marks).values(person=self.person, through_seq=newest)
        mark = capture_marks.c
        offered = upsert.excluded.through_seq
        conditions = []
        if turn.source_seqs:
            conditions.append(mark.through_seq < offered)
        if turn.answered_at is not None:
            conditions.append(
                or_(mark.forgotten_at.is_(None), mark.forgotten_at <= turn.answered_at)
            )
        new = and_(true(), *conditions)
        taken = await self._db.scalar(
            upsert.on_conflict_do_update(
                index_elements=[mark.person],
                set_={
                    "through_seq": case(
                        (offered > mark.through_seq, offered), else_=mark.through_seq
                    )
                },
                where=new,
            ).returning(mark.person)
        )
        return taken is not None

    async def add_turn(self, turn: NewTurn, turn_item: str | None = None) -> int | None:
        """Stores the turn (with the id of its turn item, when one is made with it); None,
        storing nothing, while the person's memory is being erased."""
        if self._postgres:
            await self._hold_erasure_lock()
        moment = utc_now()
        values: dict[str, object] = {
            "person": self.person,
            "person_message": turn.person_message,
            "violet_answer": turn.violet_answer,
            "deeds": [deed.as_json() for deed in turn.deeds],
            "told": turn.told or None,
            "told_sources": [source.as_dict() for source in turn.told_sources],
            "speaker": turn.speaker,
            "source_seqs": list(turn.source_seqs),
            "at": turn.at,
            "captured_at": moment,
            "turn_item": turn_item,
            "attempts": 0,
        }
        # Stored only while no erase of the person is under way, in the same statement.
        row = select(
            *(literal(value, captured_turns.c[name].type) for name, value in values.items())
        ).where(~exists().where(_of(memory_erasures, self.person)))
        turn_id = await self._db.scalar(
            insert(captured_turns).from_select(list(values), row).returning(captured_turns.c.id)
        )
        if turn_id is None:
            return None
        upsert = database.conflict_insert(memory_people, postgres=self._postgres).values(
            person=self.person, last_capture_at=moment
        )
        await self._db.execute(
            upsert.on_conflict_do_update(
                index_elements=[memory_people.c.person], set_={"last_capture_at": moment}
            )
        )
        return int(turn_id)

    async def being_erased(self) -> bool:
        """Whether the person's memory is being erased. On PostgreSQL the transaction holds a
        shared lock on the person's erase until it ends: an erase starting meanwhile waits for
        it (`MemoryStore.begin_erasure`), and one that started is seen here. On SQLite every
        writing transaction runs alone, which does the same."""
        if self._postgres:
            await self._hold_erasure_lock()
        found = await self._db.scalar(
            select(memory_erasures.c.person).where(_of(memory_erasures, self.person))
        )
        return found is not None

    async def _hold_erasure_lock(self) -> None:
        """Holds a shared lock on the person's erase until the transaction ends (PostgreSQL)."""
        await self._db.execute(select(func.pg_advisory_xact_lock_shared(erasure_lock(self.person))))

    async def delete_erasure(self) -> None:
        await self._db.execute(delete(memory_erasures).where(_of(memory_erasures, self.person)))

    async def claim_turns(self, until: datetime, limit: int, after_id: int) -> list[CapturedTurn]:
        """Turns after `after_id` still waiting for extraction that no other replica holds,
        oldest first."""
        moment = utc_now()
        claimable = and_(
            _of(captured_turns, self.person),
            captured_turns.c.extracted_at.is_(None),
            captured_turns.c.id > after_id,
            or_(captured_turns.c.claimed_until.is_(None), captured_turns.c.claimed_until < moment),
        )
        first = (
            select(captured_turns.c.id).where(claimable).order_by(captured_turns.c.id).limit(limit)
        )
        claimed = await self._db.execute(
            update(captured_turns)
            .where(claimable, captured_turns.c.id.in_(first))
            .values(claimed_until=until)
            .returning(*captured_turns.c)
        )
        return sorted((_captured(row) for row in claimed), key=lambda turn: turn.id)

    async def turn_done(
        self,
        turn_id: int,
        *,
        turn_item: str | None,
        extracted: bool,
        attempts: int,
        release: bool,
    ) -> bool:
        """Records what the turn gave, releasing it if asked; False when the turn is gone."""
        values: dict[str, object] = {
            "turn_item": turn_item,
            "extracted_at": utc_now() if extracted else None,
            "attempts": attempts,
        }
        if release:
            values["claimed_until"] = None
        done = await self._db.execute(
            update(captured_turns)
            .where(_of(captured_turns, self.person), captured_turns.c.id == turn_id)
            .values(**values)
        )
        return database.rows_changed(done) == 1

    async def drop_extracted_turns(self) -> int:
        """Compaction: a turn whose items exist is needed no more."""
        deleted = await self._db.execute(
            delete(captured_turns).where(
                _of(captured_turns, self.person), captured_turns.c.extracted_at.is_not(None)
            )
        )
        return database.rows_changed(deleted)

    async def extracted_turns_through(self, seq: int) -> list[int]:
        """Captured turns of transcript messages up to `seq` alone whose facts were extracted
        (a retention trim); those still waiting stay for the pass that takes them."""
        rows = await self._db.execute(
            select(captured_turns.c.id, captured_turns.c.source_seqs).where(
                _of(captured_turns, self.person), captured_turns.c.extracted_at.is_not(None)
            )
        )
        return [row.id for row in rows if _made_through(row.source_seqs, seq)]

    async def delete_captured_turns(self, ids: Sequence[int]) -> int:
        if not ids:
            return 0
        deleted = await self._db.execute(
            delete(captured_turns).where(
                _of(captured_turns, self.person), captured_turns.c.id.in_(ids)
            )
        )
        return database.rows_changed(deleted)

    async def waiting_turns(self) -> int:
        """How many of the person's turns wait for their pass."""
        counted = await self._db.scalar(
            select(func.count())
            .select_from(captured_turns)
            .where(_of(captured_turns, self.person), captured_turns.c.extracted_at.is_(None))
        )
        return int(counted or 0)

    async def has_waiting_turns(self) -> bool:
        found = await self._db.scalar(
            select(captured_turns.c.id)
            .where(_of(captured_turns, self.person), captured_turns.c.extracted_at.is_(None))
            .limit(1)
        )
        return found is not None

    # Items.

    async def add_items(self, items: Sequence[Item]) -> None:
        if items:
            await self._db.execute(insert(memory_items), [item.columns() for item in items])
            await self.record_changes(item.id for item in items)

    async def get(self, item_id: str) -> Item | None:
        row = (
            await self._db.execute(
                select(memory_items).where(
                    _of(memory_items, self.person), memory_items.c.id == item_id
                )
            )
        ).first()
        return _item(row) if row else None

    async def items(self, ids: Iterable[str]) -> list[Item]:
        wanted = list(ids)
        if not wanted:
            return []
        rows = await self._db.execute(
            select(memory_items).where(
                _of(memory_items, self.person), memory_items.c.id.in_(wanted)
            )
        )
        return [_item(row) for row in rows]

    async def active_items(self, kind: str | None = None) -> list[Item]:
        """Items in recall, oldest first."""
        query = select(memory_items).where(_of(memory_items, self.person), _active())
        if kind:
            query = query.where(memory_items.c.kind == kind)
        rows = await self._db.execute(query.order_by(memory_items.c.created_at, memory_items.c.id))
        return [_item(row) for row in rows]

    async def facts(self) -> list[Item]:
        """Every fact, in recall or not."""
        rows = await self._db.execute(
            select(memory_items).where(_of(memory_items, self.person), memory_items.c.kind == FACT)
        )
        return [_item(row) for row in rows]

    async def active_ids(self) -> list[str]:
        return list(
            (
                await self._db.scalars(
                    select(memory_items.c.id)
                    .where(_of(memory_items, self.person), _active())
                    .order_by(memory_items.c.id)
                )
            ).all()
        )

    async def page(self, kind: str = FACT) -> list[Item]:
        """The items of a kind on the memory page (facts, or told records), newest first."""
        rows = await self._db.execute(
            select(memory_items)
            .where(_of(memory_items, self.person), _active(), memory_items.c.kind == kind)
            .order_by(memory_items.c.created_at.desc(), memory_items.c.id)
        )
        return [_item(row) for row in rows]

    async def listed_after(
        self, kind: str, after: tuple[datetime, str] | None, limit: int
    ) -> list[Item]:
        """A page of the items of a kind the memory page lists, oldest first: those after
        `after` (the created_at and id of the last one of the page before)."""
        query = select(memory_items).where(
            _of(memory_items, self.person), _active(), memory_items.c.kind == kind
        )
        if after is not None:
            at, item_id = after
            query = query.where(
                or_(
                    memory_items.c.created_at > at,
                    and_(memory_items.c.created_at == at, memory_items.c.id > item_id),
                )
            )
        rows = await self._db.execute(
            query.order_by(memory_items.c.created_at, memory_items.c.id).limit(limit)
        )
        return [_item(row) for row in rows]

    async def ids_after(self, after: str, limit: int) -> list[str]:
        """A page of the ids of every item of the person, in recall or not, in id order."""
        return list(
            (
                await self._db.scalars(
                    select(memory_items.c.id)
                    .where(_of(memory_items, self.person), memory_items.c.id > after)
                    .order_by(memory_items.c.id)
                    .limit(limit)
                )
            ).all()
        )

    async def last_turn_item(self, at_or_before: datetime) -> Item | None:
        """The person's latest turn in recall said by then."""
        row = (
            await self._db.execute(
                select(memory_items)
                .where(
                    _of(memory_items, self.person),
                    _active(),
                    memory_items.c.kind == TURN,
                    memory_items.c.created_at <= at_or_before,
                )
                .order_by(memory_items.c.created_at.desc(), memory_items.c.id.desc())
                .limit(1)
            )
        ).first()
        return _item(row) if row else None

    async def forget(self, item: Item) -> list[str]:
        """Takes the item out of recall, with the turns it was made from (else they would bring
        it back); returns the ids that left recall."""
        moment = utc_now()
        hidden = [item.id]
        await self._set(item.id, forgotten_at=moment, forgotten_with=None)
        for turn in await self.items(item.turn_items):
            if turn.active:
                await self._set(turn.id, forgotten_at=moment, forgotten_with=item.id)
                hidden.append(turn.id)
        await self.record_changes(hidden)
        return hidden

    async def restore(self, item: Item) -> list[Item]:
        """Undoes a forget; returns the items back in recall."""
        await self._set(item.id, forgotten_at=None, forgotten_with=None)
        still_forgotten = [fact for fact in await self._forgotten_facts() if fact.id != item.id]
        back = [await self.get(item.id)]
        rows = await self._db.execute(
            select(memory_items).where(
                _of(memory_items, self.person), memory_items.c.forgotten_with == item.id
            )
        )
        turns = [_item(row) for row in rows]
        await self.record_changes([item.id, *(turn.id for turn in turns)])
        for turn in turns:
            keeper = next((f for f in still_forgotten if turn.id in f.turn_items), None)
            if keeper:  # another forgotten fact was made from this turn too: it stays hidden
                await self._set(turn.id, forgotten_with=keeper.id)
                continue
            await self._set(turn.id, forgotten_at=None, forgotten_with=None)
            back.append(await self.get(turn.id))
        return [restored for restored in back if restored is not None and restored.active]

    async def _forgotten_facts(self) -> list[Item]:
        rows = await self._db.execute(
            select(memory_items).where(
                _of(memory_items, self.person),
                memory_items.c.kind == FACT,
                memory_items.c.forgotten_at.is_not(None),
            )
        )
        return [_item(row) for row in rows]

    async def supersede(self, older_id: str, newer_id: str, *, merge: bool) -> list[str]:
        """The newer item replaces the older, which is kept as history; returns the ids that
        left recall. A merge (the same fact said again) carries the older sources over; a change
        of value also takes the older fact's turns out of recall."""
        older, newer = await self.get(older_id), await self.get(newer_id)
        if older is None or newer is None:
            return []
        moment = utc_now()
        left = [older.id]
        await self._set(older.id, superseded_by=newer.id, updated_at=moment)
        await self.record_changes([older.id, newer.id])
        if merge:
            await self._set(
                newer.id,
                source_seqs=sorted({*newer.source_seqs, *older.source_seqs}),
                turn_items=list(dict.fromkeys([*newer.turn_items, *older.turn_items])),
                updated_at=moment,
            )
            return left
        for turn in await self.items(older.turn_items):
            if turn.active and turn.id not in newer.turn_items:
                await self._set(turn.id, superseded_by=newer.id, updated_at=moment)
                left.append(turn.id)
        await self.record_changes(left)
        return left

    async def withdraw(self, ids: Sequence[str]) -> list[Item]:
        """Deletes items that never should have been made; what they had superseded comes back
        into recall, and is returned."""
        if not ids:
            return []
        await self._db.execute(
            delete(memory_items).where(_of(memory_items, self.person), memory_items.c.id.in_(ids))
        )
        rows = await self._db.execute(
            update(memory_items)
            .where(_of(memory_items, self.person), memory_items.c.superseded_by.in_(ids))
            .values(superseded_by=None, updated_at=utc_now())
            .returning(memory_items.c.id)
        )
        back = await self.items([row.id for row in rows])
        await self.record_changes([*ids, *(item.id for item in back)])
        return [item for item in back if item.active]

    async def previous_items(self, items: Iterable[Item]) -> dict[str, Item]:
        """The turn before each turn item, by the item's id, while that turn is in recall: a
        turn after a forgotten one is read alone."""
        wanted = {item.id: item.previous_item for item in items if item.previous_item}
        found = {turn.id: turn for turn in await self.items(set(wanted.values())) if turn.active}
        return {item: found[previous] for item, previous in wanted.items() if previous in found}

    async def followers(self, ids: Iterable[str]) -> list[Item]:
        """The turns in recall read after one of these items."""
        wanted = list(ids)
        if not wanted:
            return []
        rows = await self._db.execute(
            select(memory_items).where(
                _of(memory_items, self.person), _active(), memory_items.c.previous_item.in_(wanted)
            )
        )
        return [_item(row) for row in rows]

    async def purge_forgotten(self, before: datetime) -> list[str]:
        """Compaction: forgotten past the undo window is deleted for good."""
        ids = list(
            (
                await self._db.scalars(
                    select(memory_items.c.id).where(
                        _of(memory_items, self.person), memory_items.c.forgotten_at < before
                    )
                )
            ).all()
        )
        if ids:
            await self._db.execute(
                delete(memory_items).where(
                    _of(memory_items, self.person), memory_items.c.id.in_(ids)
                )
            )
        # Forgotten items left recall when they were forgotten: deleting them changes nothing
        # recall sees, and their listed changes can go once as old.
        await self._compact_changes(before)
        return ids

    async def forget_everything(self) -> int:
        """Deletes every row of the person's memory; returns how many. A capture of a turn
        answered before now is not taken from then on (`take_capture`), so the mark of the seqs
        taken starts again."""
        deleted = await self._delete_memory()
        moment = utc_now()
        upsert = self._insert(capture_marks).values(
            person=self.person, through_seq=0, forgotten_at=moment
        )
        await self._db.execute(
            upsert.on_conflict_do_update(
                index_elements=[capture_marks.c.person],
                set_={"through_seq": 0, "forgotten_at": moment},
            )
        )
        return deleted

    async def erase_everything(self) -> int:
        """Deletes every row of the person's memory and of their captures; returns how many."""
        deleted = await self._delete_memory()
        done = await self._db.execute(delete(capture_marks).where(_of(capture_marks, self.person)))
        return deleted + database.rows_changed(done)

    async def _delete_memory(self) -> int:
        deleted = 0
        # Turns first: on PostgreSQL this waits for a capture pass holding them to commit, and
        # the items it made are then deleted with the rest. Items before versions: a change
        # recorded meanwhile waits for them (`_has_items`), and its version is deleted after.
        # With no version left, recall knows the person has no memory; the next change starts
        # a new epoch.
        for table in (captured_turns, memory_items, memory_people, memory_versions, memory_changes):
            done = await self._db.execute(delete(table).where(_of(table, self.person)))
            deleted += database.rows_changed(done)
        return deleted

    async def transcript_items_through(self, seq: int) -> list[str]:
        """The ids of the turn and told items made of transcript messages up to `seq` alone,
        in any state (a retention trim). A turn item whose captured turn still waits for its facts
        is left to a later trim: the facts about to be made from it name it."""
        waiting = select(captured_turns.c.turn_item).where(
            _of(captured_turns, self.person),
            captured_turns.c.extracted_at.is_(None),
            captured_turns.c.turn_item.is_not(None),
        )
        rows = await self._db.execute(
            select(memory_items.c.id, memory_items.c.source_seqs)
            .where(
                _of(memory_items, self.person),
                memory_items.c.kind.in_((TURN, TOLD)),
                memory_items.c.id.not_in(waiting),
            )
            .order_by(memory_items.c.id)
        )
        return [row.id for row in rows if _made_through(row.source_seqs, seq)]

    async def delete_trimmed(self, ids: Sequence[str]) -> tuple[int, list[Item]]:
        """Deletes turn and told items whose transcript messages are gone; returns how many went,
        and the turns in recall that were read after one of them. Those are read alone from now
        on (`previous_item` cleared, so no link names a deleted item), and their vectors must be
        made again without the words that went. Facts made from the deleted turns stay, naming
        them in `turn_items`: every reader of those skips an id it does not find."""
        if not ids:
            return 0, []
        followed = (
            await self._db.scalars(
                update(memory_items)
                .where(
                    _of(memory_items, self.person),
                    memory_items.c.previous_item.in_(ids),
                    memory_items.c.id.not_in(ids),
                )
                .values(previous_item=None)
                .returning(memory_items.c.id)
            )
        ).all()
        deleted = await self._db.execute(
            delete(memory_items).where(_of(memory_items, self.person), memory_items.c.id.in_(ids))
        )
        # Recall on every replica drops the deleted items and reads the followers again.
        await self.record_changes([*ids, *followed])
        return database.rows_changed(deleted), [
            item for item in await self.items(followed) if item.active
        ]

    async def _set(self, item_id: str, **values: object) -> None:
        await self._db.execute(
            update(memory_items)
            .where(_of(memory_items, self.person), memory_items.c.id == item_id)
            .values(**values)
        )


def _of(table: Table, person: str) -> ColumnElement[bool]:
    return table.c.person == person


def _made_through(source_seqs: Sequence[int], seq: int) -> bool:
    """Whether what was made of these transcript messages went with those up to `seq`."""
    return bool(source_seqs) and max(source_seqs) <= seq


def _active() -> ColumnElement[bool]:
    return and_(memory_items.c.forgotten_at.is_(None), memory_items.c.superseded_by.is_(None))


def _captured(row: Row) -> CapturedTurn:
    return CapturedTurn(
        id=row.id,
        person_message=row.person_message,
        violet_answer=row.violet_answer,
        deeds=tuple(deed for deed in map(from_json, row.deeds or []) if deed),
        told=row.told or "",
        told_sources=sources_from(row.told_sources),
        speaker=row.speaker,
        source_seqs=tuple(row.source_seqs),
        at=row.at,
        turn_item=row.turn_item,
        attempts=row.attempts,
        captured_at=row.captured_at,
    )
