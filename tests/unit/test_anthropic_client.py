"""The Anthropic implementation on the real `anthropic` SDK, against the local Messages API that
keeps the documented rules of the 5.5 models (a request it refuses fails the test)."""

from __future__ import annotations

import json
import socket
import time
import warnings
from dataclasses import replace

import pytest
from anthropic._data import DEPRECATED_MODELS
from anthropic.types.model_param import ModelParam

from tests.support import messages_api as api_support
from tests.support.messages_api import (
    MessagesAPI,
    context_exceeded,
    cut,
    error,
    invalid_request,
    overloaded,
    paused,
    rate_limited,
    refusal,
    server_error,
    spend_limit_reached,
    stall,
    text,
    tool_call,
    usage_limits_reached,
)
from violet import fallbacks
from violet.models import (
    DEFAULT_FAST_MODEL,
    DEFAULT_MAIN_MODEL,
    Candidate,
    ModelClient,
    ModelContextFull,
    ModelOutputInvalid,
    ModelRefused,
    ModelRejected,
    ModelUnavailable,
    ModelUnreachable,
    SpendLimitReached,
    UsageLedger,
    fold,
    make_model_client,
    origin,
    pick,
)
from violet.models import tools as t
from violet.models.accounting import calling_as
from violet.models.anthropic_client import CONTINUE, DEFAULT_BASE_URL, AnthropicModelClient
from violet.models.base import Usage
from violet.models.policy import POLICIES
from violet.models.prices import PRICES
from violet.models.retry import Backoff
from violet.models.structured import PICK, SUMMARY_MAX_CHARS

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

MAIN = DEFAULT_MAIN_MODEL
FAST = DEFAULT_FAST_MODEL
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


async def main_reply(client: ModelClient, words: str, *, tier: str = "main", **options):
    tools = t.MAIN_TOOLS if tier == "main" else t.WORK_TOOLS
    return await client.reply(
        tier=tier, system=SYSTEM, messages=user(words), tools=tools, person=PERSON, **options
    )


def pick_of(client: ModelClient, request: str = "r"):
    return pick(client, request=request, candidates=[Candidate("c1", "d", 0.9)], person=PERSON)


# --- what is sent --------------------------------------------------------------------------


def test_default_models_are_current():
    known = ModelParam.__args__[0].__args__
    for name in (DEFAULT_MAIN_MODEL, DEFAULT_FAST_MODEL):
        assert name in known and name not in DEPRECATED_MODELS


async def test_a_main_reply_is_streamed_with_adaptive_thinking_at_medium_effort(
    client, messages_api
):
    words = "A longer answer that arrives in several pieces over the stream. " * 3
    messages_api.push(text(words))
    reply = await main_reply(client, "tell me something")
    assert reply.text == words and reply.stop_reason == "end_turn"
    [sent] = messages_api.requests
    body = sent.body
    assert sent.headers["authorization"] == "Bearer test-key"
    assert body["stream"] is True and body["model"] == MAIN
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": POLICIES["main"].effort}
    assert body["max_tokens"] == POLICIES["main"].max_tokens
    assert body["tool_choice"] == {"type": "auto"}
    assert [tool["name"] for tool in body["tools"]] == [tool.name for tool in t.MAIN_TOOLS]
    assert not {"temperature", "top_p", "top_k"} & set(body)
    assert "metadata" not in body  # a call for nobody's account names no one


async def test_a_call_names_its_person_by_their_pseudonym_alone(client, messages_api):
    messages_api.push(text("hello"))
    with calling_as("5f0c2d9e8b7a6c4d3e2f1a0b9c8d7e6f"):
        await main_reply(client, "hi")
    [sent] = messages_api.requests
    assert sent.body["metadata"] == {"user_id": "5f0c2d9e8b7a6c4d3e2f1a0b9c8d7e6f"}
    assert PERSON not in json.dumps(sent.body["metadata"])


async def test_the_reply_keeps_its_thinking_block_as_it_came(client, messages_api):
    messages_api.push(text("Hello."))
    reply = await main_reply(client, "hi")
    thinking, said = reply.content
    assert thinking["type"] == "thinking" and thinking["signature"]
    assert said == {"type": "text", "text": "Hello."}


async def test_work_is_streamed_at_high_effort_with_room_to_think(client, messages_api):
    messages_api.push(text("Done."))
    reply = await main_reply(client, "hi", tier="work")
    assert reply.text == "Done."
    body = messages_api.bodies[0]
    assert body["stream"] is True
    assert body["output_config"] == {"effort": "high"}
    assert body["max_tokens"] == POLICIES["work"].max_tokens > 21_333  # streaming required
    assert body["tools"][0]["input_schema"] == t.FETCH_PAGE_TOOL.input_schema


async def test_streamed_tool_use_arrives_whole(client, messages_api):
    request = {"request": "look up the weather in Oslo, Norway, for the whole week"}
    messages_api.push(tool_call(t.START_WORK, request, before="On it."))
    reply = await main_reply(client, "look up the weather")
    assert reply.stop_reason == "tool_use" and reply.text == "On it."
    [call] = reply.tool_calls
    assert (call.name, call.input) == (t.START_WORK, request)
    assert reply.content[-1] == {
        "type": "tool_use",
        "id": call.id,
        "name": t.START_WORK,
        "input": request,
    }


async def test_a_tool_round_trip_sends_the_thinking_back_and_is_accepted(client, messages_api):
    first = await main_reply(client, "look up the weather")
    assert first.content[0]["type"] == "thinking" and first.tool_calls
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


async def test_ending_a_tool_loop_keeps_the_tools_and_asks_for_words(client, messages_api):
    reply = await main_reply(client, "look up the weather", tool_choice="none")
    assert reply.tool_calls == [] and reply.text
    body = messages_api.bodies[0]
    assert body["tool_choice"] == {"type": "none"} and len(body["tools"]) == len(t.MAIN_TOOLS)


async def test_an_empty_text_block_of_a_reply_is_not_kept(client, messages_api):
    call = {"type": "tool_use", "id": "toolu_abc", "name": t.START_WORK, "input": {"request": "x"}}
    messages_api.push(api_support.Canned(content=[{"type": "text", "text": " "}, call]))
    reply = await main_reply(client, "look up x")
    assert [block["type"] for block in reply.content] == ["thinking", "tool_use"]


async def test_a_structured_call_asks_for_json_output_on_the_fast_model(client, messages_api):
    candidates = [Candidate("c1", "cooking", 0.3), Candidate("c2", "train trips", 0.8)]
    result = await pick(client, request="trains to Bergen", candidates=candidates, person=PERSON)
    assert result.choice == "c2"
    body = messages_api.bodies[0]
    assert body["model"] == FAST and "stream" not in body
    assert "tools" not in body and "tool_choice" not in body
    assert body["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert body["output_config"]["effort"] == "low"
    wire = body["output_config"]["format"]
    assert wire["type"] == "json_schema"
    schema = wire["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["choice", "confidence", "reason"]
    assert schema["properties"]["choice"]["enum"] == ["c1", "c2", "new"]
    assert "minimum" not in schema["properties"]["confidence"]  # not in the API's subset
    assert "trains to Bergen" in body["messages"][0]["content"]


@pytest.mark.parametrize(
    ("answer", "wrong"),
    [
        ('{"choice": "c9", "confidence": 0.9, "reason": "x"}', "choice"),
        ('{"choice": "new", "confidence": 1.5, "reason": "x"}', "confidence"),
        ('{"choice": "new", "confidence": 0.5}', "reason"),
        ("I'd rather not say.", "not JSON"),
    ],
)
async def test_a_structured_answer_that_does_not_fit_its_schema_is_refused(
    client, messages_api, answer, wrong
):
    messages_api.push(text(answer))
    with pytest.raises(ModelOutputInvalid, match=wrong):
        await pick_of(client)
    assert client.ledger.totals(PERSON).failed_calls == 1
    assert client.ledger.totals(PERSON).input_tokens > 0


async def test_an_enum_value_in_another_case_is_read_as_the_schema_writes_it(client, messages_api):
    messages_api.push(text('{"choice": "NEW", "confidence": 0.9, "reason": "nothing fits"}'))
    assert (await pick_of(client)).choice == "new"


async def test_a_summary_longer_than_its_limit_is_clipped_not_refused(client, messages_api):
    long = "The person likes tea. " * 100
    messages_api.push(text(f'{{"summary": "{long}", "open_promises": [], "kept": []}}'))
    folded = await fold(client, previous_summary="", lines=[], open_promises=[], person=PERSON)
    assert len(folded.summary) <= SUMMARY_MAX_CHARS
    assert folded.summary.endswith("tea.")


async def test_the_folds_schema_holds_nothing_of_the_persons_and_is_one_grammar(
    client, messages_api
):
    promises = ["call the dentist about Sam's tooth", "book the piano lesson"]
    await fold(client, previous_summary="", lines=[], open_promises=promises, person=PERSON)
    await fold(client, previous_summary="", lines=[], open_promises=["x"], person=PERSON)
    first, second = (body["output_config"]["format"]["schema"] for body in messages_api.bodies)
    assert first == second  # the same for every fold: compiled once
    assert not any(promise in json.dumps(first) for promise in promises)


@pytest.mark.expects_fallbacks
async def test_a_promise_the_fold_did_not_get_is_ignored(client, messages_api):
    before = fallbacks.counts()
    answer = {
        "summary": "Tea.",
        "open_promises": ["book the piano lesson", "a promise never made"],
        "kept": ["call the dentist", "call the dentist", "Call The Dentist!"],
    }
    messages_api.push(text(json.dumps(answer)))
    promises = ["call the dentist", "book the piano lesson"]
    folded = await fold(
        client, previous_summary="", lines=[], open_promises=promises, person=PERSON
    )
    assert folded.open_promises == ["book the piano lesson"]
    assert folded.kept == ["call the dentist"]
    assert (fallbacks.counts() - before)["fold_promise_unknown"] == 1


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
        client, person_message="I live in Oslo.", violet_answer="Nice.", person=PERSON
    )
    assert [(i.origin, i.quote) for i in items] == [("you", "I live in Oslo")]


# --- stop reasons --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reached",
    [spend_limit_reached(), spend_limit_reached("contract_spend_limit_reached")],
    ids=["tier cap (429)", "contract (429)"],
)
async def test_a_spending_limit_is_its_own_failure_and_never_asked_again(
    client, messages_api, reached
):
    messages_api.push(reached)
    with pytest.raises(SpendLimitReached):
        await main_reply(client, "hi")
    assert len(messages_api.requests) == 1


async def test_an_organisations_own_spending_limit_is_one_too(client, messages_api):
    messages_api.push(usage_limits_reached())
    with pytest.raises(SpendLimitReached) as reached:
        await pick_of(client)
    assert reached.value.status_code == 400 and len(messages_api.requests) == 1


async def test_each_request_of_a_call_is_priced_at_its_own_model_and_prompt_length(
    client, messages_api
):
    # Two requests of 60,000 prompt tokens each on Haiku 5.5 (a structured answer cut short,
    # asked again with twice the room): each under the 100,000 that Haiku bills at five times.
    long_request = "The ferry timetable for the whole summer, line by line. " * 3_300
    messages_api.push(cut('{"choice": "c1", "confid'))
    await pick_of(client, long_request)
    assert [r.body["model"] for r in messages_api.requests] == [FAST, FAST]
    each = [
        PRICES[FAST].cost_usd(Usage(FAST, r.usage["input_tokens"], r.usage["output_tokens"], 0.0))
        for r in messages_api.requests
    ]
    assert all(40_000 < r.usage["input_tokens"] < 100_000 for r in messages_api.requests)
    assert client.ledger.totals(PERSON).cost_usd == pytest.approx(sum(each))


async def test_a_refusal_is_raised_with_its_category(client, messages_api):
    messages_api.push(refusal("cyber"))
    with pytest.raises(ModelRefused) as raised:
        await main_reply(client, "hi")
    assert raised.value.category == "cyber"
    assert len(messages_api.requests) == 1  # a refusal is not asked again of the same model


@pytest.mark.expects_fallbacks
async def test_a_structured_refusal_by_the_fast_model_is_asked_of_the_main_model(
    client, messages_api
):
    before = fallbacks.counts()
    messages_api.push(refusal("general_harms"))
    assert (await pick_of(client)).choice == "c1"
    assert [body["model"] for body in messages_api.bodies] == [FAST, MAIN]
    assert fallbacks.counts() - before == {"refusal_on_main_model": 1}


@pytest.mark.expects_fallbacks
async def test_a_structured_call_both_models_refuse_raises(client, messages_api):
    messages_api.push(refusal(), refusal())
    with pytest.raises(ModelRefused):
        await pick_of(client)


async def test_a_reply_cut_short_is_asked_again_with_twice_the_room(client, messages_api):
    messages_api.push(cut("The ferry leaves at"))
    reply = await main_reply(client, "when does the ferry leave?")
    assert reply.stop_reason == "end_turn" and not reply.text.startswith("The ferry")
    first, second = messages_api.bodies
    assert second["max_tokens"] == 2 * first["max_tokens"]
    assert second["messages"] == first["messages"]


def client_with(url: str, **limits: float) -> AnthropicModelClient:
    """A client whose every kind of call has these time limits (`CallPolicy` fields)."""
    return AnthropicModelClient(
        api_key="test-key",
        base_url=url,
        main_model=MAIN,
        fast_model=FAST,
        policies={kind: replace(policy, **limits) for kind, policy in POLICIES.items()},
        backoff=Backoff(base_s=0.01, max_s=0.05),
        ledger=UsageLedger(),
    )


async def test_an_answer_asked_again_with_twice_the_room_has_twice_the_time(messages_api):
    client = client_with(messages_api.url, attempt_s=1.0, idle_s=5.0, budget_s=10.0)
    messages_api.push(cut("The ferry leaves at"), text("It leaves at nine.", stall_s=1.5))
    reply = await main_reply(client, "when does the ferry leave?")
    await client.aclose()
    assert reply.text == "It leaves at nine."
    assert len(messages_api.requests) == 2  # not cut off at the first request's time


@pytest.mark.expects_fallbacks
async def test_a_structured_call_with_its_retries_ends_within_its_budget(messages_api):
    # The routing pick runs inside a call between services with a deadline of its own.
    client = client_with(messages_api.url, attempt_s=1.0, idle_s=1.0, budget_s=2.5)
    messages_api.push(stall(3), stall(3), stall(3), stall(3))
    began = time.monotonic()
    with pytest.raises(ModelUnavailable):
        await pick_of(client)
    await client.aclose()
    assert time.monotonic() - began < 2.5 + 0.3


async def test_a_reply_cut_again_is_continued_in_words(client, messages_api):
    messages_api.push(cut("The ferry"), cut("The ferry leaves at"), text(" nine, from pier 3."))
    reply = await main_reply(client, "when does the ferry leave?")
    assert reply.text == "The ferry leaves at nine, from pier 3."
    assert reply.stop_reason == "end_turn" and reply.tool_calls == []
    _, second, third = messages_api.bodies
    assert third["messages"][:-2] == second["messages"]
    assert third["messages"][-1] == {"role": "user", "content": CONTINUE}
    assert third["tool_choice"] == {"type": "none"} and third["tools"] == second["tools"]


async def test_a_reply_still_cut_after_its_continuations_says_so(client, messages_api):
    messages_api.push(cut("One,"), cut("One,"), cut(" two,"), cut(" three,"))
    reply = await main_reply(client, "count")
    assert reply.text == "One, two, three," and reply.stop_reason == "max_tokens"
    assert len(messages_api.requests) == 4


async def test_a_cut_tool_call_is_never_run_but_asked_again_with_more_room(client, messages_api):
    messages_api.push(cut(tool=t.START_WORK, tool_input={"request": "look up the dentist hours"}))
    reply = await main_reply(client, "look up the dentist")
    started = [c.input for c in reply.tool_calls if c.name == t.START_WORK]
    assert started == [{"request": "look up the dentist"}]  # the second answer's, whole
    first, second = messages_api.bodies
    assert second["max_tokens"] == 2 * first["max_tokens"]


async def test_a_reply_that_spent_all_its_room_thinking_is_asked_again(client, messages_api):
    messages_api.push(cut())
    reply = await main_reply(client, "hi")
    assert reply.text and len(messages_api.requests) == 2


async def test_a_reply_cut_twice_before_any_words_is_a_failure(client, messages_api):
    messages_api.push(cut(), cut())
    with pytest.raises(ModelOutputInvalid, match="cut off"):
        await main_reply(client, "hi")


async def test_a_structured_answer_cut_off_is_asked_again_with_more_room(client, messages_api):
    messages_api.push(cut('{"choice": "c1", "confid'))
    assert (await pick_of(client)).choice == "c1"
    first, second = messages_api.bodies
    assert second["max_tokens"] == 2 * first["max_tokens"]


async def test_a_paused_turn_is_sent_back_as_it_is_and_goes_on(client, messages_api):
    messages_api.push(paused("Let me see."), text(" Here it is."))
    reply = await main_reply(client, "hi")
    assert reply.text == "Let me see. Here it is." and reply.stop_reason == "end_turn"
    first, second = messages_api.bodies
    assert second["messages"][:-1] == first["messages"]
    assert second["messages"][-1]["role"] == "assistant"


async def test_a_full_context_is_raised_for_the_caller_to_roll_over(client, messages_api):
    messages_api.push(context_exceeded("Well"))
    with pytest.raises(ModelContextFull):
        await main_reply(client, "hi")


# --- replies without thinking, and long thinking ----------------------------------------------


async def test_every_kind_of_call_takes_replies_without_a_thinking_block(client, messages_api):
    """Adaptive thinking may answer a simple request without thinking at all."""
    messages_api.skip_thinking()
    said = await main_reply(client, "hi")
    assert [block["type"] for block in said.content] == ["text"]
    started = await main_reply(client, "look up the weather")
    assert {block["type"] for block in started.content} == {"tool_use"}
    results = [
        {"type": "tool_result", "tool_use_id": call.id, "content": "ok"}
        for call in started.tool_calls
    ]
    loop = [
        *user("look up the weather"),
        {"role": "assistant", "content": started.content},
        {"role": "user", "content": results},
    ]
    ended = await client.reply(
        tier="main", system=SYSTEM, messages=loop, tools=t.MAIN_TOOLS, person=PERSON
    )
    assert ended.text
    messages_api.push(paused("Let me see."), text(" Here it is."))
    messages_api.push(cut("Part one,"), cut("Part one,"), text(" two."))
    assert (await main_reply(client, "hi", tier="work")).text == "Let me see. Here it is."
    assert (await main_reply(client, "hi")).text == "Part one, two."
    assert (await pick_of(client)).choice == "c1"
    lines = [("person", "I like tea."), ("violet", "Noted.")]
    folded = await fold(client, previous_summary="", lines=lines, open_promises=[], person=PERSON)
    assert "I like tea." in folded.summary
    items = await origin(
        client, person_message="I live in Oslo.", violet_answer="Nice.", person=PERSON
    )
    assert [i.quote for i in items] == ["I live in Oslo"]
    assert not any(
        block["type"] == "thinking"
        for request in messages_api.requests
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
    )


async def test_a_long_think_streams_its_summary_and_is_not_taken_for_a_stall(messages_api):
    """Thinking shown `omitted` sends nothing between the block's start and its signature:
    a think longer than the read timeout would be cut and asked again from the start. The
    streamed calls ask for it `summarized`, whose pieces arrive as it thinks."""
    client = client_with(messages_api.url, attempt_s=20.0, idle_s=1.0, budget_s=30.0)
    messages_api.push(text("Here is the plan.", think_s=3.0, summary_every_s=0.5))
    reply = await main_reply(client, "plan the week", tier="work")
    await client.aclose()
    assert reply.text == "Here is the plan."
    assert len(messages_api.requests) == 1
    assert reply.content[0]["type"] == "thinking" and reply.content[0]["thinking"]


async def test_usage_adds_up_over_a_continued_answer(client, messages_api):
    messages_api.push(cut("Part one,"), cut("Part one,"), text(" part two."))
    reply = await main_reply(client, "hi")
    used = [r.usage["output_tokens"] for r in messages_api.requests]
    assert len(used) == 3 and reply.usage.output_tokens == sum(used)
    assert client.ledger.totals(PERSON).calls == 1


# --- retries -------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", [overloaded, rate_limited, server_error])
async def test_a_busy_or_failing_service_is_tried_again(client, messages_api, failure):
    messages_api.push(failure(), text("made it"))
    reply = await main_reply(client, "hi")
    assert reply.text == "made it"
    assert len(messages_api.requests) == 2


@pytest.mark.parametrize("header", ["retry_after_ms", "retry_after_s"])
async def test_the_wait_the_service_asks_for_is_taken(client, messages_api, header):
    wait = {"retry_after_ms": 400} if header == "retry_after_ms" else {"retry_after_s": 0.4}
    messages_api.push(rate_limited(**wait), text("made it"))
    began = time.monotonic()
    await main_reply(client, "hi")
    assert time.monotonic() - began >= 0.4


async def test_x_should_retry_false_is_obeyed(client, messages_api):
    messages_api.push(server_error(should_retry=False), text("never asked"))
    with pytest.raises(ModelUnavailable) as raised:
        await main_reply(client, "hi")
    assert raised.value.attempts == 1 and raised.value.status_code == 500


async def test_x_should_retry_true_is_obeyed(client, messages_api):
    messages_api.push(invalid_request("try me again", should_retry=True), text("made it"))
    assert (await main_reply(client, "hi")).text == "made it"


@pytest.mark.expects_fallbacks
async def test_a_wait_beyond_the_budget_gives_up_at_once(client, messages_api):
    before = fallbacks.counts()
    messages_api.push(rate_limited(retry_after_s=3600))
    began = time.monotonic()
    with pytest.raises(ModelUnavailable, match="HTTP 429"):
        await main_reply(client, "hi")
    assert time.monotonic() - began < 2
    assert fallbacks.counts() - before == {"retry_budget_spent": 1}


async def test_an_overload_inside_a_stream_is_tried_again(client, messages_api):
    messages_api.push(overloaded(mid_stream=True), text("second time lucky"))
    assert (await main_reply(client, "hi")).text == "second time lucky"
    assert len(messages_api.requests) == 2


@pytest.mark.expects_fallbacks
async def test_server_errors_give_up_after_the_retries(client, messages_api):
    messages_api.push(*(server_error() for _ in range(3)))
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


@pytest.mark.expects_rejections
async def test_a_request_the_api_refuses_is_rejected_with_its_reason(client):
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


@pytest.mark.expects_fallbacks
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


@pytest.mark.expects_fallbacks
async def test_a_stream_that_goes_quiet_times_out(messages_api):
    quick = client_for(messages_api.url, timeout_s=0.3, max_retries=0)
    messages_api.push(text("never finished", stream_pause_s=3))
    with pytest.raises(ModelUnavailable):
        await quick.reply(tier="main", system="", messages=user("hi"), tools=[], person=PERSON)
    await quick.aclose()


@pytest.mark.expects_fallbacks
async def test_an_unreachable_service_is_unreachable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    unreachable = client_for(f"http://127.0.0.1:{port}", max_retries=1)
    with pytest.raises(ModelUnreachable, match="could not be reached") as raised:
        await unreachable.reply(
            tier="main", system="", messages=user("hi"), tools=[], person=PERSON
        )
    assert raised.value.attempts == 2
    await unreachable.aclose()


# --- settings and accounting ---------------------------------------------------------------


def test_an_empty_address_means_the_default_one(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "")
    made = make_model_client(api_key="k", base_url="", main_model="", fast_model="")
    assert str(made._sdk.base_url).rstrip("/") == DEFAULT_BASE_URL  # type: ignore[attr-defined]


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


async def test_a_structured_pick_name_is_accounted_by_its_call(client, messages_api):
    await pick_of(client)
    assert client.ledger.totals(PERSON, f"structured.{PICK}").calls == 1
