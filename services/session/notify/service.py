"""The gRPC face of notifications: a device asks whether they are on, turns them on, or off."""

from __future__ import annotations

import logging

import grpc

from session.erasure import Standing
from session.notify.subscriptions import Subscription, Subscriptions
from session.person_service import may_serve
from violet.identity import Identity, authenticate
from violet.push import WEB_PUSH, BadEndpoint, PushAddress, check_endpoint, check_keys
from violet.v1 import notifications_pb2, notifications_pb2_grpc

log = logging.getLogger(__name__)

MAX_DEVICE_CHARS = 128


class NotificationsService(notifications_pb2_grpc.NotificationsServicer):
    def __init__(
        self,
        subscriptions: Subscriptions,
        key: str,
        secret: str,
        standing: Standing,
        block_private: bool,
    ) -> None:
        """`key` is the application server key browsers subscribe with; "" when this server
        sends no notifications."""
        self._subscriptions = subscriptions
        self._key = key
        self._secret = secret
        self._standing = standing
        self._block_private = block_private

    async def State(
        self,
        request: notifications_pb2.PushDevice,
        context: grpc.aio.ServicerContext[
            notifications_pb2.PushDevice, notifications_pb2.PushState
        ],
    ) -> notifications_pb2.PushState:
        identity = await self._person(context)
        device = await _device(request.device, context)
        return await self._state(identity.person, device)

    async def TurnOn(
        self,
        request: notifications_pb2.PushSubscription,
        context: grpc.aio.ServicerContext[
            notifications_pb2.PushSubscription, notifications_pb2.PushState
        ],
    ) -> notifications_pb2.PushState:
        identity = await self._person(context)
        device = await _device(request.device, context)
        if not self._key or request.kind != WEB_PUSH:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "This server sends no such notifications."
            )
        try:
            endpoint = await check_endpoint(request.endpoint, self._block_private)
            check_keys(request.p256dh, request.auth)
        except BadEndpoint as refused:
            log.info("a notification address was refused", extra={"reason": refused.detail})
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(refused))
        address = PushAddress(WEB_PUSH, endpoint, request.p256dh, request.auth)
        kept = Subscription(device, address, request.previews, request.signed_in_device)
        await self._subscriptions.keep(identity.person, kept)
        return await self._state(identity.person, device)

    async def TurnOff(
        self,
        request: notifications_pb2.PushDevice,
        context: grpc.aio.ServicerContext[
            notifications_pb2.PushDevice, notifications_pb2.PushState
        ],
    ) -> notifications_pb2.PushState:
        identity = await self._person(context)
        device = await _device(request.device, context)
        await self._subscriptions.remove(identity.person, device)
        return await self._state(identity.person, device)

    async def _person(self, context: grpc.aio.ServicerContext) -> Identity:
        identity = await authenticate(context, self._secret)
        await may_serve(self._standing, identity.person, context)
        return identity

    async def _state(self, person: str, device: str) -> notifications_pb2.PushState:
        kept = await self._subscriptions.one(person, device)
        return notifications_pb2.PushState(
            key=self._key, on=kept is not None, previews=bool(kept and kept.previews)
        )


async def _device(device: str, context: grpc.aio.ServicerContext) -> str:
    if not 0 < len(device) <= MAX_DEVICE_CHARS or "\x00" in device:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Say which device you mean.")
    return device
