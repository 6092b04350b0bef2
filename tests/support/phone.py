"""A phone that outlives the stack it talks to: it keeps every message it was shown and resends
each say, with the same id, until it is acked, as a phone on a flaky connection does."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import websockets

from tests.support.device import Device


class Phone:
    def __init__(self, url: str, token: str) -> None:
        self._url = url
        self._token = token
        self._device: Device | None = None
        self.shown: dict[int, dict[str, Any]] = {}
        self.unacked: dict[str, str] = {}

    async def connect(self) -> None:
        """Says hello with the newest seq shown, then resends every say not yet acked."""
        since = max(self.shown, default=0)
        self._device, _ = await Device.open(self._url, self._token, since=since)
        for message_id, text in self.unacked.items():
            await self._device.send({"type": "say", "id": message_id, "text": text})

    async def say(self, text: str) -> str:
        message_id = uuid.uuid4().hex
        self.unacked[message_id] = text
        assert self._device is not None
        await self._device.send({"type": "say", "id": message_id, "text": text})
        return message_id

    async def until(self, shown: Any, timeout: float) -> None:  # shown: Callable[[Phone], bool]
        """Reads frames until `shown(self)` holds."""
        assert self._device is not None
        async with asyncio.timeout(timeout):
            while not shown(self):
                self._take(await self._device.next(timeout))

    def _take(self, frame: dict[str, Any]) -> None:
        if frame["type"] == "ack":
            self.unacked.pop(frame["id"], None)
        elif frame["type"] == "message":
            self.shown[frame["seq"]] = frame

    async def drop(self) -> None:
        """The connection is gone with the stack; what was not read is read again later."""
        if self._device is not None:
            with contextlib.suppress(websockets.WebSocketException):
                await self._device.close()
            self._device = None

    def answers_to(self, message_id: str) -> list[dict[str, Any]]:
        return [f for f in self.shown.values() if f.get("reply_to") == message_id]

    def later(self, words: str) -> list[dict[str, Any]]:
        """Violet's messages that answer no say (results and questions) holding `words`."""
        return [
            f
            for f in self.shown.values()
            if f["from"] == "violet" and "reply_to" not in f and words in f["text"]
        ]
