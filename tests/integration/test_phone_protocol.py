"""The phone protocol of CONTRACTS section 4, spoken over a real websocket to real services."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path

import httpx
import pytest
import websockets

from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from violet.models.tools import MAIN_TOOLS, NOW_HEADING, WORK_TOOLS

# The internal names no frame of Violet's may carry (CONTRACTS section 4): tool names, model
# names, the names of her inner workings, and issued ids. Everyday words may pass.
INTERNAL_WORDS = re.compile(
    r"\b(" + "|".join(tool.name for tool in (*MAIN_TOOLS, *WORK_TOOLS)) + r"|claude-[a-z0-9.-]+"
    r"|work sessions?|topic cards?|(?:c|m|t|ap)_[0-9a-f]{16}|(?:p|a|w)_[0-9a-f]{8})\b",
    re.IGNORECASE,
)
ALLOWED_KEYS = {
    "welcome": {"type", "conversation", "seq"},
    "ack": {"type", "id", "seq"},
    "message": {"type", "seq", "from", "text", "at", "reply_to"},
    "activity": {"type", "text"},
    "memory": {"type", "items", "told"},
    "documents": {"type", "items"},
    "document": {"type", "name", "title", "text"},
    "error": {"type", "code", "text"},
    "account": {"type", "key", "ending", "month_usd", "text", "note", "own_keys"},
    "reminders": {"type", "items"},
}


def person() -> str:
    return "person-" + uuid.uuid4().hex[:8]


def assert_frames_leak_nothing(frames: list[dict]) -> None:
    """No frame carries a key the protocol does not list, nor an internal word in Violet's own
    text (the person's own messages may say anything)."""
    for frame in frames:
        assert set(frame) <= ALLOWED_KEYS[frame["type"]], frame
        if frame["type"] in ("activity", "error", "account") or frame.get("from") == "violet":
            assert not INTERNAL_WORDS.search(frame["text"] + frame.get("note", "")), frame


async def test_a_say_is_acked_stored_and_answered(stack: Stack) -> None:
    device, welcome = await Device.open(stack.live_url, stack.token(person()))
    assert welcome["seq"] == 0 and welcome["conversation"]

    message_id = await device.say("Hi Violet, how are you today?")
    ack = await device.until(lambda f: f["type"] == "ack")
    answer = await device.answer_to(message_id)

    own = next(f for f in device.seen if f["type"] == "message" and f["from"] == "you")
    assert ack == {"type": "ack", "id": message_id, "seq": own["seq"]}
    assert own["text"] == "Hi Violet, how are you today?"
    assert answer["from"] == "violet" and answer["seq"] > ack["seq"] and answer["text"]
    assert answer["at"].endswith("Z")
    assert_frames_leak_nothing(device.seen)
    await device.close()


async def test_a_second_device_replays_history_then_sees_new_messages(stack: Stack) -> None:
    token = stack.token(person())
    phone, welcome = await Device.open(stack.live_url, token)
    await phone.ask("Good morning!")
    await phone.ask("What a lovely day.")

    laptop, laptop_welcome = await Device.open(stack.live_url, token)
    assert laptop_welcome["conversation"] == welcome["conversation"]
    assert laptop_welcome["seq"] == 4
    history = [await laptop.next() for _ in range(4)]
    assert [f["seq"] for f in history] == [1, 2, 3, 4]
    assert [f["from"] for f in history] == ["you", "violet", "you", "violet"]

    message_id = await laptop.say("Talk to you later")
    on_phone = await phone.answer_to(message_id)
    on_laptop = await laptop.answer_to(message_id)
    assert on_phone == on_laptop
    assert any(f["type"] == "message" and f["text"] == "Talk to you later" for f in phone.seen)
    assert not any(f["type"] == "ack" for f in phone.seen[-3:] if f.get("id") == message_id)

    tablet, _ = await Device.open(stack.live_url, token, since=5)
    replay = await tablet.next()
    assert replay["seq"] == 6
    for device in (phone, laptop, tablet):
        assert_frames_leak_nothing(device.seen)
        await device.close()


async def test_the_same_say_id_twice_gives_one_answer(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    await device.say("Remind me what day it is", message_id="retry-1")
    await device.say("Remind me what day it is", message_id="retry-1")
    first_ack = await device.until(lambda f: f["type"] == "ack")
    second_ack = await device.until(lambda f: f["type"] == "ack")
    assert first_ack["seq"] == second_ack["seq"]
    await device.answer_to("retry-1")

    marker = await device.say("And one more thing")
    await device.answer_to(marker)
    answers = [f for f in device.seen if f["type"] == "message" and f.get("reply_to") == "retry-1"]
    assert len(answers) == 1
    await device.close()


async def test_a_wrong_token_is_unauthorized_and_the_socket_closes(stack: Stack) -> None:
    device = await Device.connect(stack.live_url)
    await device.send({"type": "hello", "token": "not-a-token", "since": 0})
    refusal = await device.next()
    assert refusal["type"] == "error" and refusal["code"] == "unauthorized"
    with pytest.raises(websockets.ConnectionClosed):
        await device.next()


async def test_a_token_from_another_secret_is_unauthorized(stack: Stack) -> None:
    from violet.identity import issue_token

    device = await Device.connect(stack.live_url)
    await device.send(
        {
            "type": "hello",
            "token": issue_token("mallory", "a-different-secret-of-enough-length-0123"),
            "since": 0,
        }
    )
    assert (await device.next())["code"] == "unauthorized"


async def test_an_expired_token_is_unauthorized(stack: Stack) -> None:
    from violet.identity import issue_token

    device = await Device.connect(stack.live_url)
    expired = issue_token("someone", stack.secret, ttl_s=-10)
    await device.send({"type": "hello", "token": expired, "since": 0})
    assert (await device.next())["code"] == "unauthorized"


async def test_a_frame_before_hello_is_refused(stack: Stack) -> None:
    device = await Device.connect(stack.live_url)
    await device.send({"type": "say", "id": "1", "text": "hi"})
    refusal = await device.next()
    assert refusal["type"] == "error" and refusal["code"] == "unauthorized"


async def test_bad_frames_get_plain_errors_and_the_socket_stays_open(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    await device.send("this is not json")
    assert (await device.next())["code"] == "bad_frame"
    await device.send(json.dumps([1, 2, 3]))
    assert (await device.next())["code"] == "bad_frame"
    await device.send({"type": "teleport"})
    assert (await device.next())["code"] == "bad_frame"
    await device.send({"type": "say", "id": "x", "text": "a" * 70_000})
    oversized = await device.next()
    assert oversized["code"] == "bad_frame" and "64 KiB" in oversized["text"]
    assert (await device.ask("Still there?"))["from"] == "violet"
    assert_frames_leak_nothing(device.seen)


async def test_too_long_text_is_refused_and_nothing_is_stored(stack: Stack) -> None:
    token = stack.token(person())
    device, _ = await Device.open(stack.live_url, token)
    await device.say("x" * 8_001, message_id="long")
    refusal = await device.next()
    assert refusal == {"type": "error", "code": "too_long", "text": refusal["text"]}
    assert "8,000" in refusal["text"]

    fine = await device.say("y" * 8_000)
    await device.answer_to(fine)
    again, welcome = await Device.open(stack.live_url, token)
    assert welcome["seq"] == 2  # only the accepted message and its answer


async def test_a_refusal_is_told_in_the_language_the_person_writes_in_on_every_device(
    stack: Stack,
) -> None:
    token = stack.token(person())
    phone, _ = await Device.open(stack.live_url, token)
    await phone.say("x" * 8_001)
    assert "too long" in (await phone.next())["text"]  # nothing said yet: English
    await phone.ask("Olá! Você pode me lembrar de comprar pão amanhã?")
    await phone.say("x" * 8_001)
    refusal = await phone.until(lambda f: f["type"] == "error")
    assert refusal["code"] == "too_long"
    assert "longa demais" in refusal["text"] and "8.000" in refusal["text"]
    tablet, _ = await Device.open(stack.live_url, token)  # learns it from the history
    await tablet.until(lambda f: f["type"] == "message" and f["from"] == "violet")
    await tablet.send({"type": "memory.forget", "item": "no-such-item"})
    refusal = await tablet.until(lambda f: f["type"] == "error")
    assert refusal["code"] == "bad_frame"
    assert "lembrança não existe" in refusal["text"]


async def test_a_burst_of_says_is_rate_limited_in_plain_words(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    for number in range(12):
        await device.say(f"message {number}")
    refusal = await device.until(lambda f: f["type"] == "error", timeout=30)
    assert refusal["code"] == "rate_limited" and "wait" in refusal["text"]


async def test_healthz_reports_what_the_gateway_needs(stack: Stack) -> None:
    async with httpx.AsyncClient() as client:
        answer = await client.get(stack.http_url + "/healthz")
    assert answer.status_code == 200
    assert answer.json() == {"session": "up", "memory": "up"}


@pytest.mark.expects_fallbacks  # the stack runs without its worker
async def test_while_the_worker_is_away_the_conversation_goes_on_and_documents_say_so(
    tmp_path: Path,
) -> None:
    # A call waits out a peer's restart for this long before it is told unavailable.
    env = {"VIOLET_RPC_TIMEOUT_S": "2"}
    with running_stack(tmp_path / "home", "sqlite", env=env) as started:
        started.stop("worker")
        async with httpx.AsyncClient() as client:
            assert (await client.get(started.http_url + "/healthz")).status_code == 200
        device, _ = await Device.open(started.live_url, started.token(person()))
        await device.send({"type": "documents.list"})
        refusal = await device.until(lambda f: f["type"] == "error")
        assert refusal["code"] == "unavailable" and refusal["text"]
        answer = await device.ask("Hello there")
        assert answer["text"]
        await device.close()


async def test_many_devices_of_one_person_all_receive_every_message(stack: Stack) -> None:
    token = stack.token(person())
    devices = [(await Device.open(stack.live_url, token))[0] for _ in range(3)]
    message_id = await devices[0].say("Hello everyone")
    answers = await asyncio.gather(*(device.answer_to(message_id) for device in devices))
    assert len({answer["seq"] for answer in answers}) == 1
    for device in devices:
        await device.close()


async def test_messages_said_back_to_back_are_each_answered_on_their_own(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    told = await device.say("my dog is called Rex")
    asked = await device.say("calculate 6*7")
    await device.answers_to(told, asked)
    answers = {
        f["reply_to"]: f["text"] for f in device.seen if f["type"] == "message" and "reply_to" in f
    }
    assert answers[told] != answers[asked]
    assert "on it" in answers[asked].lower()  # the sum is handed on, not taken as a fact


def write_document(stack: Stack, owner: str, name: str, text: str) -> None:
    """A document in the person's folder, as a work session leaves one."""
    from worker.folders import folder_name

    folder = stack.home / "workspaces" / folder_name(owner) / "documents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


async def test_documents_are_listed_opened_deleted_and_restored_by_their_names(
    stack: Stack,
) -> None:
    owner, other = person(), person()
    write_document(stack, owner, "note-ferry-times.md", "# Ferry times\n\nleaves at 9:40\n")
    device, _ = await Device.open(stack.live_url, stack.token(owner))

    await device.send({"type": "documents.list"})
    listing = await device.until(lambda f: f["type"] == "documents")
    [entry] = listing["items"]
    assert entry["name"] == "note-ferry-times.md" and entry["title"] == "Ferry times"
    assert entry["size"] == len("# Ferry times\n\nleaves at 9:40\n") and entry["at"].endswith("Z")

    await device.send({"type": "document.open", "name": "note-ferry-times.md"})
    opened = await device.until(lambda f: f["type"] == "document")
    assert opened["title"] == "Ferry times" and "leaves at 9:40" in opened["text"]

    for name in ("../" * 3 + "secret", "no-such-note.md"):
        await device.send({"type": "document.open", "name": name})
        refusal = await device.until(lambda f: f["type"] == "error")
        assert refusal["code"] == "bad_frame" and "no document" in refusal["text"]

    await device.send({"type": "document.delete", "name": "note-ferry-times.md"})
    assert (await device.until(lambda f: f["type"] == "documents"))["items"] == []
    await device.send({"type": "document.restore", "name": "note-ferry-times.md"})
    assert (await device.until(lambda f: f["type"] == "documents"))["items"] == [entry]
    assert_frames_leak_nothing(device.seen)

    stranger, _ = await Device.open(stack.live_url, stack.token(other))
    await stranger.send({"type": "document.open", "name": "note-ferry-times.md"})
    assert (await stranger.until(lambda f: f["type"] == "error"))["code"] == "bad_frame"
    await stranger.send({"type": "documents.list"})
    assert (await stranger.until(lambda f: f["type"] == "documents"))["items"] == []
    await device.ask("Still there?")  # the connection kept answering through every refusal
    await device.close()
    await stranger.close()


async def test_the_memory_page_lists_what_violet_told_apart(stack: Stack) -> None:
    device, _ = await Device.open(stack.live_url, stack.token(person()))
    await device.send({"type": "memory.list"})
    page = await device.until(lambda f: f["type"] == "memory")
    assert page["items"] == [] and isinstance(page["told"], list)
    for told in page["told"]:
        assert set(told) == {"item", "text", "source", "at"}
    await device.close()


async def test_a_hello_names_the_time_zone_the_model_is_told_the_persons_time_in(
    stack: Stack,
) -> None:
    name = person()
    device = await Device.connect(stack.live_url)
    await device.send({"type": "hello", "token": stack.token(name), "since": 0, "tz": "CET+1"})
    refused = await device.next()
    assert refused["type"] == "error" and refused["code"] == "bad_frame"
    assert "time zone" in refused["text"]
    # Nothing was kept; the device may say hello again, on the same socket.
    assert stack.rows("session", "SELECT 1 FROM conversations WHERE person = :p", p=name) == []
    await device.send(
        {"type": "hello", "token": stack.token(name), "since": 0, "tz": "Pacific/Auckland"}
    )
    assert (await device.next())["type"] == "welcome"
    assert (await device.ask("Hello there"))["from"] == "violet"
    kept = stack.rows("session", "SELECT time_zone FROM conversations WHERE person = :p", p=name)
    assert [tuple(row) for row in kept] == [("Pacific/Auckland",)]
    if stack.model_api is not None:
        who = stack.pseudonym(name)
        told = [
            block["text"]
            for request in stack.model_api.requests()
            if (request["body"].get("metadata") or {}).get("user_id") == who
            for message in request["body"]["messages"][-1:]
            for block in message["content"]
            if isinstance(block, dict) and block.get("text", "").startswith(NOW_HEADING)
        ]
        assert told and all(text.endswith("(Pacific/Auckland)") for text in told)
    assert_frames_leak_nothing(device.seen)
