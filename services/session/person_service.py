"""The gRPC faces of a person's whole data: `YourData` for the person themself (through the
gateway: the page's download and delete), and the operator's export and delete."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

import grpc

from session.archive import Archive, BrokenExport
from session.devices import Devices, SignedIn, UnknownDevice
from session.erasure import DeviceSignedOut, Erased, Erasure, Removed, Standing, signed_in
from session.feed import Feed
from session.reminders.page import ReminderPage
from violet.clock import timestamp
from violet.identity import ACCOUNT_DELETED, DEVICE_SIGNED_OUT, authenticate
from violet.v1 import persons_pb2, persons_pb2_grpc


def refusal(removed: Removed) -> str:
    """What an UNAUTHENTICATED call is told: the device alone, or the whole account."""
    return DEVICE_SIGNED_OUT if isinstance(removed, DeviceSignedOut) else ACCOUNT_DELETED


async def may_serve(
    standing: Standing,
    person: str,
    context: grpc.aio.ServicerContext,
    signed_in_at: datetime | None = None,
    device: str = "",
) -> str | None:
    """Ends the call with UNAUTHENTICATED unless the person (and the asking device, when one
    is named) may be served (`Standing.check`); else the id of their conversation, None before
    their first message."""
    try:
        return await standing.check(person, signed_in_at, device)
    except Removed as removed:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal(removed))
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


def devices_reply(listed: list[SignedIn]) -> persons_pb2.DevicesReply:
    return persons_pb2.DevicesReply(
        devices=[
            persons_pb2.Device(
                device=device.handle,
                agent=device.agent,
                first_seen=timestamp(device.first_seen),
                last_seen=timestamp(device.last_seen),
                this_device=device.this_device,
            )
            for device in listed
        ]
    )


async def signed_out(
    devices: Devices,
    feed: Feed,
    person: str,
    handle: str | None,
    context: grpc.aio.ServicerContext,
) -> None:
    """Signs the device (or every device) out; the person's streams here read their standing
    again at once (other replicas' are woken by the sign-out itself)."""
    try:
        conversation = await devices.sign_out(person, handle)
    except UnknownDevice:
        await context.abort(grpc.StatusCode.NOT_FOUND, "there is no such signed-in device")
        raise
    if conversation is not None:
        feed.publish(conversation)


class YourDataService(persons_pb2_grpc.YourDataServicer):
    def __init__(
        self,
        archive: Archive,
        erasure: Erasure,
        standing: Standing,
        secret: str,
        devices: Devices,
        feed: Feed,
        reminders: ReminderPage,
    ) -> None:
        self._reminders = reminders
        self._archive = archive
        self._erasure = erasure
        self._standing = standing
        self._secret = secret
        self._devices = devices
        self._feed = feed

    async def Export(
        self,
        request: persons_pb2.ExportArchiveRequest,
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[persons_pb2.ArchiveChunk]:
        identity = await authenticate(context, self._secret)
        signed_in_at = signed_in(request.signed_in_at_unix)
        await may_serve(self._standing, identity.person, context, signed_in_at, request.device)
        async for chunk in archive_chunks(self._archive, identity.person, context):
            yield chunk

    async def Devices(
        self, request: persons_pb2.DevicesRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.DevicesReply:
        identity = await authenticate(context, self._secret)
        await may_serve(self._standing, identity.person, context, device=request.asking)
        return devices_reply(await self._devices.listed(identity.person, request.asking))

    async def SignOut(
        self, request: persons_pb2.SignOutRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.DevicesReply:
        identity = await authenticate(context, self._secret)
        person = identity.person
        await may_serve(self._standing, person, context, device=request.asking)
        handle = None if request.all else request.device
        await signed_out(self._devices, self._feed, person, handle, context)
        return devices_reply(await self._devices.listed(person, request.asking))

    async def Reminders(
        self, request: persons_pb2.RemindersRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.RemindersReply:
        identity = await authenticate(context, self._secret)
        await may_serve(self._standing, identity.person, context, device=request.asking)
        return await self._reminders.listed(identity.person, request.language)

    async def CancelReminder(
        self, request: persons_pb2.CancelReminderRequest, context: grpc.aio.ServicerContext
    ) -> persons_pb2.RemindersReply:
        identity = await authenticate(context, self._secret)
        await may_serve(self._standing, identity.person, context, device=request.asking)
        if not await self._reminders.cancel(identity.person, request.reminder):
            await context.abort(grpc.StatusCode.NOT_FOUND, "there is no such open reminder")
        return await self._reminders.listed(identity.person, request.language)

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
