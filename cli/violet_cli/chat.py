"""`violet chat`: a terminal client that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import sys
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import websockets

from violet.models import JsonObject
from violet.settings import CommonSettings, load_settings
from violet_cli.tokens import NoLocalStack, local_token

# How long leaving waits for answers still on their way.
LEAVE_WAIT_S = 60.0
HISTORY_WAIT_S = 30.0
# Room for the longest document in one frame.
MAX_FRAME_BYTES = 4 * 1024 * 1024
# How long a documents command waits for its answer before the next line is read.
DOCUMENT_WAIT_S = 10.0

HELP = """\
Type a message and press Enter to talk to Violet. Ctrl-D leaves; the conversation waits for you.
  /memory        what Violet remembers about you, numbered
  /forget N      forget item N of that list (you can undo it)
  /restore N     undo forgetting item N
  /forget-all    forget everything, for good (asks first)
  /documents     what Violet wrote for you, newest first, numbered
  /open N        show document N
  /save N [FILE] save document N in a file (by default its own name, in this folder)
  /delete N      delete document N
  /undo          bring back the document deleted last
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
        # The documents as last listed, by number; where each one asked to be saved goes.
        self.documents: list[JsonObject] = []
        self.saving: dict[str, Path] = {}
        self.last_deleted: JsonObject | None = None
        self.documents_answered = asyncio.Event()
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
            self._show_memory(frame["items"], frame.get("told", []))
        elif kind == "documents":
            self._show_documents(frame["items"])
        elif kind == "document":
            self._show_document(frame)
        elif kind == "account":
            if frame.get("note"):
                print(frame["note"], flush=True)
            print(frame["text"], flush=True)
        elif kind == "error":
            print(frame["text"], flush=True)
        if kind in ("documents", "document", "error"):
            self.documents_answered.set()

    def _show_memory(self, items: list[JsonObject], told: list[JsonObject]) -> None:
        if not items and not told:
            print("Violet doesn't remember anything about you yet.", flush=True)
            return
        if items:
            print("What Violet remembers:")
        for item in items:
            number = self.numbers.number(item["item"])
            print(f"  {number}. {item['text']} ({ORIGINS.get(item['origin'], item['origin'])})")
        if told:
            print("What I told you:")
        for item in told:
            number = self.numbers.number(item["item"])
            source = f" (from {item['source']})" if item["source"] else ""
            print(f"  {number}. {item['text']}{source}")
        print(_dim("/forget N forgets one; /restore N brings it back."), flush=True)

    def _show_documents(self, documents: list[JsonObject]) -> None:
        self.documents = documents
        if not documents:
            print("Violet hasn't written any documents for you yet.", flush=True)
            return
        print("Your documents, newest first:")
        for number, document in enumerate(documents, 1):
            print(f"  {number}. {document['title']} ({document['name']})")
        print(
            _dim("/open N shows one; /save N saves it in a file; /delete N deletes it."), flush=True
        )

    def _show_document(self, document: JsonObject) -> None:
        target = self.saving.pop(document["name"], None)
        if target is None:
            print(f"{document['title']} ({document['name']}):\n{document['text']}", flush=True)
            return
        try:
            target.write_text(document["text"], encoding="utf-8")
        except OSError as error:
            print(f"{target} couldn't be saved: {error.strerror}.", flush=True)
            return
        print(f'Saved "{document["title"]}" in {target}.', flush=True)

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
        self.documents_answered.clear()
        await self.socket.send(json.dumps(said.frame))
        if said.frame["type"].startswith("document"):
            # The next line may name a document by its number in the list that comes back.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.documents_answered.wait(), DOCUMENT_WAIT_S)

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
        if command == "/documents" and not arguments:
            return Said({"type": "documents.list"})
        if command in ("/open", "/save", "/delete"):
            return self._one_document(command, arguments)
        if command == "/undo" and not arguments:
            return self._undo()
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

    def _one_document(self, command: str, arguments: list[str]) -> Said:
        most = 2 if command == "/save" else 1
        if not 1 <= len(arguments) <= most:
            return Said(reply=f"Say which document, for example {command} 2 (see /documents).")
        number = arguments[0]
        if not number.isdigit() or not 1 <= int(number) <= len(self.documents):
            return Said(reply=f"There's no document {number}. Type /documents to see the list.")
        document = self.documents[int(number) - 1]
        name = document["name"]
        if command == "/open":
            return Said({"type": "document.open", "name": name})
        if command == "/delete":
            self.last_deleted = document
            undo = f'Deleted "{document["title"]}". Type /undo to bring it back.'
            return Said({"type": "document.delete", "name": name}, undo)
        target = Path(arguments[1] if len(arguments) > 1 else name).expanduser()
        if target.exists():
            return Said(reply=f"{target} is there already. Say another file: /save {number} FILE")
        self.saving[name] = target
        return Said({"type": "document.open", "name": name})

    def _undo(self) -> Said:
        if self.last_deleted is None:
            return Said(reply="There's nothing to undo.")
        document, self.last_deleted = self.last_deleted, None
        back = f'Bringing back "{document["title"]}".'
        return Said({"type": "document.restore", "name": document["name"]}, back)

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
    async with websockets.connect(url, max_size=MAX_FRAME_BYTES) as socket:
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
