"""CONTRACTS section 7: one trace per turn across the services, read back from the span file."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from violet.v1 import session_pb2, session_pb2_grpc

ROUTE_ATTRIBUTES = {
    "violet.route.candidates",
    "violet.route.scores",
    "violet.route.pick",
    "violet.route.confidence",
    "violet.route.reason",
}


@pytest.fixture
def traced_stack(tmp_path: Path) -> Iterator[Stack]:
    env = {"VIOLET_TRACE_FILE": str(tmp_path / "spans.jsonl")}
    with running_stack(tmp_path / "home", "sqlite", env=env) as stack:
        yield stack


def spans(stack: Stack) -> list[dict]:
    path = Path(stack.extra_env["VIOLET_TRACE_FILE"])
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def until_spans(
    stack: Stack, check: Callable[[list[dict]], bool], awaiting: str
) -> list[dict]:
    """Spans are written as they end, by five processes; waits until `check` holds."""

    def when_complete() -> list[dict]:
        found = spans(stack)
        return found if check(found) else []

    return await eventually(when_complete, awaiting, timeout_s=20.0)


async def test_a_turn_is_one_trace_across_every_service_and_late_work_links_back(
    traced_stack: Stack,
) -> None:
    device, _ = await Device.open(traced_stack.live_url, traced_stack.token("tracy"))
    await device.ask("My favourite fruit is mango.")
    ack_id = await device.say("Calculate 17*23")
    await device.answer_to(ack_id)
    result = await device.until(
        lambda f: f["type"] == "message" and f["from"] == "violet" and "391" in f["text"],
        timeout=60,
    )
    assert "reply_to" not in result

    def complete(found: list[dict]) -> bool:
        names = {span["name"] for span in found}
        return "tell update" in names and any(s["service"] == "worker" for s in found)

    found = await until_spans(traced_stack, complete, "every span of the turn and the work")
    say = [s for s in found if s["name"] == "say" and s["service"] == "gateway"][-1]
    turn = [s for s in found if s["trace_id"] == say["trace_id"]]
    services = {s["service"] for s in turn}
    assert {"gateway", "session", "memory", "router", "worker"} <= services

    by_id = {s["span_id"]: s for s in turn}
    roots = [s for s in turn if s["parent_id"] is None]
    assert roots == [say]
    for span in turn:  # every span hangs from the say through its parents
        hops = 0
        while span["parent_id"] is not None:
            span = by_id[span["parent_id"]]
            hops += 1
            assert hops < 50
        assert span is say

    route = next(s for s in turn if set(s["attributes"]) >= ROUTE_ATTRIBUTES)
    assert route["service"] == "router"
    assert route["attributes"]["violet.route.pick"] == "new"

    late = [s for s in found if s["service"] == "worker" and s["trace_id"] != say["trace_id"]]
    assert late, "the work's own spans run in their own trace"
    assert any(link["trace_id"] == say["trace_id"] for s in late for link in s["links"])
    telling = [s for s in found if s["name"] == "tell update"][-1]
    assert telling["links"], "the update that tells the person links back to the work"


async def test_no_span_carries_message_text_by_default(traced_stack: Stack) -> None:
    secret_words = "pineapple-lighthouse-42"
    device, _ = await Device.open(traced_stack.live_url, traced_stack.token("quiet"))
    await device.ask(f"My password hint is {secret_words}")
    found = await until_spans(
        traced_stack, lambda f: any(s["name"] == "turn" for s in f), "the turn's span"
    )
    assert found
    assert secret_words not in json.dumps(found)


async def test_streams_and_devices_left_while_sent_to_leave_no_trace_context_or_error_behind(
    traced_stack: Stack,
) -> None:
    someone = "reader-" + uuid.uuid4().hex[:8]
    metadata = (("authorization", f"Bearer {traced_stack.internal_token(someone)}"),)
    async with grpc.aio.insecure_channel(traced_stack.address("session")) as channel:
        session = session_pb2_grpc.SessionStub(channel)
        for n in range(12):  # more history than a stream sends before its reader reads
            said = session_pb2.SayRequest(client_id=json.dumps(f"long-{n}"), text="x" * 6_000)
            await session.Say(said, metadata=metadata)
        for _ in range(5):
            stream = session.Follow(session_pb2.FollowRequest(since=0), metadata=metadata)
            await stream.read()
            stream.cancel()  # the session is sending the rest when its reader goes
    for _ in range(5):  # and the gateway is sending the history when its device goes
        device, _ = await Device.open(traced_stack.live_url, traced_stack.token(someone))
        await device.close()
    await asyncio.to_thread(traced_stack.stop)  # every connection's handling is over

    assert "Failed to detach context" not in traced_stack.log("session")
    gateway = traced_stack.log("gateway")
    assert "Traceback" not in gateway and "running task" not in gateway


async def test_opening_the_app_readies_the_persons_memory_in_the_same_trace(
    traced_stack: Stack,
) -> None:
    device, _ = await Device.open(traced_stack.live_url, traced_stack.token("early-bird"))

    def prepared(found: list[dict]) -> bool:
        return any(s["service"] == "memory" and s["name"].endswith("Prepare") for s in found)

    found = await until_spans(traced_stack, prepared, "memory readied at hello")
    prepare = next(s for s in found if s["service"] == "memory" and s["name"].endswith("Prepare"))
    opening = [s for s in found if s["trace_id"] == prepare["trace_id"]]
    assert any(s["service"] == "session" and s["name"].endswith("Open") for s in opening)
    await device.close()


async def test_memory_learns_who_pays_from_the_capture_and_does_not_ask(
    traced_stack: Stack,
) -> None:
    # The session read the person's credential for its own answer; the capture hands it on,
    # so memory's calls for the turn (making its items) need no call back to the session.
    device, _ = await Device.open(traced_stack.live_url, traced_stack.token("payer"))
    await device.ask("My sister's name is Noor.")
    await device.ask("I walk to school with her.")

    def both_made(found: list[dict]) -> bool:
        made = [s for s in found if s["service"] == "memory" and s["name"].startswith("chat ")]
        return len(made) >= 2

    found = await until_spans(traced_stack, both_made, "memory's calls for both turns")
    asked = [s for s in found if s["name"].endswith("/Credential")]
    assert asked == []
    await device.close()
