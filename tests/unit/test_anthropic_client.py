"""The Anthropic implementation on the real `anthropic` SDK, against the local Messages API."""

from __future__ import annotations

import socket
import warnings

import pytest
from anthropic._data import DEPRECATED_MODELS
from anthropic.types.model_param import ModelParam

from tests.support import messages_api as api_support
from tests.support.messages_api import (
    MessagesAPI,
    error,
    invalid_request,
    overloaded,
    rate_limited,
    stall,
    text,
    tool_call,
)
from violet.models import (
    DEFAULT_FAST_MODEL,
    DEFAULT_MAIN_MODEL,
    Candidate,
    ModelClient,
    ModelOutputInvalid,
    ModelRejected,
    ModelUnavailable,
    UsageLedger,
    fold,
    make_model_client,
    origin,
    pick,
)
from violet.models import tools as t
from violet.models.anthropic_client import opaque_user_id
from violet.models.structured import FOLD, PICK

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

MAIN = "claude-main-test"
FAST = "claude-fast-test"
PERSON = "ana"
SYSTEM = f"You are Violet.\n\n{t.MEMORY_HEADING}\n- I take my coffee black\n"


def client_for(url: str, *, timeout_s: float = 5, max_retries: int = 2) -> ModelClient:
    return make_model_client(
        api_key="test-key",
        base_url=url,
        main_model=MAIN,
        fast_model=FAST,
        timeout_s=timeout_s,
        max_retries=max_retries,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
        ledger=UsageLedger(),
    )


@pytest.fixture
async def client(messages_api: MessagesAPI):
    made = client_for(messages_api.url)
    yield made
    await made.aclose()


def user(words: str) -> list[dict]:
    return [{"role": "user", "content": words}]


async def main_reply(client: ModelClient, words: str, *, tier: str = "main"):
    tools = t.MAIN_TOOLS if tier == "main" else t.WORK_TOOLS
    return await client.reply(
        tier=tier, system=SYSTEM, messages=user(words), tools=tools, person=PERSON
    )


def test_default_models_are_current():
    known = ModelParam.__args__[0].__args__
    for name in (DEFAULT_MAIN_MODEL, DEFAULT_FAST_MODEL):
        assert name in known and name not in DEPRECATED_MODELS


async def test_work_tier_text_reply_is_not_streamed(client, messages_api):
    messages_api.push(text("Hello from the work side."))
    reply = await main_reply(client, "hi", tier="work")
    assert reply.text == "Hello from the work side."
    assert reply.tool_calls == [] and reply.stop_reason == "end_turn"
    assert reply.content == [{"type": "text", "text": "Hello from the work side."}]
    assert reply.usage.model == MAIN and reply.usage.input_tokens > 0
    [sent] = messages_api.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["authorization"] == "Bearer test-key"
    body = sent.body
    assert "stream" not in body
    assert body["model"] == MAIN and body["system"] == SYSTEM and body["messages"] == user("hi")
    assert [tool["name"] for tool in body["tools"]] == [tool.name for tool in t.WORK_TOOLS]
    assert body["tools"][0]["input_schema"] == t.FETCH_PAGE_TOOL.input_schema
    assert "tool_choice" not in body
    assert body["metadata"] == {"user_id": opaque_user_id(PERSON)}
    assert PERSON not in str(body["metadata"])


async def test_main_tier_reply_is_streamed(client, messages_api):
    words = "A longer answer that arrives in several pieces over the stream. " * 3
    messages_api.push(text(words))
    reply = await main_reply(client, "tell me something")
    assert reply.text == words
    assert messages_api.bodies[0]["stream"] is True
    assert [tool["name"] for tool in messages_api.bodies[0]["tools"]] == [
        tool.name for tool in t.MAIN_TOOLS
    ]


async def test_streamed_tool_use_arrives_whole(client, messages_api):
    request = {"request": "look up the weather in Oslo, Norway, for the whole week"}
    messages_api.push(tool_call(t.START_WORK, request, before="On it."))
    reply = await main_reply(client, "look up the weather")
    assert reply.stop_reason == "tool_use" and reply.text == "On it."
    [call] = reply.tool_calls
    assert (call.name, call.input) == (t.START_WORK, request)
    assert reply.content[1] == {
        "type": "tool_use",
        "id": call.id,
        "name": t.START_WORK,
        "input": request,
    }


async def test_a_tool_round_trip_passes_the_blocks_back_as_they_came(client, messages_api):
    first = await main_reply(client, "look up the weather")
    messages = [
        *user("look up the weather"),
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": c.id, "content": "ok"}
                for c in first.tool_calls
            ],
        },
    ]
    second = await client.reply(
        tier="main", system=SYSTEM, messages=messages, tools=t.MAIN_TOOLS, person=PERSON
    )
    assert second.text == "I'm on it: I'll tell you as soon as it's done."
    assert messages_api.bodies[1]["messages"] == messages


async def test_structured_call_is_a_forced_strict_tool_on_the_fast_model(client, messages_api):
    messages_api.push(tool_call(PICK, {"choice": "c2", "confidence": 0.75, "reason": "trains"}))
    candidates = [Candidate("c1", "cooking", 0.3), Candidate("c2", "train trips", 0.8)]
    result = await pick(client, request="trains to Bergen", candidates=candidates, person=PERSON)
    assert (result.choice, result.confidence, result.reason) == ("c2", 0.75, "trains")
    body = messages_api.bodies[0]
    assert body["model"] == FAST and "stream" not in body
    assert body["tool_choice"] == {"type": "tool", "name": PICK}
    [tool] = body["tools"]
    assert tool["name"] == PICK and tool["strict"] is True
    schema = tool["input_schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["choice", "confidence", "reason"]
    assert schema["properties"]["choice"]["enum"] == ["c1", "c2", "new"]
    assert "trains to Bergen" in body["messages"][0]["content"]


async def test_a_pick_outside_the_candidates_is_rejected(client, messages_api):
    messages_api.push(tool_call(PICK, {"choice": "c9", "confidence": 0.9, "reason": "x"}))
    with pytest.raises(ModelOutputInvalid, match="choice"):
        await pick(client, request="r", candidates=[Candidate("c1", "d", 0.9)], person=PERSON)


@pytest.mark.parametrize(
    "answer",
    [
        {"summary": 12, "open_promises": [], "kept": []},
        {"summary": "x" * 1001, "open_promises": [], "kept": []},
        {"summary": "ok", "open_promises": ["a promise never made"], "kept": []},
        {"summary": "ok", "open_promises": [], "kept": [], "extra": 1},
        {"summary": "ok", "open_promises": []},
    ],
)
async def test_a_structured_answer_that_violates_the_schema_is_rejected(
    client, messages_api, answer
):
    messages_api.push(tool_call(FOLD, answer))
    with pytest.raises(ModelOutputInvalid):
        await fold(client, previous_summary="", lines=[], open_promises=[], person=PERSON)
    assert client.ledger.totals(PERSON).failed_calls == 1
    assert client.ledger.totals(PERSON).input_tokens > 0


async def test_a_confidence_outside_zero_to_one_is_rejected(client, messages_api):
    messages_api.push(tool_call(PICK, {"choice": "new", "confidence": 1.5, "reason": "x"}))
    with pytest.raises(ModelOutputInvalid, match="confidence"):
        await pick(client, request="r", candidates=[Candidate("c1", "d", 0.1)], person=PERSON)


async def test_a_structured_call_answered_with_text_is_rejected(client, messages_api):
    messages_api.push(text("I'd rather not."))
    with pytest.raises(ModelOutputInvalid, match="exactly once"):
        await fold(client, previous_summary="", lines=[], open_promises=[], person=PERSON)


async def test_structured_calls_in_rules_mode_follow_the_offline_rules(client, messages_api):
    chosen = await pick(client, request="r", candidates=[Candidate("c1", "d", 0.7)], person=PERSON)
    assert chosen.choice == "c1"
    folded = await fold(
        client,
        previous_summary="",
        lines=[("person", "I like tea."), ("violet", "Done: tea found.")],
        open_promises=["find tea"],
        person=PERSON,
    )
    assert folded.kept == ["find tea"] and "Person: I like tea." in folded.summary
    items = await origin(
        client,
        person_message="I live in Oslo.",
        violet_answer="Nice.",
        person=PERSON,
    )
    assert [(i.origin, i.quote) for i in items] == [("you", "I live in Oslo")]
    origin_tool = messages_api.bodies[-1]["tools"][0]
    assert origin_tool["input_schema"]["properties"]["items"]["items"]["properties"]["origin"][
        "enum"
    ] == ["you"]


@pytest.mark.parametrize("failure", [overloaded, rate_limited])
async def test_overload_then_success_is_retried(client, messages_api, failure):
    messages_api.push(failure(), text("made it"))
    reply = await main_reply(client, "hi")
    assert reply.text == "made it"
    assert len(messages_api.requests) == 2


async def test_an_overload_inside_a_stream_is_retried(client, messages_api):
    messages_api.push(overloaded(mid_stream=True), text("second time lucky"))
    reply = await main_reply(client, "hi")
    assert reply.text == "second time lucky"
    assert len(messages_api.requests) == 2


async def test_server_errors_give_up_after_the_retries(client, messages_api):
    messages_api.push(*(error(500, "api_error", "Internal server error") for _ in range(3)))
    with pytest.raises(ModelUnavailable) as raised:
        await main_reply(client, "hi", tier="work")
    assert raised.value.attempts == 3 and raised.value.status_code == 500
    assert len(messages_api.requests) == 3
    assert client.ledger.totals(PERSON).failed_calls == 1


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "invalid_request_error"), (401, "authentication_error"), (404, "not_found_error")],
)
async def test_client_errors_are_not_retried(client, messages_api, status, kind):
    messages_api.push(error(status, kind, "no"), text("never sent"))
    with pytest.raises(ModelRejected) as raised:
        await main_reply(client, "hi")
    assert raised.value.status_code == status and raised.value.attempts == 1
    assert len(messages_api.requests) == 1


async def test_an_invalid_request_is_rejected_with_its_reason(client, messages_api):
    messages_api.push(invalid_request("messages: text content blocks must be non-empty"))
    with pytest.raises(ModelRejected, match="must be non-empty"):
        await main_reply(client, "hi", tier="work")


async def test_a_tool_result_without_its_tool_use_is_refused_like_the_api(client):
    messages = [
        *user("hi"),
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}],
        },
    ]
    with pytest.raises(ModelRejected, match="tool_use_id"):
        await client.reply(
            tier="main", system="", messages=messages, tools=t.MAIN_TOOLS, person=PERSON
        )


async def test_a_timeout_is_retried_then_reported(messages_api):
    quick = client_for(messages_api.url, timeout_s=0.3, max_retries=1)
    messages_api.push(stall(5), stall(5))
    with pytest.raises(ModelUnavailable, match="did not answer") as raised:
        await quick.reply(tier="work", system="", messages=user("hi"), tools=[], person=PERSON)
    assert raised.value.attempts == 2
    await quick.aclose()


async def test_a_timeout_then_an_answer_succeeds(messages_api):
    quick = client_for(messages_api.url, timeout_s=0.3, max_retries=1)
    messages_api.push(stall(5), text("there you are"))
    reply = await quick.reply(tier="main", system="", messages=user("hi"), tools=[], person=PERSON)
    assert reply.text == "there you are"
    await quick.aclose()


async def test_a_stream_that_stops_mid_way_times_out(messages_api):
    quick = client_for(messages_api.url, timeout_s=0.3, max_retries=0)
    messages_api.push(text("never finished", stream_pause_s=3))
    with pytest.raises(ModelUnavailable):
        await quick.reply(tier="main", system="", messages=user("hi"), tools=[], person=PERSON)
    await quick.aclose()


async def test_an_unreachable_service_is_unavailable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = client_for(f"http://127.0.0.1:{port}", max_retries=1)
    with pytest.raises(ModelUnavailable, match="could not be reached") as raised:
        await unreachable.reply(
            tier="main", system="", messages=user("hi"), tools=[], person=PERSON
        )
    assert raised.value.attempts == 2
    await unreachable.aclose()


async def test_default_model_names_raise_no_deprecation_warning(messages_api):
    default = make_model_client(
        api_key="k", base_url=messages_api.url, main_model="", fast_model=""
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await default.reply(tier="main", system="", messages=user("hi"), tools=[], person=PERSON)
        await pick(default, request="r", candidates=[Candidate("c", "d", 1.0)], person=PERSON)
    assert [b["model"] for b in messages_api.bodies] == [DEFAULT_MAIN_MODEL, DEFAULT_FAST_MODEL]
    await default.aclose()


async def test_usage_is_counted_per_person(client, messages_api):
    await main_reply(client, "hello")
    await main_reply(client, "look up the tides")
    totals = client.ledger.totals(PERSON)
    assert totals.calls == 2 and totals.failed_calls == 0
    assert totals.input_tokens > 0 and totals.output_tokens > 0 and totals.latency_s > 0
