"""`violet chat`: a terminal client that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid

import websockets

from violet.settings import CommonSettings, load_settings
from violet_cli.tokens import local_token

DIM, RESET = "\033[2m", "\033[0m"


def _show(frame: dict) -> None:
    kind = frame.get("type")
    if kind == "message":
        who = "you" if frame["from"] == "you" else "Violet"
        print(f"\r{who}: {frame['text']}")
    elif kind == "activity" and frame.get("text"):
        print(f"\r{DIM}({frame['text']}){RESET}")
    elif kind == "memory":
        print("\rWhat Violet remembers:")
        for item in frame["items"]:
            print(f"  [{item['item']}] {item['text']} (from {item['origin']})")
        if not frame["items"]:
            print("  nothing yet")
    elif kind == "error":
        print(f"\r{frame['text']}")


async def _receive(socket: websockets.ClientConnection) -> None:
    async for raw in socket:
        _show(json.loads(raw))


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
        if welcome.get("type") != "welcome":
            _show(welcome)
            return 1
        print(
            f"{DIM}Type a message and press Enter. /memory shows what Violet remembers; "
            f"Ctrl-D leaves.{RESET}"
        )
        receiver = asyncio.create_task(_receive(socket))
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if line.strip():
                await socket.send(json.dumps(_command(line.strip())))
        receiver.cancel()
    return 0


def chat(url: str, person: str) -> int:
    settings = load_settings(CommonSettings)
    address = url or f"ws://{settings.gateway_addr}"
    try:
        return asyncio.run(_talk(address.rstrip("/") + "/v1/live", local_token(person)))
    except (OSError, websockets.WebSocketException) as error:
        print(f"Violet can't be reached at {address}: {error}", file=sys.stderr)
        return 1
