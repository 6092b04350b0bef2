"""`violet bench`'s people-at-once scenario, small, on a real stack, with says on a clock and in
bursts (each a pause after the previous answer): what it counts over the phone
protocol (answers per say, facts recalled) agrees with the conversation each person finds on a
new device afterwards, and each service's CPU time is read. Nothing here is timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import websockets

from tests.support.stack import running_stack
from violet.models import JsonObject
from violet_cli.bench_load import (
    CLIENT,
    SERVICE_ORDER,
    Script,
    burst_scripts,
    people_at_once,
    recalled,
    scripts,
)

PEOPLE = 5
RATE_LIMITS = {"VIOLET_SAYS_PER_MINUTE": "100000", "VIOLET_SAY_BURST": "1000"}


async def history(live_url: str, token: str) -> list[JsonObject]:
    """The person's whole conversation, as a new device receives it after `hello`."""
    async with websockets.connect(live_url) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        welcome = json.loads(await socket.recv())
        messages: list[JsonObject] = []
        while not messages or messages[-1]["seq"] < welcome["seq"]:
            frame = json.loads(await socket.recv())
            if frame["type"] == "message":
                messages.append(frame)
        return messages


ON_A_CLOCK = scripts(PEOPLE, seed=5, gap_s=2.0, first_say_within_s=1.0)
IN_BURSTS = burst_scripts(PEOPLE, seed=5, says=4, pauses_s=(0.2, 1.0), first_say_within_s=1.0)


@pytest.mark.parametrize("made", [ON_A_CLOCK, IN_BURSTS], ids=["on a clock", "in bursts"])
async def test_people_at_once_counts_each_answer_and_recall_as_the_conversation_shows(
    tmp_path: Path, made: list[Script]
) -> None:
    with running_stack(tmp_path / "home", "sqlite", env=RATE_LIMITS) as stack:
        pids = {name: process.pid for name, process in stack.processes.items()}
        found = await people_at_once(stack.live_url, stack.token, pids, made)
        conversations = [await history(stack.live_url, stack.token(s.person)) for s in made]

    answers = [[m for m in c if m["from"] == "violet" and "reply_to" in m] for c in conversations]
    said = sum(len(s.lines) for s in made)
    assert sum(len(a) for a in answers) == said
    assert (found.tally.said, found.tally.answered) == (said, said)
    assert (found.tally.duplicates, found.tally.missing, found.tally.strays) == (0, 0, 0)
    assert len(found.latency.samples_ms) == said
    assert 0 < found.saying_s <= found.seconds
    assert not found.errors

    question_answers = [
        next(
            a["text"] for a in person if a["reply_to"] == f"{script.person}-{len(script.lines) - 1}"
        )
        for script, person in zip(made, answers, strict=True)
    ]
    expected = sum(recalled(t, s.value) for t, s in zip(question_answers, made, strict=True))
    assert found.facts_recalled == expected

    assert set(found.cpu.seconds) == {*SERVICE_ORDER, CLIENT}
    assert found.cpu.seconds["memory"] > 0  # it embedded every turn
