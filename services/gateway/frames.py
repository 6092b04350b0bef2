"""The phone protocol's frames (CONTRACTS section 4), in and out.

Outgoing frames are built only from an allow-list of keys per type, never by serialising an
internal object, so nothing internal can ride along to a device.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_FRAME_BYTES = 64 * 1024
MAX_SAY_CHARS = 8_000
MAX_ID_CHARS = 200

OUTGOING_KEYS: dict[str, frozenset[str]] = {
    "welcome": frozenset({"type", "conversation", "seq"}),
    "ack": frozenset({"type", "id", "seq"}),
    "message": frozenset({"type", "seq", "from", "text", "at", "reply_to"}),
    "activity": frozenset({"type", "text"}),
    "memory": frozenset({"type", "items"}),
    "error": frozenset({"type", "code", "text"}),
}
MEMORY_ITEM_KEYS = frozenset({"item", "text", "origin", "at"})
ERROR_CODES = frozenset({"bad_frame", "unauthorized", "too_long", "rate_limited", "unavailable"})


def outgoing(kind: str, **fields: Any) -> str:
    allowed = OUTGOING_KEYS[kind]
    unexpected = set(fields) - allowed
    if unexpected:
        raise ValueError(f"{kind} frames carry no {sorted(unexpected)}")
    if kind == "error" and fields.get("code") not in ERROR_CODES:
        raise ValueError(f"unknown error code {fields.get('code')!r}")
    if kind == "memory":
        fields["items"] = [_memory_item(item) for item in fields["items"]]
    return json.dumps({"type": kind, **fields}, ensure_ascii=False)


def _memory_item(item: dict[str, Any]) -> dict[str, Any]:
    if set(item) - MEMORY_ITEM_KEYS:
        raise ValueError(f"memory items carry no {sorted(set(item) - MEMORY_ITEM_KEYS)}")
    return dict(item)


def error(code: str, text: str) -> str:
    return outgoing("error", code=code, text=text)


class FrameError(Exception):
    """A frame the gateway cannot take; `code` and the message go back to the device."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text


@dataclass(frozen=True)
class Hello:
    token: str
    since: int


@dataclass(frozen=True)
class Say:
    id: str | int
    text: str


@dataclass(frozen=True)
class MemoryRequest:
    action: str  # "list", "forget", "restore" or "forget_all"
    item: str = ""


Incoming = Hello | Say | MemoryRequest


def parse(raw: str | bytes) -> Incoming:
    size = len(raw.encode() if isinstance(raw, str) else raw)
    if size > MAX_FRAME_BYTES:
        raise FrameError("bad_frame", "That frame is too big: frames hold at most 64 KiB.")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise FrameError("bad_frame", "That frame is not JSON.") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise FrameError("bad_frame", 'A frame is a JSON object with a "type".')
    parser = _PARSERS.get(data["type"])
    if parser is None:
        raise FrameError("bad_frame", f"Unknown frame type {data['type'][:40]!r}.")
    return parser(data)


def _hello(data: dict[str, Any]) -> Hello:
    token, since = data.get("token"), data.get("since", 0)
    if not isinstance(token, str) or not token:
        raise FrameError("unauthorized", "Hello needs a token.")
    if not isinstance(since, int) or isinstance(since, bool) or since < 0:
        raise FrameError("bad_frame", '"since" must be a whole number, 0 or more.')
    return Hello(token, since)


def _say(data: dict[str, Any]) -> Say:
    message_id, text = data.get("id"), data.get("text")
    valid_id = (isinstance(message_id, str) and 0 < len(message_id) <= MAX_ID_CHARS) or (
        isinstance(message_id, int) and not isinstance(message_id, bool)
    )
    if not valid_id:
        raise FrameError("bad_frame", 'A say needs an "id": a short string or a number.')
    if not isinstance(text, str) or not text.strip():
        raise FrameError("bad_frame", 'A say needs some "text".')
    if len(text) > MAX_SAY_CHARS:
        raise FrameError("too_long", "That message is too long: at most 8,000 characters.")
    return Say(message_id, text)


def _memory(action: str, needs_item: bool):  # type: ignore[no-untyped-def]
    def parse_memory(data: dict[str, Any]) -> MemoryRequest:
        item = data.get("item", "")
        if needs_item and (not isinstance(item, str) or not item):
            raise FrameError("bad_frame", 'Say which "item" you mean.')
        return MemoryRequest(action, item if needs_item else "")

    return parse_memory


_PARSERS = {
    "hello": _hello,
    "say": _say,
    "memory.list": _memory("list", needs_item=False),
    "memory.forget": _memory("forget", needs_item=True),
    "memory.restore": _memory("restore", needs_item=True),
    "memory.forget_all": _memory("forget_all", needs_item=False),
}
