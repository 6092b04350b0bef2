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


@dataclass(frozen=True)
class Horizon:
    """What the operator's retention lets go of a person's (`violet.v1.TrimRequest`)."""

    # Transcript messages up to this seq are gone (0: none).
    transcript_through_seq: int = 0
    # What the transcript led to before this moment goes (None: nothing).
    transcript_before: datetime | None = None
    # Work finished before this moment goes (None: nothing).
    work_before: datetime | None = None

    def request(self) -> persons_pb2.TrimRequest:
        return persons_pb2.TrimRequest(
            transcript_through_seq=self.transcript_through_seq,
            transcript_before_unix=_unix(self.transcript_before),
            work_before_unix=_unix(self.work_before),
        )

    @classmethod
    def of(cls, request: persons_pb2.TrimRequest) -> Horizon:
        return cls(
            transcript_through_seq=max(0, request.transcript_through_seq),
            transcript_before=_moment(request.transcript_before_unix),
            work_before=_moment(request.work_before_unix),
        )


def _unix(moment: datetime | None) -> int:
    return int(moment.timestamp()) if moment is not None else 0


def _moment(unix: int) -> datetime | None:
    return datetime.fromtimestamp(unix, UTC) if unix > 0 else None


class HeldData(Protocol):
    def export(self, person: str) -> AsyncIterator[Record]:
        """The person's records, each section's together, oldest first."""
        ...

    async def erase(self, person: str) -> Erased:
        """Stops the person's work here, then removes all of theirs; idempotent."""
        ...

    async def trim(self, person: str, horizon: Horizon) -> Erased:
        """Removes what the horizon lets go of the person's; idempotent."""
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

    async def Trim(
        self, request: persons_pb2.TrimRequest, context: Context
    ) -> persons_pb2.EraseReply:
        person = (await authenticate(context, self._secret)).person
        trimmed = await self._held.trim(person, Horizon.of(request))
        return persons_pb2.EraseReply(
            rows=trimmed.rows, vectors=trimmed.vectors, files=trimmed.files
        )
