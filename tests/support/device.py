"""A phone, as the tests see it: a websocket that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import websockets

from tests.support.waiting import eventually

FRAME_TIMEOUT_S = 20.0


class Device:
    def __init__(self, socket: websockets.ClientConnection) -> None:
        self.socket = socket
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, url: str) -> Device:
        return cls(await websockets.connect(url, max_size=2**22))

    @classmethod
    async def open(
        cls, url: str, token: str, since: int = 0, tz: str | None = None
    ) -> tuple[Device, dict[str, Any]]:
        """A device that said hello (with its time zone, `tz`, when given) and was welcomed."""
        device = await cls.connect(url)
        hello: dict[str, Any] = {"type": "hello", "token": token, "since": since}
        if tz is not None:
            hello["tz"] = tz
        await device.send(hello)
        welcome = await device.next()
        assert welcome["type"] == "welcome", welcome
        return device, welcome

    async def send(self, frame: dict[str, Any] | str | bytes) -> None:
        """A dict goes as JSON text; text and bytes go as they are (a text or binary frame)."""
        await self.socket.send(json.dumps(frame) if isinstance(frame, dict) else frame)

    async def say(self, text: str, message_id: str | None = None) -> str:
        message_id = message_id or uuid.uuid4().hex
        await self.send({"type": "say", "id": message_id, "text": text})
        return message_id

    async def next(self, timeout: float = FRAME_TIMEOUT_S) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.socket.recv(), timeout))
        self.seen.append(frame)
        return frame

    async def until(self, predicate, timeout: float = FRAME_TIMEOUT_S) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        """Reads frames until one matches; the skipped ones stay in `seen`."""
        async with asyncio.timeout(timeout):
            while True:
                frame = await self.next(timeout)
                if predicate(frame):
                    return frame

    async def answer_to(self, message_id: str, timeout: float = FRAME_TIMEOUT_S) -> dict[str, Any]:
        return await self.until(
            lambda f: f["type"] == "message" and f.get("reply_to") == message_id, timeout
        )

    async def answers_to(self, *message_ids: str, timeout: float = FRAME_TIMEOUT_S) -> None:
        """Reads until every one of the messages has its answer, in whatever order they come."""

        def answered() -> set[str]:
            return {f.get("reply_to") for f in self.seen if f["type"] == "message"}

        async with asyncio.timeout(timeout):
            while not set(message_ids) <= answered():
                await self.next(timeout)

    async def memory_page(self, wanted: int, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """The memory page once it lists `wanted` items (facts are made in the background)."""

        async def listed() -> list[dict[str, Any]]:
            await self.send({"type": "memory.list"})
            page = await self.until(lambda f: f["type"] == "memory")
            return page["items"] if len(page["items"]) >= wanted else []

        return await eventually(
            listed, f"{wanted} items on the memory page", timeout_s=timeout_s, every_s=0.2
        )

    async def ask(self, text: str) -> dict[str, Any]:
        return await self.answer_to(await self.say(text))

    async def close(self) -> None:
        await self.socket.close()
