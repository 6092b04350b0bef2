"""A turn that runs again after a crash repeats none of its tool calls: each call's key comes
from what caused it, and a call already done gives its recorded result."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from session.actions import MainActions
from session.conversations import Conversation, Conversations
from session.effects import CallKeys, Effects
from session.pins import Pins
from session.reminders.store import Reminders
from tests.support.fakes import FakePeers, session_tables
from violet.identity import Identity
from violet.models import ToolCall
from violet.models import tools as t


@dataclass
class Rig:
    actions: MainActions
    pins: Pins
    peers: FakePeers
    conversation: Conversation


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with session_tables(tmp_path) as sessions:
        pins, peers = Pins(sessions), FakePeers()
        conversation = await Conversations(sessions).conversation_of("ana")
        yield Rig(
            MainActions(pins, Effects(sessions), peers, Reminders(sessions)),
            pins,
            peers,
            conversation,
        )  # type: ignore[arg-type]


IDENTITY = Identity("ana", "internal-token")


def hand_off(call_id: str, request: str = "look up the tides") -> list[ToolCall]:
    return [
        ToolCall(f"{call_id}-a", t.START_WORK, {"request": request}),
        ToolCall(f"{call_id}-b", t.RECORD_PROMISE, {"text": "tell the tides"}),
    ]


def test_keys_come_from_the_cause_and_the_calls_names_in_order() -> None:
    keys = CallKeys("say:7")
    assert [keys.next(t.START_WORK), keys.next(t.RECORD_PROMISE), keys.next(t.START_WORK)] == [
        "say:7/start_work/1",
        "say:7/record_promise/1",
        "say:7/start_work/2",
    ]


async def test_a_turn_run_again_starts_no_work_twice_and_gets_the_same_results(rig: Rig) -> None:
    first = await rig.actions.run_all(rig.conversation, IDENTITY, hand_off("x"), CallKeys("say:3"))
    # Run again after a crash: a real model gives other ids and other words this time.
    again = await rig.actions.run_all(
        rig.conversation, IDENTITY, hand_off("y", "look the tides up"), CallKeys("say:3")
    )
    assert [b["content"] for b in again] == [b["content"] for b in first]
    (started,) = [request for name, request in rig.peers.calls if name == "StartWork"]
    assert started.key == f"{rig.conversation.id}/say:3/start_work/1"
    promise = json.loads(first[1]["content"])["promise_id"]
    assert [(p.kind, p.id) for p in await rig.pins.open(rig.conversation.id, "promise")] == [
        ("promise", promise)
    ]
    assert len(await rig.pins.open(rig.conversation.id, "work")) == 1


async def test_another_message_starts_its_own_work(rig: Rig) -> None:
    await rig.actions.run_all(rig.conversation, IDENTITY, hand_off("x"), CallKeys("say:3"))
    await rig.actions.run_all(rig.conversation, IDENTITY, hand_off("y"), CallKeys("say:5"))
    keys = [request.key for name, request in rig.peers.calls if name == "StartWork"]
    assert keys == [
        f"{rig.conversation.id}/say:3/start_work/1",
        f"{rig.conversation.id}/say:5/start_work/1",
    ]


async def test_an_answer_passed_on_is_not_passed_on_again(rig: Rig) -> None:
    pin = await rig.pins.add(rig.conversation.id, "approval", "Shall I send it?", ref="ap_1")
    answer = [ToolCall("z", t.ANSWER_APPROVAL, {"approval_id": pin.id, "answer": "yes"})]
    first = await rig.actions.run_all(rig.conversation, IDENTITY, answer, CallKeys("say:9"))
    again = await rig.actions.run_all(rig.conversation, IDENTITY, answer, CallKeys("say:9"))
    assert first[0]["content"] == again[0]["content"] == "Passed on."
    assert "is_error" not in again[0]
    assert [name for name, _ in rig.peers.calls] == ["AnswerApproval"]
