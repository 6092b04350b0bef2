"""`violet chat`: a terminal client that speaks the phone protocol."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import os
import re
import sys
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import websockets

from violet.models import JsonObject
from violet.settings import CommonSettings, load_settings
from violet.zones import is_zone
from violet_cli.tokens import NoLocalStack, local_token

# How long leaving waits for answers still on their way.
LEAVE_WAIT_S = 60.0
HISTORY_WAIT_S = 30.0
# Room for the longest document in one frame.
MAX_FRAME_BYTES = 4 * 1024 * 1024
# How long a documents command waits for its answer before the next line is read.
DOCUMENT_WAIT_S = 10.0
# Deleting may first wait for an answer under way to finish (the gateway waits 120 s).
DELETE_WAIT_S = 150.0
# The archive is made as it is sent: its first bytes may take a while for a long history.
ARCHIVE_TIMEOUT = httpx.Timeout(10.0, read=300.0)
DEFAULT_ARCHIVE = "violet-archive.zip"
ARCHIVE_NAMED = re.compile(r'filename="([^"/\\]+)"')
# What the person types to delete everything (docs/protocol.md).
DELETE_WORDS = "delete everything"
NOT_DOWNLOADED = "Your data couldn't be downloaded just now. Please try again in a few minutes."

HELP = """\
Type a message and press Enter to talk to Violet. Ctrl-D leaves; the conversation waits for you.
  /memory             what Violet remembers about you, numbered
  /forget N           forget item N of that list (you can undo it)
  /restore N          undo forgetting item N
  /forget-all         forget everything, for good (asks first)
  /documents          what Violet wrote for you, newest first, numbered
  /open N             show document N
  /save N [FILE]      save document N in a file (by default its own name, in this folder)
  /delete N           delete document N
  /undo               bring back the document deleted last
  /key                your own Anthropic key: whether one is in use, and what it paid this month
  /key set            use your own Anthropic key (asks for it without showing it)
  /key remove         stop using your own key
  /reminders          your reminders and work on a schedule, soonest first, numbered
  /cancel N           cancel reminder N of that list
  /devices            the devices you are signed in on, numbered (this one marked)
  /signout N          sign out device N: it can't use Violet until it signs in again
  /signout all        sign out every device, this one too
  /export [FILE]      save everything Violet keeps for you in one zip file (in this folder)
  /delete-everything  delete everything of yours from Violet and sign out all your devices
                      (offers /export first, then asks you to type "delete everything")
  /help               this list"""
DELETE_WARNING = """\
Deleting everything removes, for good, your whole conversation, what Violet remembers, your
documents, her work for you and your key, and signs out every device you use Violet on.
It can't be undone. If you come back, you start again with an empty conversation."""

ORIGINS = {"you": "you told me", "violet": "I did this"}


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if sys.stdout.isatty() else text


def _size(count: int) -> str:
    if count < 1024 * 1024:
        return f"{max(1, round(count / 1024))} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def _words(typed: str) -> str:
    """Typed words as Violet compares them: any case, any spacing."""
    return " ".join(typed.lower().split())


class NotSaved(Exception):
    """The archive was not saved; the message says why, in plain words."""


def _refusal(answer: httpx.Response) -> str:
    try:
        said = answer.json().get("error")
    except (ValueError, AttributeError):
        said = None
    return said if isinstance(said, str) and said else NOT_DOWNLOADED


def _taken(target: Path) -> NotSaved:
    return NotSaved(f"{target} is there already. Say another file: /export FILE")


def _chosen_file(arguments: list[str]) -> Path | None:
    """The file `/export FILE` names (None: the gateway's name); never one already there."""
    if not arguments:
        return None
    chosen = Path(arguments[0]).expanduser()
    if chosen.exists():
        raise _taken(chosen)
    return chosen


def _discard(target: Path) -> None:
    target.unlink(missing_ok=True)


async def save_archive(url: str, token: str, chosen: Path | None) -> tuple[Path, int]:
    """Downloads the archive into `chosen`, or the file the gateway names in this folder, never
    over a file already there; returns where it went and its size. A download that breaks off
    leaves no part of a file behind."""
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            httpx.AsyncClient(timeout=ARCHIVE_TIMEOUT) as client,
            client.stream("GET", url, headers=headers) as answer,
        ):
            if answer.status_code != 200:
                await answer.aread()
                raise NotSaved(_refusal(answer))
            named = ARCHIVE_NAMED.search(answer.headers.get("content-disposition", ""))
            target = chosen or Path(named.group(1) if named else DEFAULT_ARCHIVE)
            return target, await _write(answer, target)
    except httpx.HTTPError:
        raise NotSaved(NOT_DOWNLOADED) from None


async def _write(answer: httpx.Response, target: Path) -> int:
    try:
        written = 0
        with target.open("xb") as file:
            try:
                async for piece in answer.aiter_bytes():
                    written += file.write(piece)
            except BaseException:
                _discard(target)
                raise
    except FileExistsError:
        raise _taken(target) from None
    except OSError as error:
        raise NotSaved(f"{target} couldn't be saved: {error.strerror}.") from None
    return written


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
        archive: tuple[str, str] = ("", ""),
    ) -> None:
        """`archive`: the gateway's archive address and the token to ask it with."""
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
        self.devices: list[JsonObject] = []
        self.reminders: list[JsonObject] = []
        self.saving: dict[str, Path] = {}
        self.last_deleted: JsonObject | None = None
        # An answer for this device alone came (documents, an error, the deletion's).
        self.replied = asyncio.Event()
        # The person was deleted, from here or elsewhere: the chat is over.
        self.over = False
        self._archive_url, self._token = archive
        self._ask = ask
        self._ask_hidden = ask_hidden
        # What this terminal typed and its screen already shows: not printed a second time.
        self._typed: Counter[str] = Counter()
        self._echoed_by_terminal = echoed_by_terminal

    async def receive(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            await self._receive_frames()
        self.replied.set()  # nothing more comes

    async def _receive_frames(self) -> None:
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
            self.over = self.over or frame.get("code") == "unauthorized"
        elif kind == "account.deleted":
            print(frame["text"], flush=True)
            self.over = True
        elif kind == "devices":
            self._show_devices(frame["devices"])
        elif kind == "reminders":
            self._show_reminders(frame["items"])
        if kind in ("documents", "document", "error", "account.deleted", "devices", "reminders"):
            self.replied.set()

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

    def _show_reminders(self, reminders: list[JsonObject]) -> None:
        self.reminders = reminders
        if not reminders:
            print("You have no reminders.", flush=True)
            return
        print("Your reminders, soonest first:")
        for number, reminder in enumerate(reminders, 1):
            print(f"  {number}. {reminder['when']}: {reminder['text']}")
        print(_dim("/cancel N cancels one."), flush=True)

    def _show_devices(self, devices: list[JsonObject]) -> None:
        self.devices = devices
        if not devices:
            print("You aren't signed in on any device.", flush=True)
            return
        print("Your devices, most recently used first:")
        for number, device in enumerate(devices, 1):
            this = " (this one)" if device["this"] else ""
            name = device["agent"] or "an unnamed device"
            print(
                f"  {number}. {name}{this}: last used {device['last_seen'][:16].replace('T', ' ')}"
            )
        print(_dim("/signout N signs one out; /signout all signs out every one."), flush=True)

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
        self.replied.clear()
        await self.socket.send(json.dumps(said.frame))
        # The next line may name a document by its number in the list that comes back; after
        # a deletion, there is no next line.
        waits = {"account.delete": DELETE_WAIT_S}
        wait_s = waits.get(said.frame["type"], DOCUMENT_WAIT_S)
        listing = ("document", "devices", "reminders")
        if said.frame["type"].startswith(listing) or said.frame["type"] in waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.replied.wait(), wait_s)

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
        if command == "/reminders" and not arguments:
            return Said({"type": "reminders.list"})
        if command == "/cancel":
            return self._cancel(arguments)
        if command == "/devices" and not arguments:
            return Said({"type": "devices.list"})
        if command == "/signout":
            return self._sign_out(arguments)
        if command == "/export":
            return await self._export(arguments)
        if command == "/delete-everything" and not arguments:
            return await self._delete_everything()
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

    def _sign_out(self, arguments: list[str]) -> Said:
        if arguments == ["all"]:
            return Said({"type": "devices.signout", "all": True}, "Signing out every device…")
        if len(arguments) != 1:
            return Said(reply="Say which device, for example /signout 2 (see /devices).")
        number = arguments[0]
        if not number.isdigit() or not 1 <= int(number) <= len(self.devices):
            return Said(reply=f"There's no device {number}. Type /devices to see the list.")
        device = self.devices[int(number) - 1]
        return Said({"type": "devices.signout", "device": device["device"]})

    def _cancel(self, arguments: list[str]) -> Said:
        if len(arguments) != 1:
            return Said(reply="Say which reminder, for example /cancel 2 (see /reminders).")
        number = arguments[0]
        if not number.isdigit() or not 1 <= int(number) <= len(self.reminders):
            return Said(reply=f"There's no reminder {number}. Type /reminders to see the list.")
        reminder = self.reminders[int(number) - 1]
        cancelled = f'Cancelled "{reminder["text"]}".'
        return Said({"type": "reminders.cancel", "reminder": reminder["reminder"]}, cancelled)

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

    async def _export(self, arguments: list[str]) -> Said:
        if len(arguments) > 1:
            return Said(reply="Say one file at most, for example /export my-violet.zip")
        _, told = await self._take_archive(arguments)
        return Said(reply=told)

    async def _take_archive(self, arguments: list[str]) -> tuple[bool, str]:
        """Whether the archive was saved, and what to tell the person."""
        try:
            chosen = _chosen_file(arguments)
            print("Gathering everything Violet keeps for you…", flush=True)
            saved, size = await save_archive(self._archive_url, self._token, chosen)
        except NotSaved as why:
            return False, str(why)
        return True, f"Saved everything Violet keeps for you in {saved} ({_size(size)})."

    async def _delete_everything(self) -> Said:
        print(DELETE_WARNING, flush=True)
        copy = await self._ask(
            "Would you like a copy of everything first? Type yes to save it in this folder, "
            "or press Enter to go on: "
        )
        if copy.strip().lower() in ("yes", "y"):
            saved, told = await self._take_archive([])
            print(told, flush=True)
            if not saved:
                return Said(reply="Nothing was deleted.")
        typed = await self._ask(f'To delete everything, type "{DELETE_WORDS}": ')
        if _words(typed) != DELETE_WORDS:
            return Said(reply="All right, nothing was deleted.")
        return Said({"type": "account.delete", "confirmation": _words(typed)}, "Deleting…")

    async def until_answered(self) -> None:
        while self.waiting:
            self.answered.clear()
            await self.answered.wait()


async def _read_line(prompt: str = "") -> str:
    if prompt:
        print(prompt, end="", flush=True)
    return await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


def _zone() -> dict[str, str]:
    """This machine's time zone as hello's `tz`: `TZ` when it names one, else what
    /etc/localtime points to; nothing when neither does."""
    named = os.environ.get("TZ", "").removeprefix(":")
    if not is_zone(named):
        try:
            target = os.readlink("/etc/localtime")
        except OSError:
            target = ""
        named = target.partition("zoneinfo/")[2]
    return {"tz": named} if is_zone(named) else {}


async def _talk(url: str, token: str) -> int:
    async with websockets.connect(url, max_size=MAX_FRAME_BYTES) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0, **_zone()}))
        welcome = json.loads(await socket.recv())
        chat = Chat(
            socket,
            welcome.get("seq", 0),
            _read_line,
            sys.stdin.isatty(),
            archive=(archive_url(url), token),
        )
        if welcome.get("type") != "welcome":
            chat.show(welcome)
            return 1
        receiver = asyncio.create_task(chat.receive())
        await asyncio.wait_for(chat.caught_up.wait(), HISTORY_WAIT_S)  # the story so far first
        print(_dim("Type a message and press Enter; /help shows what else you can do."))

        # No line is read once the chat is over: a read left waiting would hold the exit.
        while not chat.over and (line := await _read_line()):
            if line.strip():
                await chat.send(line.strip())
        if not chat.over:
            try:
                await asyncio.wait_for(chat.until_answered(), LEAVE_WAIT_S)
            except TimeoutError:
                print("Leaving before every answer arrived; they will be here next time.")
        receiver.cancel()
    return 0


def archive_url(live_url: str) -> str:
    """The gateway's archive download, beside its websocket."""
    base = live_url.removesuffix("/v1/live")
    base = base.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
    return f"{base}/v1/export"


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
