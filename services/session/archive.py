"""A person's whole archive: one zip, made as it is sent.

The session's own sections (the conversation, devices, usage, account) and the other services'
(`PersonData.Export` of memory and the worker) are read a page or a record at a time. Each
record goes to a spool file on disk and each document straight into the zip, so a long history
never sits in memory; the spool is then written out twice, as `data.json` (the schema in
docs/export.schema.json) and as `your-data.md`, for reading. The zip is written to a sink that
is emptied after every record, so the archive streams to the caller while it is made.
"""

from __future__ import annotations

import json
import re
import tempfile
import zipfile
from collections.abc import AsyncIterator, Iterator
from datetime import date
from typing import IO, Any
from urllib.parse import urlsplit

from sqlalchemy import select

from session.archive_text import README, markdown_lines
from session.tables import (
    budgets,
    conversations,
    devices,
    messages,
    model_usage,
    person_keys,
    push_subscriptions,
    reminders,
)
from violet.channels import Peers
from violet.clock import Clock, utc_now
from violet.database import Database
from violet.identity import acting_for, service_identity
from violet.person_data import when
from violet.v1 import persons_pb2, persons_pb2_grpc

FORMAT = "violet-export"
VERSION = 1
PAGE = 500
# The sections of data.json in order, and the service each comes from.
SECTIONS = (
    "conversation",
    "remembered",
    "told",
    "documents",
    "work",
    "approvals",
    "reminders",
    "devices",
    "notifications",
    "usage",
)
FROM_PEERS = {"memory": ("remembered", "told"), "worker": ("documents", "work", "approvals")}
CHUNK = 64 * 1024
_UNSAFE = re.compile(r"[^\w.\- ]+")

Record = dict[str, Any]


class BrokenExport(Exception):
    """A service's records broke the export's contract (a section out of place)."""


class Archive:
    def __init__(
        self,
        db: Database,
        peers: Peers,
        secret: str,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self._peers = peers
        self._secret = secret
        self._clock = clock

    async def chunks(self, person: str) -> AsyncIterator[bytes]:
        """The archive's bytes, in order."""
        sink = _Sink()
        with acting_for(person), tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
            with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("README.md", README)
                documents = _Documents(archive)
                async for section, record, content in self._records(person):
                    if section == "documents":
                        record["file"] = documents.add(record, content)
                    spool.write(json.dumps([section, record], ensure_ascii=False) + "\n")
                    for chunk in sink.take():
                        yield chunk
                heading = {
                    "format": FORMAT,
                    "version": VERSION,
                    "person": person,
                    "exported_at": when(self._clock()),
                }
                _write(archive, "data.json", _data_json(heading, spool))
                for chunk in sink.take():
                    yield chunk
                _write(archive, "your-data.md", markdown_lines(heading, _spooled(spool)))
            for chunk in sink.take(final=True):
                yield chunk

    async def _records(self, person: str) -> AsyncIterator[tuple[str, Record, bytes]]:
        async for record in self._conversation(person):
            yield "conversation", record, b""
        identity = service_identity(person, self._secret)
        for service in FROM_PEERS:
            stub = self._peers.stub(service, persons_pb2_grpc.PersonDataStub)
            stream = stub.Export(persons_pb2.ExportRequest(), metadata=identity.metadata())
            async for sent in stream:
                if sent.section not in FROM_PEERS[service]:
                    raise BrokenExport(f"{service} sent a record of section {sent.section!r}")
                yield sent.section, json.loads(sent.json), sent.content
        sections = (
            ("reminders", self._reminders),
            ("devices", self._devices),
            ("notifications", self._notifications),
            ("usage", self._usage),
        )
        for section, rows in sections:
            for record in await rows(person):
                yield section, record, b""
        yield "account", await self._account(person), b""

    async def _conversation(self, person: str) -> AsyncIterator[Record]:
        after = 0
        while True:
            async with self._db() as db:
                rows = (
                    await db.execute(
                        select(messages.c.seq, messages.c.author, messages.c.text, messages.c.at)
                        .join(conversations, conversations.c.id == messages.c.conversation_id)
                        .where(conversations.c.person == person, messages.c.seq > after)
                        .order_by(messages.c.seq)
                        .limit(PAGE)
                    )
                ).all()
            for row in rows:
                yield {"seq": row.seq, "author": row.author, "text": row.text, "at": when(row.at)}
            if len(rows) < PAGE:
                return
            after = rows[-1].seq

    async def _reminders(self, person: str) -> list[Record]:
        """Every reminder the person set, open or not: its words, its times and its zone."""
        async with self._db() as db:
            rows = (
                await db.execute(
                    select(reminders)
                    .join(conversations, conversations.c.id == reminders.c.conversation_id)
                    .where(conversations.c.person == person)
                    .order_by(reminders.c.created_at, reminders.c.id)
                )
            ).all()
        return [
            {
                "text": row.text,
                "work": row.work,
                "starts": row.starts,
                "zone": row.zone,
                "repeat": row.repeat,
                "next": when(row.next_at) if row.next_at else None,
                "set_at": when(row.created_at),
                "cancelled_at": when(row.cancelled_at) if row.cancelled_at else None,
            }
            for row in rows
        ]

    async def _devices(self, person: str) -> list[Record]:
        async with self._db() as db:
            rows = (
                await db.execute(
                    select(devices).where(devices.c.person == person).order_by(devices.c.first_seen)
                )
            ).all()
        return [
            {
                "signed_in_at": when(row.signed_in_at),
                "first_seen": when(row.first_seen),
                "last_seen": when(row.last_seen),
                "agent": row.agent,
            }
            for row in rows
        ]

    async def _notifications(self, person: str) -> list[Record]:
        """Each browser that takes notifications: where they go (the browser's keys are not
        the person's data, only the means to reach it)."""
        async with self._db() as db:
            rows = (
                await db.execute(
                    select(push_subscriptions)
                    .where(push_subscriptions.c.person == person)
                    .order_by(push_subscriptions.c.created_at, push_subscriptions.c.device)
                )
            ).all()
        return [
            {
                "service": urlsplit(row.endpoint).hostname or "",
                "address": row.endpoint,
                "previews": bool(row.previews),
                "since": when(row.created_at),
                "changed": when(row.updated_at),
            }
            for row in rows
        ]

    async def _usage(self, person: str) -> list[Record]:
        async with self._db() as db:
            rows = (
                await db.execute(
                    select(model_usage)
                    .where(model_usage.c.person == person)
                    .order_by(model_usage.c.day, model_usage.c.call, model_usage.c.model)
                )
            ).all()
        sums = ("calls", "input_tokens", "cache_write_tokens", "cache_read_tokens")
        return [
            {
                "day": _day(row.day),
                "call": row.call,
                "payer": row.payer,
                "model": row.model,
                **{name: int(getattr(row, name)) for name in (*sums, "output_tokens")},
                "cost_usd": float(row.cost_usd),
            }
            for row in rows
        ]

    async def _account(self, person: str) -> Record:
        async with self._db() as db:
            key = (
                await db.execute(select(person_keys).where(person_keys.c.person == person))
            ).first()
            budget = (await db.execute(select(budgets).where(budgets.c.person == person))).first()
        own_key = None
        if key is not None:
            refused = when(key.refused_at) if key.refused_at else None
            own_key = {"ending": key.ending, "set_at": when(key.set_at), "refused_at": refused}
        return {
            "own_key": own_key,
            "budget": {
                "day_usd": budget.day_usd if budget else None,
                "month_usd": budget.month_usd if budget else None,
            },
        }


def _day(value: date | str) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


class _Documents:
    """Each document's text as a file of the archive, under a name of its own."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self._archive = archive
        self._taken: set[str] = set()

    def add(self, record: Record, content: bytes) -> str:
        folder = "documents/deleted" if record.get("deleted") else "documents"
        name = _UNSAFE.sub("_", str(record.get("name", ""))).strip(". ") or "document"
        path, n = f"{folder}/{name}", 1
        while path in self._taken:
            n += 1
            path = f"{folder}/{n}-{name}"
        self._taken.add(path)
        with self._archive.open(path, "w", force_zip64=True) as file:
            file.write(content)
        return path


def _spooled(spool: IO[str]) -> Iterator[tuple[str, Record]]:
    spool.seek(0)
    for line in spool:
        section, record = json.loads(line)
        yield section, record


def _data_json(heading: Record, spool: IO[str]) -> Iterator[str]:
    """data.json in pieces: the heading, then each section's records as they were spooled
    (a section's records come together), then any section that had none, empty."""
    yield json.dumps(heading, ensure_ascii=False)[:-1]
    seen: list[str] = []
    in_array = False
    for section, record in _spooled(spool):
        text = json.dumps(record, ensure_ascii=False)
        if seen and seen[-1] == section and in_array:
            yield ", " + text
            continue
        if section in seen:
            raise BrokenExport(f"the records of {section!r} did not come together")
        if in_array:
            yield "]"
        seen.append(section)
        in_array = section != "account"
        yield f', "{section}": ' + ("[" + text if in_array else text)
    if in_array:
        yield "]"
    for section in SECTIONS:
        if section not in seen:
            yield f', "{section}": []'
    yield "}\n"


def _write(archive: zipfile.ZipFile, name: str, pieces: Iterator[str]) -> None:
    with archive.open(name, "w", force_zip64=True) as file:
        for piece in pieces:
            file.write(piece.encode())


class _Sink:
    """Where the zip is written: a write-only stream whose bytes are taken as they come."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def write(self, data: bytes, /) -> int:
        self._pending += data
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self, final: bool = False) -> Iterator[bytes]:
        """Whole chunks of what was written; everything left when `final`."""
        while len(self._pending) >= CHUNK or (final and self._pending):
            chunk = bytes(self._pending[:CHUNK])
            del self._pending[:CHUNK]
            yield chunk
