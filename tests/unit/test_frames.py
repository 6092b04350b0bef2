"""The gateway's frame rules: what a device may send, and the allow-list of what goes out."""

from __future__ import annotations

import json

import pytest

from gateway import frames
from gateway.frames import DocumentRequest, FrameError, Hello, MemoryRequest, PushRequest, Say
from gateway.live import say_id, stored_id


def test_a_hello_carries_a_token_and_since() -> None:
    assert frames.parse('{"type":"hello","token":"t","since":4}') == Hello("t", 4)
    assert frames.parse('{"type":"hello","token":"t"}') == Hello("t", 0)


@pytest.mark.parametrize("since", [-1, "3", 1.5, True])
def test_since_must_be_a_whole_number(since: object) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps({"type": "hello", "token": "t", "since": since}))
    assert error.value.code == "bad_frame"


@pytest.mark.parametrize(
    "zone", ["Europe/Lisbon", "America/Los_Angeles", "Pacific/Auckland", "UTC"]
)
def test_a_hello_may_name_the_devices_time_zone(zone: str) -> None:
    hello = frames.parse(json.dumps({"type": "hello", "token": "t", "since": 0, "tz": zone}))
    assert hello == Hello("t", 0, zone)


@pytest.mark.parametrize(
    "zone",
    ["", "Mars/Olympus", "+01:00", "GMT+1", "europe/lisbon", "../etc/passwd", 1, None, ["UTC"]],
)
def test_a_hello_naming_no_time_zone_is_a_bad_frame(zone: object) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps({"type": "hello", "token": "t", "tz": zone}))
    assert error.value.code == "bad_frame"


def test_a_hello_without_token_is_unauthorized() -> None:
    with pytest.raises(FrameError) as error:
        frames.parse('{"type":"hello"}')
    assert error.value.code == "unauthorized"


def test_a_say_keeps_its_id_as_sent() -> None:
    assert frames.parse('{"type":"say","id":"a-1","text":"hi"}') == Say("a-1", "hi")
    assert frames.parse(json.dumps({"type": "say", "id": "é" * 128, "text": "hi"})).id == "é" * 128
    assert frames.parse(json.dumps({"type": "say", "id": "a\u0000b", "text": "hi"})).id == "a\x00b"


def test_a_huge_since_is_a_whole_number_all_the_same() -> None:
    assert (
        frames.parse(json.dumps({"type": "hello", "token": "t", "since": 10**30})).since == 10**30
    )


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "say", "text": "no id"},
        {"type": "say", "id": "", "text": "empty id"},
        {"type": "say", "id": True, "text": "bool id"},
        {"type": "say", "id": 7, "text": "a number is not an id"},
        {"type": "say", "id": 10**249, "text": "a 250-digit number"},
        {"type": "say", "id": "x" * 129, "text": "long id"},
        {"type": "say", "id": ["1"], "text": "nested id"},
        {"type": "say", "id": "1", "text": {"nested": "text"}},
        {"type": "say", "id": "1", "text": "   "},
        {"type": "say", "id": "1", "text": "a NUL \x00 inside"},
        {"type": "say", "id": "1"},
        {"type": "say", "id": "1", "text": "hi", "extra": {"a": [1]}},
        {"type": "memory.forget", "item": "x" * 129},
        {"type": "memory.forget", "item": "a\x00"},
    ],
)
def test_a_malformed_frame_is_a_bad_frame(frame: dict) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps(frame))
    assert error.value.code == "bad_frame"


@pytest.mark.parametrize(
    "raw",
    [
        '{"type":"say","id":"\\ud800","text":"hi"}',
        '{"type":"say","id":"1","text":"half a pair \\udc00"}',
        '{"type":"say","id":"1","text":"hi","\\ud800":1}',
        '{"type":"hello","token":"\\udfff"}',
        '{"type":"say","id":"1","text":"hi","deep":' + "[" * 20_000 + "]" * 20_000 + "}",
        "[" * 30_000 + "]" * 30_000,
        '{"type":"say","id":"1","text":"hi","n":' + "9" * 5000 + "}",
    ],
    ids=[
        "surrogate id",
        "surrogate text",
        "surrogate key",
        "surrogate token",
        "deep",
        "deep list",
        "long number",
    ],
)
def test_unpaired_surrogates_and_nesting_are_bad_frames(raw: str) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(raw)
    assert error.value.code == "bad_frame"


def test_text_over_8000_characters_is_too_long() -> None:
    assert frames.parse(json.dumps({"type": "say", "id": "1", "text": "é" * 8000})).text
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps({"type": "say", "id": "1", "text": "a" * 8001}))
    assert error.value.code == "too_long"


@pytest.mark.parametrize("raw", ["not json", "[1]", '{"no":"type"}', '{"type":"dance"}', b"\xff"])
def test_anything_else_is_a_bad_frame(raw: str | bytes) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(raw)
    assert error.value.code == "bad_frame"


def test_a_frame_over_64_kib_is_a_bad_frame_before_parsing() -> None:
    with pytest.raises(FrameError) as error:
        frames.parse("x" * (64 * 1024 + 1))
    assert error.value.code == "bad_frame"


def test_memory_frames() -> None:
    assert frames.parse('{"type":"memory.list"}') == MemoryRequest("list")
    assert frames.parse('{"type":"memory.forget","item":"i1"}') == MemoryRequest("forget", "i1")
    assert frames.parse('{"type":"memory.restore","item":"i1"}') == MemoryRequest("restore", "i1")
    assert frames.parse('{"type":"memory.forget_all"}') == MemoryRequest("forget_all")
    with pytest.raises(FrameError):
        frames.parse('{"type":"memory.forget"}')


def test_document_frames_name_the_document_by_its_file_name() -> None:
    assert frames.parse('{"type":"documents.list"}') == DocumentRequest("list")
    for action in ("open", "delete", "restore"):
        frame = json.dumps({"type": f"document.{action}", "name": "note-ferry-times.md"})
        assert frames.parse(frame) == DocumentRequest(action, "note-ferry-times.md")


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "document.open"},
        {"type": "document.open", "name": ""},
        {"type": "document.delete", "name": 3},
        {"type": "document.restore", "name": "x" * 129},
        {"type": "document.open", "name": "a\x00.md"},
    ],
)
def test_a_document_frame_without_a_name_is_a_bad_frame(frame: dict) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps(frame))
    assert error.value.code == "bad_frame" and "name" in error.value.text


def test_the_documents_frame_lists_name_title_time_and_size_only() -> None:
    item = {"name": "note-a.md", "title": "A", "at": "2025-03-01T12:00:00Z", "size": 4}
    assert json.loads(frames.outgoing("documents", items=[item])) == {
        "type": "documents",
        "items": [item],
    }
    with pytest.raises(ValueError):
        frames.outgoing("documents", items=[{**item, "path": "/var/lib/violet/x"}])
    opened = {"name": "note-a.md", "title": "A", "text": "# A\n"}
    assert json.loads(frames.outgoing("document", **opened)) == {"type": "document", **opened}
    with pytest.raises(ValueError):
        frames.outgoing("document", **opened, person="sam")


def test_the_memory_frame_keeps_what_violet_told_apart() -> None:
    item = {"item": "i1", "text": "My cat is Miso", "origin": "you", "at": "2025-03-01T12:00:00Z"}
    told = {"item": "t1", "text": "The ferry leaves at 9:40.", "source": "", "at": item["at"]}
    frame = json.loads(frames.outgoing("memory", items=[item], told=[told]))
    assert frame == {"type": "memory", "items": [item], "told": [told]}
    with pytest.raises(ValueError):
        frames.outgoing("memory", items=[], told=[{**told, "origin": "violet"}])


def test_outgoing_text_with_a_lone_surrogate_still_goes_out_as_utf8() -> None:
    frame = frames.outgoing("activity", text="odd \ud800 text")
    frame.encode("utf-8")
    assert json.loads(frame)["text"] == "odd \ud800 text"


def test_outgoing_frames_refuse_keys_off_the_allow_list() -> None:
    assert json.loads(frames.outgoing("ack", id="1", seq=3)) == {"type": "ack", "id": "1", "seq": 3}
    with pytest.raises(ValueError):
        frames.outgoing("message", seq=1, text="hi", trace_id="abc")
    with pytest.raises(ValueError):
        frames.outgoing("memory", items=[{"item": "1", "text": "x", "person": "p"}])
    with pytest.raises(ValueError):
        frames.error("oops", "not a contract code")


@pytest.mark.parametrize(
    ("stored", "sent"),
    [
        (stored_id("a-1"), "a-1"),
        (stored_id('quote " and \x00'), 'quote " and \x00'),
        ("7", 7),  # a number id, as devices once could send
        ("not json {", "not json {"),
        ('{"nested": 1}', '{"nested": 1}'),
        ("true", "true"),
    ],
)
def test_a_stored_id_goes_back_as_sent_and_an_odd_one_as_it_is(stored: str, sent: object) -> None:
    assert say_id(stored) == sent


def test_push_frames_name_the_browser_and_carry_its_subscription_flat() -> None:
    assert frames.parse('{"type":"push.get","device":"d1"}') == PushRequest("get", "d1")
    assert frames.parse('{"type":"push.off","device":"d1"}') == PushRequest("off", "d1")
    on = {"type": "push.on", "device": "d1", "endpoint": "https://p.example/x", "p256dh": "BA"}
    assert frames.parse(json.dumps({**on, "auth": "q", "previews": True})) == PushRequest(
        "on", "d1", "https://p.example/x", "BA", "q", True
    )
    assert frames.parse(json.dumps({**on, "auth": "q"})).previews is False  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "push.get"},
        {"type": "push.off", "device": ""},
        {"type": "push.get", "device": "d" * 129},
        {"type": "push.on", "device": "d1", "endpoint": "https://p.example/x", "p256dh": "BA"},
        {"type": "push.on", "device": "d1", "endpoint": "e" * 1025, "p256dh": "BA", "auth": "q"},
        {"type": "push.on", "device": "d1", "endpoint": "x", "p256dh": "B", "auth": 7},
        {
            "type": "push.on",
            "device": "d1",
            "endpoint": "x",
            "p256dh": "B",
            "auth": "q",
            "previews": 1,
        },
    ],
)
def test_a_push_frame_missing_its_parts_is_a_bad_frame(frame: dict) -> None:
    with pytest.raises(FrameError) as error:
        frames.parse(json.dumps(frame))
    assert error.value.code == "bad_frame"


def test_the_push_frame_says_only_the_key_and_this_browsers_state() -> None:
    sent = json.loads(frames.outgoing("push", key="BK", on=True, previews=False))
    assert sent == {"type": "push", "key": "BK", "on": True, "previews": False}
    with pytest.raises(ValueError):
        frames.outgoing("push", key="BK", on=True, previews=False, endpoint="https://p.example")
