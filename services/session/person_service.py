"""The gRPC faces of a person's whole data: `YourData` for the person themself (through the
gateway: the page's download and delete), and the operator's export and delete."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import grpc

from session.archive import Archive, BrokenExport
from session.erasure import Erased, Erasure, Removed, Standing, signed_in
from violet.identity import authenticate
from violet.v1 import persons_pb2, persons_pb2_grpc

SIGNED_OUT = "signed out: this account was deleted"


async def may_serve(
    standing: Standing,
    person: str,
    context: grpc.aio.ServicerContext,
    signed_in_at: datetime | None = None,
) -> str | None:
    """Ends the call with UNAUTHENTICATED unless the person may be served (`Standing.check`);
    else the id of their conversation, None before their first message."""
    try:
        return await standing.check(person, signed_in_at)
    except Removed:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, SIGNED_OUT)
        raise


# What a person confirms a deletion with (docs/protocol.md), in any case and spacing.
DELETE_CONFIRMATION = "delete everything"
UNREACHABLE = (
    "Part of your data can't be reached just now, so no archive was made. "
    "Please try again in a few minutes."
)
NOT_FINISHED = (
    "Deleting didn't finish just now. It goes on by itself in the next minutes, and "
    "nothing of yours is used meanwhile."
)


def confirmed(words: str) -> bool:
    return " ".join(words.lower().split()) == DELETE_CONFIRMATION


async def archive_chunks(
    archive: Archive, person: str, context: grpc.aio.ServicerContext
) -> AsyncIterator[persons_pb2.ArchiveChunk]:
    try:
        async for data in archive.chunks(person):
            yield persons_pb2.ArchiveChunk(data=data)
    except (grpc.aio.AioRpcError, BrokenExport):
        await context.abort(grpc.StatusCode.UNAVAILABLE, UNREACHABLE)


async def remove(
    erasure: Erasure, person: str, by: str, context: grpc.aio.ServicerContext
) -> persons_pb2.DeleteReply:
    try:
        erased: Erased = await erasure.remove(person, by)
    except grpc.aio.AioRpcError:
        # The removal is written down: the sweep finishes it, and the person is not served.
        await context.abort(grpc.StatusCode.UNAVAILABLE, NOT_FINISHED)
    return persons_pb2.DeleteReply(erased_at_unix=int(erased.at.timestamp()), held=erased.held)


class YourDataService(persons_pb2_grpc.YourDataServicer):
    def __init__(self, archive: Archive, erasure: Erasure, standing: Standing, secret: str) -> None:
        self._archive = archive
        self._erasure = erasure
        self._standing = standing
        self._secret = secret

    async def Export(
        self,
        request: persons_pb2.ExportArchiveRequest,
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[persons_pb2.ArchiveChunk]:
        identity = await authenticate(context, self._secret)
        await self._may_serve(identity.person, request.signed_in_at_unix, context)
        async for chunk in archive_chunks(self._archive, identity.person, context):
            yield chunk

    async def Delete(
        self,
        request: persons_pb2.DeleteMeRequest,
        context: grpc.aio.ServicerContext,
    ) -> persons_pb2.DeleteReply:
        identity = await authenticate(context, self._secret)
        await self._may_serve(identity.person, request.signed_in_at_unix, context)
        if not confirmed(request.confirmation):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f'Nothing was deleted: to delete everything, confirm with "{DELETE_CONFIRMATION}".',
            )
        return await remove(self._erasure, identity.person, "person", context)

    async def _may_serve(
        self, person: str, signed_in_at_unix: int, context: grpc.aio.ServicerContext
    ) -> None:
        await may_serve(self._standing, person, context, signed_in(signed_in_at_unix))
