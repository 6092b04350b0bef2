"""What the main model's tool calls do, run against a router and a worker in the same process:
work is routed then handed off and pinned, promises are pinned and kept, approval answers are
passed on, and every call gets a result block the model can read, an error when it did nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from session.actions import MainActions
from session.conversations import Conversation, Conversations
from session.effects import CallKeys
from session.pins import Pins
from session.store import ConversationStore
from tests.support.fakes import FakePeers, session_tables
from violet.identity import Identity
from violet.models import ToolCall
from violet.models import tools as t

IDENTITY = Identity("ana", "internal-token")


@dataclass
class Rig:
    actions: MainActions
    pins: Pins
    peers: FakePeers
    conversation: Conversation
    conversations: Conversations
    turns: int = 0

    async def run(self, *calls: ToolCall) -> list[dict]:
        """One round of calls, as a new message's turn makes them."""
        self.turns += 1
        keys = CallKeys(f"say:{self.turns}")
        return await self.actions.run_all(self.conversation, IDENTITY, calls, keys)

    async def open_pins(self, kind: str | None = None) -> list[tuple[str, str, str | None]]:
        return [
            (pin.kind, pin.text, pin.ref)
            for pin in await self.pins.open(self.conversation.id, kind)
        ]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with session_tables(tmp_path) as sessions:
        store, peers = ConversationStore.open(sessions, notify=False), FakePeers()
        conversation = await store.conversations.conversation_of("ana")
        actions = MainActions(store.pins, store.effects, peers, store.reminders)  # type: ignore[arg-type]
        yield Rig(actions, store.pins, peers, conversation, store.conversations)


def start_work(request: str, call_id: str = "toolu_w") -> ToolCall:
    return ToolCall(call_id, t.START_WORK, {"request": request})


async def test_work_is_routed_then_handed_to_the_worker_and_pinned_under_its_topic(
    rig: Rig,
) -> None:
    rig.peers.routed_to = "t_garden"
    [block] = await rig.run(start_work("find spring bulbs for the garden"))

    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_w",
        "content": "Started; the result will come back as an update.",
    }
    [routed] = rig.peers.called("Route")
    [started] = rig.peers.called("StartWork")
    assert routed.request == started.request == "find spring bulbs for the garden"
    assert started.topic == "t_garden"
    assert started.key == f"{rig.conversation.id}/say:1/start_work/1"
    assert await rig.open_pins() == [("work", "find spring bulbs for the garden", "t_garden")]


async def test_a_promise_made_beside_a_hand_off_is_tied_to_that_work(rig: Rig) -> None:
    promise = ToolCall("toolu_p", t.RECORD_PROMISE, {"text": "tell Ana about the bulbs"})
    _, made = await rig.run(start_work("find spring bulbs"), promise)

    assert made["tool_use_id"] == "toolu_p" and "is_error" not in made
    promise_id = json.loads(made["content"])["promise_id"]
    [pin] = await rig.pins.open(rig.conversation.id, "promise")
    assert (pin.id, pin.text, pin.ref) == (promise_id, "tell Ana about the bulbs", rig.peers.topic)


async def test_a_promise_alone_is_pinned_without_work_and_kept_when_asked(rig: Rig) -> None:
    [made] = await rig.run(ToolCall("toolu_p", t.RECORD_PROMISE, {"text": "call on Friday"}))
    assert await rig.open_pins() == [("promise", "call on Friday", None)]

    promise_id = json.loads(made["content"])["promise_id"]
    [kept] = await rig.run(ToolCall("toolu_k", t.KEEP_PROMISE, {"promise_id": promise_id}))
    assert kept["content"] == "Marked as kept." and "is_error" not in kept
    assert await rig.open_pins() == []
    assert rig.peers.calls == []  # promises stay inside the session


async def test_work_the_router_or_worker_cannot_take_is_an_error_and_can_be_tried_again(
    rig: Rig,
) -> None:
    rig.peers.reachable = False
    [failed] = await rig.run(start_work("look up the tides"))
    assert failed["is_error"] is True
    assert failed["content"] == "The work could not be started just now."
    assert await rig.open_pins() == []

    rig.peers.reachable = True
    keys = CallKeys("say:1")  # the same turn run again: nothing was recorded, so it starts now
    [started] = await rig.actions.run_all(
        rig.conversation, IDENTITY, [start_work("look up the tides")], keys
    )
    assert "is_error" not in started
    assert len(rig.peers.called("StartWork")) == 1


async def test_a_declined_approval_is_passed_on_as_no_and_its_pin_closed(rig: Rig) -> None:
    asked = await rig.pins.add(rig.conversation.id, "approval", "Send it to Bo?", ref="ap_7")
    answer = {"approval_id": asked.id, "answer": "no"}
    [block] = await rig.run(ToolCall("toolu_a", t.ANSWER_APPROVAL, answer))

    assert block["content"] == "Dropped, as asked." and "is_error" not in block
    [passed] = rig.peers.called("AnswerApproval")
    assert (passed.approval, passed.approved) == ("ap_7", False)
    assert await rig.open_pins() == []


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            ToolCall("toolu_1", "delete_everything", {}),
            "There is no tool called delete_everything.",
        ),
        (ToolCall("toolu_1", t.START_WORK, {"request": "  "}), "Say what the work is."),
        (ToolCall("toolu_1", t.RECORD_PROMISE, {"text": ""}), "Say what was promised."),
        (
            ToolCall("toolu_1", t.KEEP_PROMISE, {"promise_id": "p_nothing"}),
            "There is no open promise with that id.",
        ),
        (
            ToolCall("toolu_1", t.ANSWER_APPROVAL, {"approval_id": "x", "answer": "maybe"}),
            'The answer must be "yes" or "no".',
        ),
        (
            ToolCall("toolu_1", t.ANSWER_APPROVAL, {"approval_id": "x", "answer": "yes"}),
            "Nothing is waiting for that answer.",
        ),
    ],
)
async def test_a_call_that_cannot_be_done_gets_an_error_result_and_changes_nothing(
    rig: Rig, call: ToolCall, error: str
) -> None:
    [block] = await rig.run(call)
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": error,
        "is_error": True,
    }
    assert rig.peers.calls == []
    assert await rig.open_pins() == []


async def test_an_approval_of_another_conversation_cannot_be_answered(rig: Rig) -> None:
    others = await rig.conversations.conversation_of("bo")
    theirs = await rig.pins.add(others.id, "approval", "Pay the bill?", ref="ap_bo")
    [block] = await rig.run(
        ToolCall("toolu_a", t.ANSWER_APPROVAL, {"approval_id": theirs.id, "answer": "yes"})
    )
    assert block["is_error"] is True
    assert rig.peers.called("AnswerApproval") == []
    assert [pin.id for pin in await rig.pins.open(others.id)] == [theirs.id]
