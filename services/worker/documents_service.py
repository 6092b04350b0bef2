"""The person's documents as a gRPC service: listed, opened, deleted and restored, for the person
of the call's token alone, and only by names that stay inside their documents folder."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import grpc

from violet.clock import timestamp
from violet.identity import authenticate
from violet.text import document_title
from violet.v1 import documents_pb2, documents_pb2_grpc
from worker.folders import DocumentError, Documents, Folders, NameTaken, NoSuchDocument

log = logging.getLogger(__name__)

# How often everyone's deleted documents are looked through for those kept long enough.
PURGE_EVERY_S = 3600.0

T = TypeVar("T")
Context = grpc.aio.ServicerContext[Any, Any]


class DocumentsService(documents_pb2_grpc.DocumentsServicer):
    def __init__(self, folders: Folders, secret: str) -> None:
        self._folders = folders
        self._secret = secret

    async def List(
        self, request: documents_pb2.ListDocumentsRequest, context: Context
    ) -> documents_pb2.DocumentsReply:
        return await self._listing_after(context, lambda documents: documents.purge_deleted())

    async def Open(
        self, request: documents_pb2.DocumentRequest, context: Context
    ) -> documents_pb2.OpenedDocument:
        person = (await authenticate(context, self._secret)).person
        name, text = await self._in(context, person, lambda documents: documents.read(request.name))
        return documents_pb2.OpenedDocument(name=name, title=document_title(name, text), text=text)

    async def Delete(
        self, request: documents_pb2.DocumentRequest, context: Context
    ) -> documents_pb2.DocumentsReply:
        return await self._listing_after(context, lambda documents: documents.delete(request.name))

    async def Restore(
        self, request: documents_pb2.DocumentRequest, context: Context
    ) -> documents_pb2.DocumentsReply:
        return await self._listing_after(context, lambda documents: documents.restore(request.name))

    async def _listing_after(
        self, context: Context, change: Callable[[Documents], object]
    ) -> documents_pb2.DocumentsReply:
        """Makes the change for the call's person, then lists their documents."""
        person = (await authenticate(context, self._secret)).person

        def changed(documents: Documents) -> documents_pb2.DocumentsReply:
            change(documents)
            return documents_pb2.DocumentsReply(
                documents=[
                    documents_pb2.DocumentEntry(
                        name=listed.name,
                        title=listed.title,
                        modified=timestamp(listed.modified),
                        size=listed.size,
                    )
                    for listed in documents.newest_first()
                ]
            )

        return await self._in(context, person, changed)

    async def _in(self, context: Context, person: str, action: Callable[[Documents], T]) -> T:
        """`action` on the person's documents, away from the event loop; a refusal ends the
        call with its words."""
        try:
            # Nothing here makes the person's folder: only their work writes documents.
            return await asyncio.to_thread(
                lambda: action(self._folders.documents(person, create=False))
            )
        except DocumentError as error:
            await _refuse(context, error)

    async def purge_forever(self) -> None:
        """Looks through everyone's deleted documents now and then, so those of people who
        never come back go when their time is up too."""
        while True:
            try:
                await asyncio.to_thread(self._folders.purge_deleted)
            except OSError as error:
                log.warning("deleted documents could not be purged", extra={"error": str(error)})
            await asyncio.sleep(PURGE_EVERY_S)


async def _refuse(context: Context, error: DocumentError) -> NoReturn:
    code = grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(error, NoSuchDocument):
        code = grpc.StatusCode.NOT_FOUND
    elif isinstance(error, NameTaken):
        code = grpc.StatusCode.ALREADY_EXISTS
    await context.abort(code, str(error))
