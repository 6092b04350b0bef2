"""The face every service that holds a person's data serves to the session
(`violet.v1.PersonData`): the person is the one the call's internal token names; what a service
exports and how it erases are its own (`HeldData`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import grpc

from violet.identity import authenticate
from violet.v1 import persons_pb2, persons_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]


def when(at: datetime) -> str:
    """RFC 3339 in UTC, as the archive's schema (docs/export.schema.json) wants it."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Record:
    """One record of an archive section, shaped as the schema says for the section."""

    section: str
    fields: dict[str, Any]
    # A document's text, in the "documents" section only.
    content: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class Erased:
    """What an erase removed, for the operator's report."""

    rows: int = 0
    vectors: int = 0
    files: int = 0


class HeldData(Protocol):
    def export(self, person: str) -> AsyncIterator[Record]:
        """The person's records, each section's together, oldest first."""
        ...

    async def erase(self, person: str) -> Erased:
        """Stops the person's work here, then removes all of theirs; idempotent."""
        ...


class PersonDataService(persons_pb2_grpc.PersonDataServicer):
    def __init__(self, held: HeldData, secret: str) -> None:
        self._held = held
        self._secret = secret

    async def Export(
        self, request: persons_pb2.ExportRequest, context: Context
    ) -> AsyncIterator[persons_pb2.ExportRecord]:
        person = (await authenticate(context, self._secret)).person
        async for record in self._held.export(person):
            yield persons_pb2.ExportRecord(
                section=record.section,
                json=json.dumps(record.fields, ensure_ascii=False),
                content=record.content,
            )

    async def Erase(
        self, request: persons_pb2.EraseRequest, context: Context
    ) -> persons_pb2.EraseReply:
        person = (await authenticate(context, self._secret)).person
        erased = await self._held.erase(person)
        return persons_pb2.EraseReply(rows=erased.rows, vectors=erased.vectors, files=erased.files)
