"""`violet chat`: a terminal client that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import websockets

from violet.models import JsonObject
from violet.settings import CommonSettings, load_settings
from violet_cli.tokens import NoLocalStack, local_token

# How long leaving waits for answers still on their way.
LEAVE_WAIT_S = 60.0
HISTORY_WAIT_S = 30.0

HELP = """\
Type a message and press Enter to talk to Violet. Ctrl-D leaves; the conversation waits for you.
  /memory        what Violet remembers about you, numbered
  /forget N      forget item N of that list (you can undo it)
  /restore N     undo forgetting item N
  /forget-all    forget everything, for good (asks first)
  /key           your own Anthropic key: whether one is in use, and what it paid this month
  /key set       use your own Anthropic key (asks for it without showing it)
  /key remove    stop using your own key
  /help          this list"""

ORIGINS = {"you": "you told me", "violet": "I did this"}


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if sys.stdout.isatty() else text


@dataclass(frozen=True)
class Said:
    """A line for the gateway, or words for the person only (a mistake, a question)."""

    frame: JsonObject | None = None
    reply: str = ""


class MemoryNumbers:
    """Short, stable numbers for memory items: an item keeps its number for the whole chat, so
    `/restore 2` still means the item that `/forget 2` took off the list."""

    def __init__(self) -> None:
        self._ids: list[str] = []

    def number(self, item: str) -> int:
        if item not in self._ids:
            self._ids.append(item)
        return self._ids.index(item) + 1

    def item(self, word: str) -> str | None:
        if not word.isdigit() or not 1 <= int(word) <= len(self._ids):
            return None
        return self._ids[int(word) - 1]


async def _ask_hidden(prompt: str) -> str:
    """A line typed without being shown: a key never lands on the screen or in scrollback."""
    return await asyncio.get_running_loop().run_in_executor(None, getpass.getpass, prompt)


class Chat:
    def __init__(
        self,
        socket: websockets.ClientConnection,
        newest: int,
        ask: Callable[[str], Awaitable[str]],
        echoed_by_terminal: bool,
        ask_hidden: Callable[[str], Awaitable[str]] = _ask_hidden,
    ) -> None:
        self.socket = socket
        self.newest = newest
        self.caught_up = asyncio.Event()
        if newest == 0:
            self.caught_up.set()
        self.waiting: set[str] = set()
        self.answered = asyncio.Event()
        self.numbers = MemoryNumbers()
        self._ask = ask
        self._ask_hidden = ask_hidden
        # What this terminal typed and its screen already shows: not printed a second time.
        self._typed: Counter[str] = Counter()
        self._echoed_by_terminal = echoed_by_terminal

    async def receive(self) -> None:
        async for raw in self.socket:
            frame = json.loads(raw)
            self.show(frame)
            if frame.get("type") == "message" and frame["seq"] >= self.newest:
                self.caught_up.set()
            if frame.get("type") == "message" and frame.get("reply_to") in self.waiting:
                self.waiting.discard(frame["reply_to"])
                self.answered.set()

    def show(self, frame: JsonObject) -> None:
        kind = frame.get("type")
        if kind == "message":
            if frame["from"] == "you" and self._typed[frame["text"]] > 0:
                self._typed[frame["text"]] -= 1
                return
            who = "you" if frame["from"] == "you" else "Violet"
            print(f"{who}: {frame['text']}", flush=True)
        elif kind == "activity" and frame.get("text"):
            print(_dim(f"({frame['text']})"), flush=True)
        elif kind == "memory":
            self._show_memory(frame["items"])
        elif kind == "account":
            if frame.get("note"):
                print(frame["note"], flush=True)
            print(frame["text"], flush=True)
        elif kind == "error":
            print(frame["text"], flush=True)

    def _show_memory(self, items: list[JsonObject]) -> None:
        if not items:
            print("Violet doesn't remember anything about you yet.", flush=True)
            return
        print("What Violet remembers:")
        for item in items:
            number = self.numbers.number(item["item"])
            print(f"  {number}. {item['text']} ({ORIGINS.get(item['origin'], item['origin'])})")
        print(_dim("/forget N forgets one; /restore N brings it back."), flush=True)

    async def send(self, line: str) -> None:
        said = await self.read(line)
        if said.reply:
            print(said.reply, flush=True)
        if said.frame is None:
            return
        if said.frame["type"] == "say":
            self.waiting.add(said.frame["id"])
            if self._echoed_by_terminal:
                self._typed[said.frame["text"]] += 1
        await self.socket.send(json.dumps(said.frame))

    async def read(self, line: str) -> Said:
        """What a typed line means: a command starts with a slash, anything else is a message."""
        words = line.split()
        if not line.startswith("/"):
            return Said({"type": "say", "id": uuid.uuid4().hex, "text": line})
        command, arguments = words[0].lower(), words[1:]
        if command == "/help":
            return Said(reply=HELP)
        if command == "/memory" and not arguments:
            return Said({"type": "memory.list"})
        if command == "/forget-all" and not arguments:
            return await self._forget_all()
        if command in ("/forget", "/restore"):
            return self._one_item(command, arguments)
        if command == "/key":
            return await self._key([word.lower() for word in arguments])
        return Said(reply=f"There's no command {words[0]}. Type /help to see what you can do.")

    def _one_item(self, command: str, arguments: list[str]) -> Said:
        if len(arguments) != 1:
            return Said(reply=f"Say which item, for example {command} 2 (see /memory).")
        item = self.numbers.item(arguments[0])
        if item is None:
            return Said(reply=f"There's no item {arguments[0]}. Type /memory to see the list.")
        return Said({"type": f"memory.{command[1:]}", "item": item})

    async def _forget_all(self) -> Said:
        answer = await self._ask(
            "This makes Violet forget everything she remembers about you, for good. "
            "Type yes to go ahead: "
        )
        if answer.strip().lower() in ("yes", "y"):
            return Said({"type": "memory.forget_all"})
        return Said(reply="All right, nothing was forgotten.")

    async def _key(self, arguments: list[str]) -> Said:
        if not arguments:
            return Said({"type": "account.show"})
        if arguments == ["remove"]:
            return Said({"type": "key.remove"})
        if arguments[0] == "set" and len(arguments) > 1:
            return Said(
                reply="Type /key set on its own: Violet then asks for your key without showing it."
            )
        if arguments == ["set"]:
            key = (await self._ask_hidden("Paste your Anthropic key (it won't show): ")).strip()
            if not key:
                return Said(reply="Nothing was pasted, so nothing changed.")
            return Said({"type": "key.set", "key": key}, "Checking your key with Anthropic…")
        return Said(reply="Type /key, /key set or /key remove (see /help).")

    async def until_answered(self) -> None:
        while self.waiting:
            self.answered.clear()
            await self.answered.wait()


async def _read_line(prompt: str = "") -> str:
    if prompt:
        print(prompt, end="", flush=True)
    return await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


async def _talk(url: str, token: str) -> int:
    async with websockets.connect(url) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        welcome = json.loads(await socket.recv())
        chat = Chat(socket, welcome.get("seq", 0), _read_line, sys.stdin.isatty())
        if welcome.get("type") != "welcome":
            chat.show(welcome)
            return 1
        receiver = asyncio.create_task(chat.receive())
        await asyncio.wait_for(chat.caught_up.wait(), HISTORY_WAIT_S)  # the story so far first
        print(_dim("Type a message and press Enter; /help shows what else you can do."))

        while line := await _read_line():
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
        token = local_token(person, create=False)
    except NoLocalStack as missing:
        print(missing, file=sys.stderr)
        return 1
    try:
        return asyncio.run(_talk(address + "/v1/live", token))
    except (OSError, websockets.WebSocketException) as error:
        print(f"Violet can't be reached at {address}: {error}", file=sys.stderr)
        return 1
