"""A turn costs the same at message 50 and at message 5,000, and most of it is cached.

One recorded conversation of 300 turns at the default window: the session's own parts (the
transcript, pins, fold and turn runner on SQLite) call the model through the real SDK, on the
local Messages API server in its own process, whose prompt cache works as the API's and whose
main model records a promise every third turn and never keeps one. The figures come from the
requests the server recorded (`violet_cli.economy`, which `violet bench` runs longer).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest_asyncio

from session.pins import PINNED_CHARS, PINNED_ITEMS
from violet.models.cache import system_text
from violet.models.tools import PINNED_HEADING, RECORD_PROMISE, UPDATE_PREFIX, is_memory_note
from violet_cli.economy import (
    Economy,
    Talked,
    chatter,
    figures,
    local_messages_api,
    recorded_requests,
    script_promises,
    talk,
)

TURNS = 300
WINDOW = 30
CHECK_IN = "I still owe you this from earlier"


@dataclass
class Recorded:
    economy: Economy
    requests: list[dict]
    talked: Talked

    @property
    def main_calls(self) -> list[dict]:
        return [
            r["body"]
            for r in self.requests
            if any(tool["name"] == RECORD_PROMISE for tool in r["body"].get("tools", []))
        ]


@pytest_asyncio.fixture(scope="module")
async def recorded() -> AsyncIterator[Recorded]:
    with local_messages_api() as url:
        script_promises(url, every=3, keeps=False)
        talked = await talk(url, chatter(TURNS), window=WINDOW)
        requests = recorded_requests(url)
    yield Recorded(figures(requests, talked.transcript), requests, talked)


def test_the_main_call_at_turns_280_to_300_is_the_size_it_was_at_turns_40_to_60(recorded):
    assert recorded.economy.turns == TURNS
    assert 0.9 <= recorded.economy.size_ratio() <= 1.1
    # Without a window, the same conversation would cost many times as much by now.
    assert recorded.economy.baseline[-1] > 5 * recorded.economy.sizes[-1]


def test_a_fold_runs_about_once_every_quarter_window_of_turns(recorded):
    assert 100 / (WINDOW / 2) <= recorded.economy.folds_per_100_turns <= 15


def test_main_calls_are_laid_out_for_the_prompt_cache(recorded):
    economy = recorded.economy
    assert economy.cache_control_share >= 0.95
    assert economy.median_stable_prefix >= 0.70
    assert economy.cache_read_share >= 0.5


def test_no_main_call_holds_more_than_the_window(recorded):
    for body in recorded.main_calls:
        said = [
            block
            for message in body["messages"]
            for block in message["content"]
            if block["type"] == "text"
            and not is_memory_note(block)
            and not block["text"].startswith(UPDATE_PREFIX)
        ]
        assert len(said) <= WINDOW


def test_open_promises_ride_every_main_call_within_the_pinned_budget(recorded):
    calls = recorded.main_calls
    first_promise = next(index for index, body in enumerate(calls) if _made_a_promise(body))
    for body in calls[first_promise + 1 :]:
        pinned = _pinned_block(system_text(body["system"]))
        assert pinned, "the open promises are missing from a main call"
        assert len(pinned) <= PINNED_CHARS and pinned.count("\n- ") <= PINNED_ITEMS


def test_the_history_is_complete_and_no_promise_was_dropped_silently(recorded):
    transcript = recorded.talked.transcript
    assert [m.seq for m in transcript] == list(range(1, len(transcript) + 1))
    said = [m for m in transcript if m.author == "you"]
    assert [m.text for m in said] == chatter(TURNS)
    answered = {m.reply_to for m in transcript if m.author == "violet" and m.reply_to}
    assert answered == {m.client_id for m in said}
    made = {
        block["id"]
        for body in recorded.main_calls
        for message in body["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("name") == RECORD_PROMISE
    }
    asked = [m for m in transcript if m.author == "violet" and m.text.startswith(CHECK_IN)]
    still_open = [pin for pin in recorded.talked.open_items if pin.kind == "promise"]
    assert len(made) >= TURNS // 3
    assert asked and len(asked) + len(still_open) == len(made)


def _made_a_promise(body: dict) -> bool:
    """A tool round after the model recorded a promise (it is pinned from the next call on)."""
    return any(
        block.get("name") == RECORD_PROMISE
        for message in body["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
    )


def _pinned_block(system: str) -> str:
    start = system.find(PINNED_HEADING)
    return system[start:].split("\n\n")[0] if start >= 0 else ""
