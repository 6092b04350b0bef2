"""The phone protocol's frames (CONTRACTS section 4), in and out.

Outgoing frames are built only from an allow-list of keys per type, never by serialising an
internal object, so nothing internal can ride along to a device.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway.phrases import NO_NOTIFICATIONS_HERE, NOTHING_DELETED, TOO_LONG, Phrase
from violet.language import ENGLISH, phrase
from violet.zones import is_zone

MAX_FRAME_BYTES = 64 * 1024
MAX_SAY_CHARS = 8_000
MAX_ID_CHARS = 128
MAX_KEY_CHARS = 500
# Room for the confirmation words, typed with some spaces to spare.
MAX_CONFIRMATION_CHARS = 100
# A push service's address for one browser, with room for the longest in use.
MAX_ENDPOINT_CHARS = 1_024
# The parts of a browser's push subscription a `push.on` carries, flat.
PUSH_ADDRESS = ("endpoint", "p256dh", "auth")

OUTGOING_KEYS: dict[str, frozenset[str]] = {
    "welcome": frozenset({"type", "conversation", "seq"}),
    "ack": frozenset({"type", "id", "seq"}),
    "message": frozenset({"type", "seq", "from", "text", "at", "reply_to"}),
    "activity": frozenset({"type", "text"}),
    "memory": frozenset({"type", "items", "told"}),
    "documents": frozenset({"type", "items"}),
    "document": frozenset({"type", "name", "title", "text"}),
    "error": frozenset({"type", "code", "text"}),
    "account": frozenset({"type", "key", "ending", "month_usd", "text", "note", "own_keys"}),
    "account.deleted": frozenset({"type", "text"}),
    "push": frozenset({"type", "key", "on", "previews"}),
    "devices": frozenset({"type", "devices"}),
    "reminders": frozenset({"type", "items"}),
}
MEMORY_ITEM_KEYS = frozenset({"item", "text", "origin", "at"})
TOLD_ITEM_KEYS = frozenset({"item", "text", "source", "at"})
DOCUMENT_ITEM_KEYS = frozenset({"name", "title", "at", "size"})
DEVICE_ITEM_KEYS = frozenset({"device", "agent", "first_seen", "last_seen", "this"})
REMINDER_ITEM_KEYS = frozenset({"reminder", "text", "when", "next", "work"})
# A device's handle (`session.devices`): hex characters of a digest of its token.
DEVICE_HANDLE_CHARS = 16
ERROR_CODES = frozenset({"bad_frame", "unauthorized", "too_long", "rate_limited", "unavailable"})


def outgoing(kind: str, **fields: Any) -> str:
    allowed = OUTGOING_KEYS[kind]
    unexpected = set(fields) - allowed
    if unexpected:
        raise ValueError(f"{kind} frames carry no {sorted(unexpected)}")
    if kind == "error" and fields.get("code") not in ERROR_CODES:
        raise ValueError(f"unknown error code {fields.get('code')!r}")
    if kind == "memory":
        fields["items"] = [_listed(item, MEMORY_ITEM_KEYS) for item in fields["items"]]
        fields["told"] = [_listed(item, TOLD_ITEM_KEYS) for item in fields["told"]]
    if kind == "documents":
        fields["items"] = [_listed(item, DOCUMENT_ITEM_KEYS) for item in fields["items"]]
    if kind == "devices":
        fields["devices"] = [_listed(item, DEVICE_ITEM_KEYS) for item in fields["devices"]]
    if kind == "reminders":
        fields["items"] = [_listed(item, REMINDER_ITEM_KEYS) for item in fields["items"]]
    frame = json.dumps({"type": kind, **fields}, ensure_ascii=False)
    if not _encodable(frame):
        # Text from elsewhere (a model, an old row) holding a lone surrogate still goes out:
        # escaped, so the frame stays valid UTF-8 on the wire.
        frame = json.dumps({"type": kind, **fields})
    return frame


def _listed(item: dict[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    if set(item) - allowed:
        raise ValueError(f"listed items carry no {sorted(set(item) - allowed)}")
    return dict(item)


def error(code: str, text: str) -> str:
    return outgoing("error", code=code, text=text)


class FrameError(Exception):
    """A frame the gateway cannot take; `code` and the message go back to the device. A
    refusal a person can meet carries its phrase in each language."""

    def __init__(self, code: str, text: str | Phrase) -> None:
        self._phrase: Phrase = {ENGLISH: text} if isinstance(text, str) else text
        super().__init__(self.text)
        self.code = code

    @property
    def text(self) -> str:
        return self._phrase[ENGLISH]

    def told_in(self, language: str) -> str:
        return phrase(self._phrase, language)


@dataclass(frozen=True)
class Hello:
    token: str
    since: int
    # The device's IANA time zone, when it said one.
    zone: str = ""


@dataclass(frozen=True)
class Say:
    id: str
    text: str


@dataclass(frozen=True)
class MemoryRequest:
    action: str  # "list", "forget", "restore" or "forget_all"
    item: str = ""


@dataclass(frozen=True)
class DocumentRequest:
    action: str  # "list", "open", "delete" or "restore"
    name: str = ""


@dataclass(frozen=True)
class AccountRequest:
    action: str  # "show", "set_key" or "remove_key"
    key: str = field(default="", repr=False)  # never printed, not even in a traceback


@dataclass(frozen=True)
class DevicesRequest:
    """The person's devices: listed, or one of them (or all) signed out."""

    action: str  # "list" or "signout"
    device: str = ""
    all: bool = False


@dataclass(frozen=True)
class DeleteRequest:
    """The person asks to be deleted everywhere. The session checks the words they typed, so
    the rule lives in one place; here they are only checked to be text."""

    confirmation: str


@dataclass(frozen=True)
class PushRequest:
    """Notifications for one browser of the person: asked about, turned on, or off."""

    action: str  # "get", "on" or "off"
    device: str
    endpoint: str = ""
    p256dh: str = ""
    auth: str = ""
    previews: bool = False


@dataclass(frozen=True)
class RemindersRequest:
    """The person's reminders: listed, or one cancelled by its handle."""

    action: str  # "list" or "cancel"
    reminder: str = ""


Incoming = (
    Hello
    | Say
    | MemoryRequest
    | DocumentRequest
    | AccountRequest
    | DeleteRequest
    | PushRequest
    | DevicesRequest
    | RemindersRequest
)


def parse(raw: str | bytes) -> Incoming:
    """The frame a device sent, checked against the protocol's rules before anything is done
    with it; raises FrameError with the code and the words for the device."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > MAX_FRAME_BYTES:
        raise FrameError("bad_frame", "That frame is too big: frames hold at most 64 KiB.")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise FrameError("bad_frame", "That frame is not JSON.") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise FrameError("bad_frame", 'A frame is a JSON object with a "type".')
    if any(isinstance(value, dict | list) for value in data.values()):
        raise FrameError("bad_frame", "A frame holds no nested objects or lists.")
    if not all(_encodable(text) for text in _strings(data)):
        raise FrameError("bad_frame", "That frame holds text that is not valid Unicode.")
    parser = _PARSERS.get(data["type"])
    if parser is None:
        raise FrameError("bad_frame", f"Unknown frame type {data['type'][:40]!r}.")
    return parser(data)


def _strings(data: dict[str, Any]) -> list[str]:
    return [*data, *(value for value in data.values() if isinstance(value, str))]


def _encodable(text: str) -> bool:
    """False for text holding a lone surrogate, which no UTF-8 store or socket takes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _hello(data: dict[str, Any]) -> Hello:
    token, since = data.get("token"), data.get("since", 0)
    if not isinstance(token, str) or not token:
        raise FrameError("unauthorized", "Hello needs a token.")
    if not _whole_number(since) or since < 0:
        raise FrameError("bad_frame", '"since" must be a whole number, 0 or more.')
    zone = data.get("tz", "")
    if "tz" in data and not is_zone(zone):
        raise FrameError("bad_frame", '"tz" must name a time zone, like "Europe/Lisbon".')
    return Hello(token, since, zone)


def _say(data: dict[str, Any]) -> Say:
    message_id, text = data.get("id"), data.get("text")
    if not isinstance(message_id, str) or not 0 < len(message_id) <= MAX_ID_CHARS:
        raise FrameError(
            "bad_frame", f'A say needs an "id": a string of 1 to {MAX_ID_CHARS} characters.'
        )
    if not isinstance(text, str) or not text.strip():
        raise FrameError("bad_frame", 'A say needs some "text".')
    if "\x00" in text:
        raise FrameError("bad_frame", "A message cannot hold a NUL character.")
    if len(text) > MAX_SAY_CHARS:
        raise FrameError("too_long", TOO_LONG)
    return Say(message_id, text)


def _memory(action: str, needs_item: bool) -> Callable[[dict[str, Any]], MemoryRequest]:
    def parse_memory(data: dict[str, Any]) -> MemoryRequest:
        item = _short_text(data.get("item"), MAX_ID_CHARS)
        if needs_item and item is None:
            raise FrameError("bad_frame", 'Say which "item" you mean.')
        return MemoryRequest(action, (item or "") if needs_item else "")

    return parse_memory


def _document(action: str) -> Callable[[dict[str, Any]], DocumentRequest]:
    def parse_document(data: dict[str, Any]) -> DocumentRequest:
        name = _short_text(data.get("name"), MAX_ID_CHARS)
        if name is None:
            raise FrameError("bad_frame", 'Say which document you mean by its "name".')
        return DocumentRequest(action, name)

    return parse_document


def _key_set(data: dict[str, Any]) -> AccountRequest:
    key = data.get("key")
    if not isinstance(key, str) or not key.strip():
        raise FrameError("bad_frame", 'Paste your key as "key".')
    key = key.strip()
    if len(key) > MAX_KEY_CHARS or any(c.isspace() or c == "\x00" for c in key):
        raise FrameError("bad_frame", "That doesn't look like a key: it is one word, no spaces.")
    return AccountRequest("set_key", key)


def _account_delete(data: dict[str, Any]) -> DeleteRequest:
    words = data.get("confirmation")
    if not isinstance(words, str) or len(words) > MAX_CONFIRMATION_CHARS or "\x00" in words:
        raise FrameError("bad_frame", NOTHING_DELETED)
    return DeleteRequest(words)


def _push(action: str) -> Callable[[dict[str, Any]], PushRequest]:
    def parse_push(data: dict[str, Any]) -> PushRequest:
        device = _short_text(data.get("device"), MAX_ID_CHARS)
        if device is None:
            raise FrameError("bad_frame", 'Say which browser you mean as "device".')
        if action != "on":
            return PushRequest(action, device)
        address = [_short_text(data.get(key), MAX_ENDPOINT_CHARS) for key in PUSH_ADDRESS]
        previews = data.get("previews", False)
        if None in address or not isinstance(previews, bool):
            raise FrameError("bad_frame", NO_NOTIFICATIONS_HERE)
        endpoint, p256dh, auth = (str(part) for part in address)
        return PushRequest(action, device, endpoint, p256dh, auth, previews)

    return parse_push


def _devices_signout(data: dict[str, Any]) -> DevicesRequest:
    if data.get("all") is True:
        return DevicesRequest("signout", all=True)
    device = data.get("device")
    if not (
        isinstance(device, str)
        and len(device) == DEVICE_HANDLE_CHARS
        and all(c in "0123456789abcdef" for c in device)
    ):
        raise FrameError("bad_frame", 'Say which device to sign out as "device", or "all": true.')
    return DevicesRequest("signout", device)


def _reminder_cancel(data: dict[str, Any]) -> RemindersRequest:
    reminder = _short_text(data.get("reminder"), MAX_ID_CHARS)
    if reminder is None:
        raise FrameError("bad_frame", 'Say which reminder to cancel as "reminder".')
    return RemindersRequest("cancel", reminder)


def _short_text(value: Any, most: int) -> str | None:
    """`value` when it is text of 1 to `most` characters with no NUL, else None."""
    if isinstance(value, str) and 0 < len(value) <= most and "\x00" not in value:
        return value
    return None


_PARSERS: dict[str, Callable[[dict[str, Any]], Incoming]] = {
    "hello": _hello,
    "say": _say,
    "memory.list": _memory("list", needs_item=False),
    "memory.forget": _memory("forget", needs_item=True),
    "memory.restore": _memory("restore", needs_item=True),
    "memory.forget_all": _memory("forget_all", needs_item=False),
    "documents.list": lambda _: DocumentRequest("list"),
    "document.open": _document("open"),
    "document.delete": _document("delete"),
    "document.restore": _document("restore"),
    "account.show": lambda _: AccountRequest("show"),
    "key.set": _key_set,
    "key.remove": lambda _: AccountRequest("remove_key"),
    "account.delete": _account_delete,
    "push.get": _push("get"),
    "push.on": _push("on"),
    "push.off": _push("off"),
    "devices.list": lambda _: DevicesRequest("list"),
    "devices.signout": _devices_signout,
    "reminders.list": lambda _: RemindersRequest("list"),
    "reminders.cancel": _reminder_cancel,
}
