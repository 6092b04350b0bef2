"""Property: no input makes the frame parser do anything but accept a frame the contract
allows or refuse it with a contract error code (CONTRACTS section 4)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import frames
from gateway.frames import ERROR_CODES, DocumentRequest, FrameError, Hello, MemoryRequest, Say
from tests.support.frames import hostile_frames, valid_says

EXAMPLES = 1_000


def encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(hostile_frames())
def test_any_frame_is_taken_as_the_contract_allows_or_refused_with_its_code(
    raw: str | bytes,
) -> None:
    try:
        frame = frames.parse(raw)
    except FrameError as refused:
        assert refused.code in ERROR_CODES and refused.text
        return
    if isinstance(frame, Say):
        assert isinstance(frame.id, str) and 1 <= len(frame.id) <= 128 and encodable(frame.id)
        assert frame.text.strip() and "\x00" not in frame.text and encodable(frame.text)
        assert len(frame.text) <= frames.MAX_SAY_CHARS
    elif isinstance(frame, Hello):
        assert type(frame.since) is int and frame.since >= 0 and encodable(frame.token)
    elif isinstance(frame, DocumentRequest):
        assert len(frame.name) <= 128 and "\x00" not in frame.name and encodable(frame.name)
        assert frame.name or frame.action == "list"
    else:
        assert isinstance(frame, MemoryRequest) and encodable(frame.item)


@settings(max_examples=500, deadline=None, database=None)
@given(valid_says, st.booleans())
def test_every_say_the_contract_allows_is_taken_as_sent(say: dict, as_bytes: bool) -> None:
    raw = json.dumps(say, ensure_ascii=as_bytes)
    parsed = frames.parse(raw.encode() if as_bytes else raw)
    assert parsed == Say(say["id"], say["text"])
