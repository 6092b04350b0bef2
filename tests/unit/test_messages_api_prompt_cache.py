"""The local Messages API server caches prompts as the API does, so tests can count cache reads:
prefixes ending at breakpoints, a minimum length, a lifetime renewed by each read, a lookback of
20 blocks, and usage split into read, written and fresh input."""

from __future__ import annotations

import httpx
import pytest

from tests.support import messages_api as api_support
from tests.support.messages_api import MessagesAPI, text
from violet.models import make_model_client
from violet.models import tools as t
from violet.models.cache import EPHEMERAL, cached_system, cached_through_last

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

INSTRUCTIONS = "Answer briefly and kindly. " * 40  # about 350 tokens


@pytest.fixture
def api(messages_api: MessagesAPI) -> MessagesAPI:
    messages_api.cache.min_tokens = 100
    return messages_api


def conversation(turns: int) -> list[dict]:
    """`turns` questions with their answers, then one more question."""
    messages = []
    for number in range(turns + 1):
        messages.append({"role": "user", "content": f"Question number {number} about the sea?"})
        messages.append({"role": "assistant", "content": f"Answer number {number} about it."})
    return messages[:-1]


def send(api: MessagesAPI, messages: list[dict], system: object = None, **extra: object) -> dict:
    body = {"model": "m", "max_tokens": 64, "messages": messages, **extra}
    body["system"] = cached_system(INSTRUCTIONS) if system is None else system
    answer = httpx.post(f"{api.url}/v1/messages", json=body, headers={"x-api-key": "k"}, timeout=5)
    assert answer.status_code == 200, answer.text
    return answer.json()["usage"]


def prompt(usage: dict) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def test_a_prefix_written_at_a_breakpoint_is_read_by_the_next_call_that_starts_with_it(api):
    first = send(api, cached_through_last(conversation(3)))
    assert first["cache_read_input_tokens"] == 0
    assert first["cache_creation_input_tokens"] > 0
    assert (
        first["cache_creation"]["ephemeral_5m_input_tokens"]
        == (first["cache_creation_input_tokens"])
    )
    again = send(api, cached_through_last(conversation(3)))
    assert again["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert again["cache_creation_input_tokens"] == 0
    assert prompt(again) == prompt(first)


def test_what_follows_the_last_breakpoint_is_fresh_input(api):
    messages = cached_through_last(conversation(3))
    messages[-1]["content"].append({"type": "text", "text": "A note that changes at every call."})
    first = send(api, messages)
    messages[-1]["content"][-1]["text"] = "A note that changes with each call"
    second = send(api, messages)
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert second["input_tokens"] == first["input_tokens"] > 0


def test_a_growing_conversation_reads_the_call_before_it(api):
    first = send(api, cached_through_last(conversation(3)))
    grown = send(api, cached_through_last(conversation(4)))
    assert grown["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert grown["cache_creation_input_tokens"] > 0  # the two new messages, written once
    assert grown["input_tokens"] < grown["cache_creation_input_tokens"]


def test_a_change_before_a_breakpoint_reads_only_what_comes_before_the_change(api):
    instructions = send(api, conversation(0))["cache_creation_input_tokens"]
    system = cached_system(INSTRUCTIONS, "## Open items\n- promise p_1: call back")
    send(api, cached_through_last(conversation(3)), system)
    changed = cached_system(INSTRUCTIONS, "## Open items\n- promise p_2: write back")
    after = send(api, cached_through_last(conversation(3)), changed)
    assert after["cache_read_input_tokens"] == instructions


def test_a_prefix_shorter_than_the_minimum_is_not_cached(api):
    api.cache.min_tokens = 100_000
    for _ in range(2):
        usage = send(api, cached_through_last(conversation(3)))
        assert usage["cache_creation_input_tokens"] == usage["cache_read_input_tokens"] == 0


def test_the_5_5_models_cache_prefixes_from_512_tokens(messages_api):
    short = send(messages_api, conversation(0), cached_system(INSTRUCTIONS))  # about 360
    long = send(messages_api, conversation(0), cached_system(INSTRUCTIONS * 2))
    assert short["cache_creation_input_tokens"] == 0
    assert long["cache_creation_input_tokens"] > 512


def test_thinking_blocks_sent_back_are_part_of_the_cached_prefix(api):
    question = conversation(0)
    api.push(text("Answer number 0 about it."))
    body = {"model": "m", "max_tokens": 64, "messages": question}
    body["system"] = cached_system(INSTRUCTIONS)  # as `send` sends it, or the block is bound
    answer = httpx.post(f"{api.url}/v1/messages", json=body, headers={"x-api-key": "k"}).json()
    thinking, words = answer["content"]
    assert thinking["type"] == "thinking"
    later = {"role": "user", "content": "And then?"}
    with_thinking = [*question, {"role": "assistant", "content": [thinking, words]}, later]
    first = send(api, cached_through_last(with_thinking))
    again = send(api, cached_through_last(with_thinking))
    assert again["cache_read_input_tokens"] == prompt(first) - first["input_tokens"]
    without = send(
        api, cached_through_last([*question, {"role": "assistant", "content": [words]}, later])
    )
    assert prompt(without) < prompt(again)
    assert without["cache_read_input_tokens"] < again["cache_read_input_tokens"]


def test_changing_effort_or_the_output_format_misses_the_cache_from_where_it_renders(api):
    instructions = send(api, conversation(0))["cache_creation_input_tokens"]
    send(api, cached_through_last(conversation(3)))
    same = send(api, cached_through_last(conversation(3)))
    effort = send(api, cached_through_last(conversation(3)), output_config={"effort": "high"})
    assert same["cache_read_input_tokens"] > instructions
    assert effort["cache_read_input_tokens"] == instructions
    api.push(text("{}"))
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    wanted = {"format": {"type": "json_schema", "schema": schema}}
    assert send(api, conversation(3), output_config=wanted)["cache_read_input_tokens"] == 0


def test_a_cached_prefix_lives_five_minutes_from_its_last_read(api):
    messages = cached_through_last(conversation(3))
    send(api, messages)
    api.advance_clock(240)
    assert send(api, messages)["cache_read_input_tokens"] > 0
    api.advance_clock(240)  # 8 minutes after the write, 4 after the read that renewed it
    assert send(api, messages)["cache_read_input_tokens"] > 0
    api.advance_clock(301)
    assert send(api, messages)["cache_read_input_tokens"] == 0


def test_a_one_hour_breakpoint_outlives_five_minutes(api):
    messages = conversation(3)
    messages[-1] = {
        "role": "user",
        "content": [{"type": "text", "text": "Last?", "cache_control": {**EPHEMERAL, "ttl": "1h"}}],
    }
    system = [{"type": "text", "text": INSTRUCTIONS, "cache_control": {**EPHEMERAL, "ttl": "1h"}}]
    first = send(api, messages, system)
    assert first["cache_creation"]["ephemeral_1h_input_tokens"] > 0
    api.advance_clock(1800)
    assert send(api, messages, system)["cache_read_input_tokens"] > 0


@pytest.mark.parametrize(
    ("turns", "extra", "reaches"), [(10, 0, True), (11, 1, True), (12, 0, False)]
)
def test_a_hit_is_found_within_20_blocks_counting_the_breakpoint_and_no_further(
    api, turns, extra, reaches
):
    """The lookback checks the breakpoint's block and the 19 before it: a prefix written 16 or
    19 blocks back is read, one written 20 blocks back is not."""
    instructions = send(api, conversation(0))["cache_creation_input_tokens"]
    send(api, cached_through_last(conversation(2)))  # written at its 5th message block
    messages = conversation(turns)
    messages[-1] = {
        "role": "user",
        "content": [
            {"type": "text", "text": f"Part {n} of the question."} for n in range(extra + 1)
        ],
    }
    later = send(api, cached_through_last(messages))  # 16, 19 or 20 blocks on
    assert later["cache_read_input_tokens"] >= instructions
    assert (later["cache_read_input_tokens"] > instructions) is reaches


def test_a_new_tool_choice_keeps_tools_and_system_cached_but_misses_the_messages(api):
    tools = [
        {"name": "look_up", "description": "Looks a word up.", "input_schema": {"type": "object"}}
    ]
    head = send(api, conversation(0), tools=tools)["cache_creation_input_tokens"]
    send(api, cached_through_last(conversation(3)), tools=tools)
    same = send(api, cached_through_last(conversation(3)), tools=tools)
    assert same["cache_read_input_tokens"] > head
    none = {"type": "none"}
    changed = send(api, cached_through_last(conversation(3)), tools=tools, tool_choice=none)
    assert changed["cache_read_input_tokens"] == head
    auto = {"type": "auto"}
    assert (
        send(api, cached_through_last(conversation(3)), tools=tools, tool_choice=auto)[
            "cache_read_input_tokens"
        ]
        == same["cache_read_input_tokens"]
    )


@pytest.mark.parametrize(
    "system",
    [
        [{"type": "text", "text": f"part {n}", "cache_control": EPHEMERAL} for n in range(5)],
        [
            {"type": "text", "text": "a", "cache_control": EPHEMERAL},
            {"type": "text", "text": "b", "cache_control": {**EPHEMERAL, "ttl": "1h"}},
        ],
        [{"type": "text", "text": "a", "cache_control": {"type": "forever"}}],
        [{"type": "text", "text": " "}],
    ],
    ids=["five breakpoints", "1h after 5m", "unknown type", "empty text"],
)
@pytest.mark.expects_rejections
def test_breakpoints_the_api_refuses_are_refused(api, system):
    body = {"model": "m", "max_tokens": 64, "messages": conversation(0), "system": system}
    answer = httpx.post(f"{api.url}/v1/messages", json=body, headers={"x-api-key": "k"}, timeout=5)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"


async def test_the_sdk_reads_the_cache_usage_from_a_stream_and_the_record_keeps_it(api):
    client = make_model_client(api_key="k", base_url=api.url, main_model="main", fast_model="fast")
    for _ in range(2):
        reply = await client.reply(
            tier="main",
            system=cached_system(INSTRUCTIONS),
            messages=[{"role": "user", "content": "hello"}],
            tools=t.MAIN_TOOLS,
            person="ada",
        )
    await client.aclose()
    assert api.bodies[-1]["stream"] is True
    assert reply.usage.cache_read_tokens == api.requests[-1].usage["cache_read_input_tokens"] > 0
    assert reply.usage.prompt_tokens == prompt(api.requests[0].usage)


def test_a_promise_script_records_every_third_turn_and_keeps_the_oldest_before_the_next(api):
    api.promise_script(every=3, keeps=True)
    tools = [{"name": n.name, "input_schema": n.input_schema} for n in t.MAIN_TOOLS]
    made: list[str] = []
    for turn in range(1, 9):
        system = "## Open items\n" + "\n".join(f"- promise p_{n}: x" for n in made)
        body = {"model": "m", "max_tokens": 64, "messages": conversation(0), "tools": tools}
        answer = httpx.post(
            f"{api.url}/v1/messages",
            json={**body, "system": system},
            headers={"x-api-key": "k"},
            timeout=5,
        ).json()
        calls = [b for b in answer["content"] if b["type"] == "tool_use"]
        if turn % 3 == 0:
            assert [c["name"] for c in calls] == [t.RECORD_PROMISE]
            made.append(str(turn))
        elif turn % 3 == 2 and made:
            assert calls == [
                {**calls[0], "name": t.KEEP_PROMISE, "input": {"promise_id": f"p_{made[0]}"}}
            ]
            made.pop(0)
        else:
            assert calls == []
