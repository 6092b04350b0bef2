"""The local Messages API server speaks the API's wire format: auth, errors, SSE events."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.support import messages_api as api_support
from tests.support.messages_api import (
    MessagesAPI,
    MessagesAPIProcess,
    overloaded,
    tool_call,
)
from violet.models import make_model_client
from violet.models import tools as t

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

BODY = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hello"}]}


def post(api: MessagesAPI, body: dict, headers: dict | None = None) -> httpx.Response:
    return httpx.post(
        f"{api.url}/v1/messages",
        json=body,
        headers={"x-api-key": "k"} if headers is None else headers,
        timeout=5,
    )


def events(response: httpx.Response) -> list[tuple[str, dict]]:
    found = []
    for chunk in response.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


@pytest.mark.parametrize(
    "headers", [{"x-api-key": "k"}, {"Authorization": "Bearer k"}], ids=["x-api-key", "bearer"]
)
def test_both_ways_of_giving_the_key_are_accepted(messages_api, headers):
    answer = post(messages_api, BODY, headers)
    assert answer.status_code == 200
    message = answer.json()
    assert message["type"] == "message" and message["role"] == "assistant"
    assert [b["type"] for b in message["content"]] == ["thinking", "text"]
    assert message["stop_reason"] == "end_turn"
    assert message["usage"]["input_tokens"] > 0


def test_a_request_without_a_key_gets_the_api_error_shape(messages_api):
    answer = post(messages_api, BODY, headers={})
    assert answer.status_code == 401
    assert answer.json()["type"] == "error"
    assert answer.json()["error"]["type"] == "authentication_error"


def test_a_configured_key_must_match():
    with MessagesAPI(api_key="right") as api:
        assert post(api, BODY, {"x-api-key": "wrong"}).status_code == 401
        assert post(api, BODY, {"x-api-key": "right"}).status_code == 200


def test_canned_errors_use_the_api_error_shape(messages_api):
    messages_api.push(overloaded(retry_after_s=1))
    answer = post(messages_api, BODY)
    assert answer.status_code == 529
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert post(messages_api, BODY).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [{"role": "user", "content": "x"}]},
        {**BODY, "messages": []},
        {**BODY, "messages": [{"role": "assistant", "content": "x"}]},
        {**BODY, "tools": [{"name": "bad name!", "input_schema": {"type": "object"}}]},
        {**BODY, "tool_choice": {"type": "tool", "name": "missing"}},
        {
            **BODY,
            "messages": [
                {"role": "user", "content": "x"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}}],
                },
                {"role": "user", "content": "no result"},
            ],
        },
    ],
)
@pytest.mark.expects_rejections
def test_invalid_requests_are_refused_with_400(messages_api, body):
    answer = post(messages_api, body)
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"


def test_every_request_is_recorded_with_body_and_headers(messages_api):
    post(messages_api, BODY, {"x-api-key": "k", "anthropic-version": "2023-06-01"})
    [seen] = messages_api.requests
    assert seen.body == BODY and seen.headers["anthropic-version"] == "2023-06-01"


def test_a_stream_sends_the_apis_events_in_order(messages_api):
    messages_api.push(tool_call("lookup", {"q": "tides at Bergen"}, before="Let me see."))
    answer = post(messages_api, {**BODY, "stream": True})
    assert answer.headers["content-type"].startswith("text/event-stream")
    seen = events(answer)
    names = [name for name, _ in seen]
    assert names[:2] == ["message_start", "ping"] and names[-2:] == [
        "message_delta",
        "message_stop",
    ]
    assert all(name == data["type"] for name, data in seen)
    start = seen[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    blocks = [data["content_block"] for name, data in seen if name == "content_block_start"]
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert blocks[2]["input"] == {} and blocks[2]["name"] == "lookup"
    deltas = [data for name, data in seen if name == "content_block_delta"]
    text = "".join(d["delta"]["text"] for d in deltas if d["delta"]["type"] == "text_delta")
    partial = "".join(
        d["delta"]["partial_json"] for d in deltas if d["delta"]["type"] == "input_json_delta"
    )
    assert text == "Let me see." and json.loads(partial) == {"q": "tides at Bergen"}
    assert len([n for n in names if n == "content_block_stop"]) == 3
    final = seen[-2][1]
    assert final["delta"]["stop_reason"] == "tool_use" and final["usage"]["output_tokens"] > 0


def test_an_error_inside_a_stream_is_an_error_event(messages_api):
    messages_api.push(overloaded(mid_stream=True))
    seen = events(post(messages_api, {**BODY, "stream": True}))
    assert [name for name, _ in seen] == ["message_start", "ping", "error"]
    assert seen[-1][1]["error"]["type"] == "overloaded_error"


def test_rules_mode_answers_a_work_session_like_the_offline_model(messages_api):
    tools = [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in t.WORK_TOOLS
    ]
    body = {**BODY, "messages": [{"role": "user", "content": "calculate 6*7"}], "tools": tools}
    message = post(messages_api, body).json()
    assert message["stop_reason"] == "tool_use"
    [call] = [b for b in message["content"] if b["type"] != "thinking"]
    assert (call["name"], call["input"]) == (t.RUN_PYTHON, {"code": "print(6*7)"})


async def test_the_server_runs_as_its_own_process():
    with MessagesAPIProcess(api_key="proc-key") as process:
        process.push(
            {"text": "from the process"}, {"error": {"status": 529, "type": "overloaded_error"}}
        )
        client = make_model_client(
            api_key="proc-key",
            base_url=process.url,
            main_model="",
            fast_model="",
            backoff_base_s=0.01,
            backoff_max_s=0.02,
        )
        first = await client.reply(
            tier="main",
            system="s",
            messages=[{"role": "user", "content": "hi"}],
            tools=[],
            person="p",
        )
        second = await client.reply(
            tier="main",
            system="s",
            messages=[{"role": "user", "content": "hello"}],
            tools=[],
            person="p",
        )
        await client.aclose()
        assert first.text == "from the process" and second.text
        recorded = process.requests()
        assert len(recorded) == 3 and recorded[0]["body"]["system"] == "s"
        process.reset()
        assert process.requests() == []
