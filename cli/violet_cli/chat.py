"""`violet chat`: a terminal client that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import websockets

from violet.settings import CommonSettings, load_settings
from violet_cli.tokens import local_token

# How long leaving waits for answers still on their way.
LEAVE_WAIT_S = 60.0
HISTORY_WAIT_S = 30.0


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if sys.stdout.isatty() else text


class Chat:
    def __init__(self, socket: websockets.ClientConnection, newest: int) -> None:
        self.socket = socket
        self.newest = newest
        self.caught_up = asyncio.Event()
        if newest == 0:
            self.caught_up.set()
        self.waiting: set[str] = set()
        self.answered = asyncio.Event()

    async def receive(self) -> None:
        async for raw in self.socket:
            frame = json.loads(raw)
            self.show(frame)
            if frame.get("type") == "message" and frame["seq"] >= self.newest:
                self.caught_up.set()
            if frame.get("type") == "message" and frame.get("reply_to") in self.waiting:
                self.waiting.discard(frame["reply_to"])
                self.answered.set()

    def show(self, frame: dict) -> None:
        kind = frame.get("type")
        if kind == "message":
            who = "you" if frame["from"] == "you" else "Violet"
            print(f"{who}: {frame['text']}", flush=True)
        elif kind == "activity" and frame.get("text"):
            print(_dim(f"({frame['text']})"), flush=True)
        elif kind == "memory":
            print("What Violet remembers:")
            for item in frame["items"]:
                print(f"  [{item['item']}] {item['text']} (from {item['origin']})")
            if not frame["items"]:
                print("  nothing yet")
        elif kind == "error":
            print(frame["text"], flush=True)

    async def send(self, line: str) -> None:
        frame = _command(line)
        if frame["type"] == "say":
            self.waiting.add(frame["id"])
        await self.socket.send(json.dumps(frame))

    async def until_answered(self) -> None:
        while self.waiting:
            self.answered.clear()
            await self.answered.wait()


def _command(line: str) -> dict:
    """`/memory`, `/forget ITEM`, `/restore ITEM`, `/forget-all`, or a message."""
    words = line.split()
    if words and words[0] == "/memory":
        return {"type": "memory.list"}
    if words and words[0] == "/forget-all":
        return {"type": "memory.forget_all"}
    if len(words) == 2 and words[0] in ("/forget", "/restore"):
        return {"type": f"memory.{words[0][1:]}", "item": words[1]}
    return {"type": "say", "id": uuid.uuid4().hex, "text": line}


async def _talk(url: str, token: str) -> int:
    async with websockets.connect(url) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        welcome = json.loads(await socket.recv())
        chat = Chat(socket, welcome.get("seq", 0))
        if welcome.get("type") != "welcome":
            chat.show(welcome)
            return 1
        receiver = asyncio.create_task(chat.receive())
        await asyncio.wait_for(chat.caught_up.wait(), HISTORY_WAIT_S)  # the story so far first
        print(_dim("Type a message and press Enter; /memory shows what Violet remembers."))

        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.strip():
                await chat.send(line.strip())
        try:
            await asyncio.wait_for(chat.until_answered(), LEAVE_WAIT_S)
        except TimeoutError:
            print("Leaving before every answer arrived; they will be here next time.")
        receiver.cancel()
    return 0


def chat(url: str, person: str) -> int:
    settings = load_settings(CommonSettings)
    address = (url or f"ws://{settings.gateway_addr}").replace("http://", "ws://", 1)
    address = address.replace("https://", "wss://", 1).rstrip("/")
    try:
        return asyncio.run(_talk(address + "/v1/live", local_token(person)))
    except (OSError, websockets.WebSocketException) as error:
        print(f"Violet can't be reached at {address}: {error}", file=sys.stderr)
        return 1
