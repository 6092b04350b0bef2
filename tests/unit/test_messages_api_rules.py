"""The local Messages API holds requests to the documented rules of Claude Opus 5.5 and Haiku 5.5
(`docs/model-rules.md`): each rule refuses the request that breaks it with the API's 400, and
accepts the nearest request that keeps it. Its answers and scripted failures have the API's
shape, proven against the installed SDK where the wire format matters."""

from __future__ import annotations

import base64
import json

import anthropic
import httpx
import pytest

from tests.support import messages_api as api_support
from tests.support.messages_api import (
    MessagesAPI,
    MessagesAPIProcess,
    context_exceeded,
    cut,
    error,
    invalid_request,
    overloaded,
    paused,
    rate_limited,
    refusal,
    server_error,
    text,
    tool_call,
)
from violet.models import structured as s
from violet.models.offline_structured import structured_answer

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

pytestmark = pytest.mark.expects_rejections

OPUS = "claude-opus-5-5"
HAIKU = "claude-haiku-5-5"
LOOKUP = {
    "name": "lookup",
    "description": "Looks a thing up.",
    "input_schema": {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    },
}
BINDING_BETA = {"anthropic-beta": "thinking-binding-controls-2026-08-01"}


def request(model: str = OPUS, **extra: object) -> dict:
    return {
        "model": model,
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "hello"}],
        **extra,
    }


def post(api: MessagesAPI, body: dict, headers: dict | None = None) -> httpx.Response:
    return httpx.post(
        f"{api.url}/v1/messages",
        json=body,
        headers={"x-api-key": "k", **(headers or {})},
        timeout=5,
    )


def refused(answer: httpx.Response) -> str:
    """The message of a 400 the rules gave."""
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["type"] == "invalid_request_error"
    return answer.json()["error"]["message"]


def accepted(answer: httpx.Response) -> dict:
    assert answer.status_code == 200, answer.text
    return answer.json()


def events(answer: httpx.Response) -> list[tuple[str, dict]]:
    found = []
    for chunk in answer.text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def sdk(api: MessagesAPI) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="k", base_url=api.url, max_retries=0)


def answered(body: dict, message: dict, then: object = "go on") -> dict:
    """`body` grown by the answer it got and the person's next words."""
    grown = [*body["messages"], {"role": "assistant", "content": message["content"]}]
    return {**body, "messages": [*grown, {"role": "user", "content": then}]}


# --- 1. forced tool use ------------------------------------------------------------------------


@pytest.mark.parametrize("choice", [{"type": "any"}, {"type": "tool", "name": "lookup"}])
def test_opus_rules_refuse_forced_tool_use(messages_api, choice):
    body = request(tools=[LOOKUP], tool_choice=choice)
    assert refused(post(messages_api, body)) == (
        'tool_choice: type "tool" and "any" are not supported for this model.'
    )


def test_a_structured_output_with_a_forced_tool_is_still_forced_tool_use(messages_api):
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    body = request(
        tools=[LOOKUP],
        tool_choice={"type": "any"},
        output_config={"format": {"type": "json_schema", "schema": schema}},
    )
    assert refused(post(messages_api, body)).startswith("tool_choice: type")


@pytest.mark.parametrize("choice", [{"type": "auto"}, {"type": "none"}])
def test_opus_rules_accept_auto_and_none(messages_api, choice):
    accepted(post(messages_api, request(tools=[LOOKUP], tool_choice=choice)))


def test_haiku_rules_accept_a_forced_tool_and_answer_without_thinking(messages_api):
    data = {"request": "book it", "candidates": [{"id": "t1", "description": "x", "score": 0.9}]}
    prompt = s.with_input(s.PICK_INSTRUCTIONS, data)
    tool = {"name": s.PICK, "input_schema": anthropic.transform_schema(s.pick_schema(["t1"]))}
    body = request(
        HAIKU,
        messages=[{"role": "user", "content": prompt}],
        tools=[{**tool, "strict": True}],
        tool_choice={"type": "tool", "name": s.PICK},
    )
    [call] = accepted(post(messages_api, body))["content"]
    assert call["type"] == "tool_use" and call["input"] == structured_answer(s.PICK, prompt)


# --- 2. thinking switches and display ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["disabled", "enabled"])
def test_opus_rules_refuse_turning_thinking_off_or_manual(messages_api, kind):
    thinking = {"type": kind, "budget_tokens": 2048} if kind == "enabled" else {"type": kind}
    assert refused(post(messages_api, request(thinking=thinking))) == (
        f'"thinking.type.{kind}" is not supported for this model. Use "thinking.type.adaptive" '
        'and "output_config.effort" to control thinking behavior.'
    )


@pytest.mark.parametrize(
    ("thinking", "effort", "allowed"),
    [
        ({"type": "enabled", "budget_tokens": 2048}, "low", False),
        ({"type": "disabled"}, "xhigh", False),
        ({"type": "disabled"}, "max", False),
        ({"type": "disabled", "display": "omitted"}, "low", False),
        ({"type": "disabled"}, "low", True),
        ({"type": "disabled"}, "high", True),
        ({"type": "adaptive"}, "max", True),
    ],
)
def test_haiku_rules_turn_thinking_off_only_at_low_to_high_effort(
    messages_api, thinking, effort, allowed
):
    body = request(HAIKU, thinking=thinking, output_config={"effort": effort})
    answer = post(messages_api, body)
    if not allowed:
        refused(answer)
        return
    kinds = [b["type"] for b in accepted(answer)["content"]]
    assert ("thinking" in kinds) is (thinking["type"] == "adaptive")


@pytest.mark.parametrize(
    ("display", "headers", "allowed"),
    [
        ("omitted", {}, True),
        ("summarized", {}, True),
        ("updates", {}, False),
        ("updates", {"anthropic-beta": "thinking-display-updates-2026-08-18"}, True),
        ("full", {}, False),
    ],
)
def test_thinking_display_takes_the_documented_values(messages_api, display, headers, allowed):
    answer = post(messages_api, request(thinking={"type": "adaptive", "display": display}), headers)
    if not allowed:
        assert refused(answer) == "thinking.display: Input should be 'summarized' or 'omitted'"
        return
    [thinking, _] = accepted(answer)["content"]
    assert bool(thinking["thinking"]) is (display == "summarized") and thinking["signature"]


def test_block_binding_needs_its_beta_header(messages_api):
    thinking = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "error"}}
    answer = post(messages_api, request(thinking=thinking))
    assert refused(answer).endswith("block_binding: Extra inputs are not permitted")
    accepted(post(messages_api, request(thinking=thinking), BINDING_BETA))


# --- 3. effort ---------------------------------------------------------------------------------


@pytest.mark.parametrize("effort", ["low", "medium", "high", "xhigh", "max"])
def test_every_documented_effort_is_accepted(messages_api, effort):
    accepted(post(messages_api, request(output_config={"effort": effort})))


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"effort": "adaptive"}, "output_config.effort: Input should be"),
        ({"effort": "low", "budget": 3}, "output_config.budget: Extra inputs are not permitted"),
    ],
)
def test_output_config_holds_a_known_effort_and_nothing_else(messages_api, config, message):
    assert refused(post(messages_api, request(output_config=config))).startswith(message)


# --- 4. sampling parameters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "sampling", "allowed"),
    [
        (OPUS, {"temperature": 1}, False),
        (OPUS, {"top_p": 0.99}, False),
        (OPUS, {"top_k": 5}, False),
        (HAIKU, {"temperature": 0.5}, False),
        (HAIKU, {"top_p": 1}, False),
        (HAIKU, {"top_k": 5}, False),
        (HAIKU, {"temperature": 1, "top_p": 0.99}, False),
        (HAIKU, {"temperature": 1}, True),
        (HAIKU, {"top_p": 0.99}, True),
        (OPUS, {}, True),
    ],
)
def test_sampling_parameters_follow_each_model(messages_api, model, sampling, allowed):
    answer = post(messages_api, request(model, **sampling))
    if allowed:
        accepted(answer)
    else:
        refused(answer)


# --- 5. prefill --------------------------------------------------------------------------------


def test_a_conversation_ending_with_the_assistant_is_refused(messages_api):
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Well,"}]
    for model in (OPUS, HAIKU):
        assert refused(post(messages_api, request(model, messages=messages))) == (
            "This model does not support assistant message prefill. The conversation must end "
            "with a user message."
        )
    accepted(post(messages_api, request(messages=[*messages, {"role": "user", "content": "ok"}])))


# --- 6. empty text blocks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"system": [{"type": "text", "text": "  "}]}, "system"),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}, "messages.0"),
        ({"messages": [{"role": "user", "content": " \n"}]}, "messages.0"),
    ],
)
def test_empty_text_blocks_are_refused(messages_api, extra, where):
    answer = post(messages_api, request(**extra))
    assert refused(answer) == f"{where}: text content blocks must be non-empty"
    accepted(post(messages_api, request(system=[{"type": "text", "text": "Be brief."}])))


# --- 7. tool blocks need tools -----------------------------------------------------------------


def test_tool_blocks_need_tools_defined(messages_api):
    messages = [
        {"role": "user", "content": "look up the tides"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "high"}],
        },
    ]
    assert refused(post(messages_api, request(messages=messages))) == (
        "Requests which include `tool_use` or `tool_result` blocks must define tools."
    )
    accepted(post(messages_api, request(messages=messages, tools=[LOOKUP])))


# --- 8. cache breakpoints ----------------------------------------------------------------------


def test_at_most_four_breakpoints_with_longer_lifetimes_first(messages_api):
    def system(*ttls: str) -> list[dict]:
        mark = {"type": "ephemeral"}
        return [
            {"type": "text", "text": f"part {n}", "cache_control": {**mark, "ttl": ttl}}
            for n, ttl in enumerate(ttls)
        ]

    answer = post(messages_api, request(system=system(*["5m"] * 5)))
    assert refused(answer) == "A maximum of 4 blocks with cache_control may be provided. Found 5."
    refused(post(messages_api, request(system=system("5m", "1h"))))
    accepted(post(messages_api, request(system=system("1h", "1h", "5m", "5m"))))


# --- 9. thinking blocks are bound to their prefix ----------------------------------------------


def three_answers(api: MessagesAPI) -> dict:
    """A conversation with three answers, each starting with a thinking block (messages 1, 3
    and 5), and a fourth question."""
    body = request(system="Be brief.", tools=[LOOKUP])
    for number in range(3):
        api.push(text(f"Answer number {number}."))
        body = answered(body, accepted(post(api, body)), f"Question number {number + 1}?")
    return body


def without_thinking(body: dict, *indexes: int) -> dict:
    messages = [
        {**m, "content": [b for b in m["content"] if b["type"] != "thinking"]}
        if n in indexes
        else m
        for n, m in enumerate(body["messages"])
    ]
    return {**body, "messages": messages}


BOUND = (
    "Invalid `signature` in `thinking` block. The block is bound to a different conversation. "
    'Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)


def test_thinking_blocks_sent_back_after_the_same_prefix_are_accepted(messages_api):
    body = three_answers(messages_api)
    accepted(post(messages_api, body))
    # cache_control marks and splitting a turn into two messages change no prefix
    body["messages"][2] = {
        "role": "user",
        "content": [
            {"type": "text", "text": "Question number 1?", "cache_control": {"type": "ephemeral"}}
        ],
    }
    thinking, words = body["messages"][3]["content"]
    body["messages"][3:4] = [
        {"role": "assistant", "content": [thinking]},
        {"role": "assistant", "content": [words]},
    ]
    accepted(post(messages_api, body))


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda b: {**b, "system": "Be long."}, 1),
        (lambda b: {**b, "tools": [{**LOOKUP, "description": "Finds things."}]}, 1),
        (lambda b: {**b, "tools": [LOOKUP, {**LOOKUP, "name": "search"}]}, 1),
        (
            lambda b: {
                **b,
                "messages": [
                    *b["messages"][:2],
                    {"role": "user", "content": "Edited?"},
                    *b["messages"][3:],
                ],
            },
            3,
        ),
        (lambda b: without_thinking(b, 3), 5),
    ],
    ids=["system", "tool edited", "tool added", "earlier message", "gap"],
)
def test_a_changed_prefix_binds_the_block_to_a_different_conversation(messages_api, edit, where):
    answer = post(messages_api, edit(three_answers(messages_api)))
    message = refused(answer)
    assert message.startswith(f"messages.{where}.content.0: {BOUND}")
    assert "thinking-binding-controls-2026-08-01" in message


@pytest.mark.parametrize("dropped", [(1, 3, 5), (1,), (1, 3), (5,), (3, 5)])
def test_earlier_thinking_may_be_dropped_oldest_first_or_from_the_end(messages_api, dropped):
    accepted(post(messages_api, without_thinking(three_answers(messages_api), *dropped)))


@pytest.mark.parametrize(
    "signature",
    ["", "bm90IG91cnM=", base64.b64encode(bytes(32)).decode(), None],
    ids=["empty", "foreign", "forged", "missing"],
)
def test_a_signature_not_made_here_is_invalid(messages_api, signature):
    body = three_answers(messages_api)
    body["messages"][5]["content"][0]["signature"] = signature
    assert refused(post(messages_api, body)) == (
        "messages.5.content.0: Invalid `signature` in `thinking` block"
    )


def test_text_written_into_omitted_thinking_is_ignored(messages_api):
    body = three_answers(messages_api)
    body["messages"][3]["content"][0]["thinking"] = "I thought about tides."
    accepted(post(messages_api, body))


def test_summarized_thinking_must_come_back_as_it_was(messages_api):
    body = request(thinking={"type": "adaptive", "display": "summarized"})
    body = answered(body, accepted(post(messages_api, body)))
    accepted(post(messages_api, body))
    body["messages"][1]["content"][0]["thinking"] += " And more."
    assert refused(post(messages_api, body)).endswith("Invalid `signature` in `thinking` block")


def test_a_mismatch_can_drop_the_block_instead(messages_api):
    body = three_answers(messages_api)
    binding = {"prefix_mismatch_behavior": "drop_block"}
    body = {
        **body,
        "system": "Be long.",
        "thinking": {"type": "adaptive", "block_binding": binding},
    }
    message = accepted(post(messages_api, body, BINDING_BETA))
    assert [t["reason"] for t in message["input_transformations"]] == [
        "prefix_binding_mismatch"
    ] * 3


def test_another_models_thinking_is_dropped_silently(messages_api):
    body = {**three_answers(messages_api), "model": HAIKU}
    assert "input_transformations" not in accepted(post(messages_api, body))
    message = accepted(post(messages_api, body, BINDING_BETA))
    assert [t["reason"] for t in message["input_transformations"]] == ["model_binding_mismatch"] * 3
    # Haiku's own block, made without the dropped ones, holds with them still there
    accepted(post(messages_api, answered(body, message)))


def test_redacted_thinking_needs_its_data(messages_api):
    body = three_answers(messages_api)
    body["messages"][5]["content"].append({"type": "redacted_thinking", "data": "opaque"})
    accepted(post(messages_api, body))
    body["messages"][5]["content"][2] = {"type": "redacted_thinking"}
    assert refused(post(messages_api, body)) == "messages.5.content.2.data: Field required"
    # a block put in before a thinking block changes that block's prefix
    body["messages"][1]["content"].insert(0, {"type": "redacted_thinking", "data": "opaque"})
    assert refused(post(messages_api, body)).startswith(f"messages.1.content.1: {BOUND}")


# --- 10. a tool loop keeps the thinking of its turn --------------------------------------------


def tool_loop(api: MessagesAPI) -> tuple[dict, list[dict]]:
    """A request that got a tool call, and the content of that answer."""
    body = request(tools=[LOOKUP])
    api.push(tool_call("lookup", {"q": "tides"}, before="Let me look."))
    content = accepted(post(api, body))["content"]
    assert [b["type"] for b in content] == ["thinking", "text", "tool_use"]
    return body, content


def with_result(body: dict, content: list[dict]) -> dict:
    call = next(b for b in content if b["type"] == "tool_use")
    result = [{"type": "tool_result", "tool_use_id": call["id"], "content": "high at six"}]
    return answered(body, {"content": content}, result)


MODIFIED = (
    "`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)


def test_a_tool_loop_that_sends_its_turn_back_as_received_is_accepted(messages_api):
    body, content = tool_loop(messages_api)
    content[0]["thinking"] = "written into the omitted block"  # ignored
    content[1]["cache_control"] = {"type": "ephemeral"}
    accepted(post(messages_api, with_result(body, content)))


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda c: c[1:], "messages.1.content.0"),
        (lambda c: [c[1], c[0], c[2]], "messages.1.content.0"),
        (lambda c: [c[0], c[2]], "messages.1.content.1"),
    ],
    ids=["thinking dropped", "reordered", "text dropped"],
)
def test_a_tool_loop_that_modifies_its_turn_is_refused(messages_api, change, where):
    body, content = tool_loop(messages_api)
    answer = post(messages_api, with_result(body, change(content)))
    assert refused(answer) == f"{where}: {MODIFIED}"


# --- 11. structured outputs --------------------------------------------------------------------


def formatted(schema: dict, **extra: object) -> dict:
    return request(output_config={"format": {"type": "json_schema", "schema": schema}}, **extra)


def strict(**properties: dict) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "object", "properties": {}}, "'additionalProperties' must be explicitly set"),
        (strict(a={"type": "string", "maxLength": 5}), "'maxLength' keyword is not supported"),
        (strict(a={"type": "string", "minLength": 1}), "'minLength' keyword is not supported"),
        (strict(a={"type": "number", "minimum": 0}), "'minimum' keyword is not supported"),
        (strict(a={"type": "number", "exclusiveMaximum": 1}), "'exclusiveMaximum' keyword"),
        (strict(a={"type": "integer", "multipleOf": 2}), "'multipleOf' keyword"),
        (strict(a={"type": "array", "maxItems": 0}), "'maxItems' keyword is not supported"),
        (strict(a={"type": "array", "uniqueItems": True}), "'uniqueItems' keyword"),
        (strict(a={"type": "array", "minItems": 2}), "'minItems' values other than 0 or 1"),
        (
            strict(a={"type": "array", "items": {"type": "object", "properties": {}}}),
            "'additionalProperties' must be explicitly set",
        ),
    ],
)
def test_a_structured_output_schema_takes_only_the_supported_subset(messages_api, schema, message):
    answer = refused(post(messages_api, formatted(schema)))
    assert answer.startswith("output_config.format.schema") and message in answer


def test_the_refusal_names_where_the_keyword_is(messages_api):
    schema = strict(a=strict(b={"type": "string", "maxLength": 5}))
    assert refused(post(messages_api, formatted(schema))).startswith(
        "output_config.format.schema.properties.a.properties.b: the 'maxLength' keyword"
    )


def test_at_most_24_optional_properties(messages_api):
    def optional(count: int) -> dict:
        properties = {f"p{n}": {"type": "string"} for n in range(count)}
        return {**strict(), "properties": properties}

    messages_api.push(text('{"p0": "x"}'), text('{"p0": "x"}'))
    accepted(post(messages_api, formatted(optional(24))))
    assert "25 optional properties" in refused(post(messages_api, formatted(optional(25))))


def test_strict_tools_take_the_same_subset_and_at_most_20(messages_api):
    def tool(n: int, schema: dict) -> dict:
        return {"name": f"t{n}", "input_schema": schema, "strict": True}

    bad = [tool(0, strict(a={"type": "string", "maxLength": 3}))]
    assert refused(post(messages_api, request(tools=bad))).startswith("tools.0.input_schema")
    assert "at most 20" in refused(
        post(messages_api, request(tools=[tool(n, strict()) for n in range(21)]))
    )
    accepted(post(messages_api, request(tools=[tool(n, strict()) for n in range(20)])))


def test_the_deprecated_output_format_needs_its_beta(messages_api):
    given = {"type": "json_schema", "schema": s.origin_schema()}
    body = request(output_format=given)
    assert refused(post(messages_api, body)).startswith("output_format: Extra inputs")
    messages_api.push(text('{"items": []}'))
    beta = {"anthropic-beta": "structured-outputs-2025-11-13"}
    accepted(post(messages_api, body, beta))


def test_the_sdk_schema_transform_gives_schemas_the_rules_accept(messages_api):
    schemas = [s.fold_schema(), s.pick_schema(["a"]), s.origin_schema()]
    for schema in schemas:
        messages_api.push(text("{}"))
        accepted(post(messages_api, formatted(anthropic.transform_schema(schema))))


# --- 12. and 13. top-level keys and max_tokens -------------------------------------------------


def test_unknown_top_level_keys_are_refused(messages_api):
    assert refused(post(messages_api, request(top_n=3))) == "top_n: Extra inputs are not permitted"
    known = {
        "metadata": {"user_id": "u"},
        "stop_sequences": ["END"],
        "service_tier": "auto",
        "stream": False,
        "cache_control": {"type": "ephemeral"},
    }
    accepted(post(messages_api, request(**known)))


@pytest.mark.parametrize(("wanted", "allowed"), [(128_000, True), (128_001, False), (-1, False)])
def test_max_tokens_is_between_0_and_128000(messages_api, wanted, allowed):
    answer = post(messages_api, {**request(), "max_tokens": wanted})
    if allowed:
        accepted(answer)
    else:
        assert refused(answer).startswith("max_tokens:")


def test_max_tokens_0_prewarms_the_cache_without_an_answer(messages_api):
    messages_api.cache.min_tokens = 10
    system = [{"type": "text", "text": "Be kind. " * 40, "cache_control": {"type": "ephemeral"}}]
    messages_api.push(text("Kept for the real question."))
    warmed = accepted(post(messages_api, request(system=system, max_tokens=0)))
    assert warmed["content"] == []
    assert warmed["stop_reason"] == "max_tokens"
    assert warmed["usage"]["output_tokens"] == 0
    assert warmed["usage"]["cache_creation_input_tokens"] > 0
    asked = accepted(post(messages_api, request(system=system)))
    assert (
        asked["usage"]["cache_read_input_tokens"] == warmed["usage"]["cache_creation_input_tokens"]
    )
    assert asked["content"][-1]["text"] == "Kept for the real question."


@pytest.mark.parametrize(
    "extra",
    [
        {"stream": True},
        {
            "output_config": {
                "format": {
                    "type": "json_schema",
                    "schema": {"type": "object", "properties": {}, "additionalProperties": False},
                }
            }
        },
    ],
    ids=["streamed", "structured"],
)
@pytest.mark.expects_rejections
def test_max_tokens_0_is_refused_streamed_or_structured(messages_api, extra):
    assert refused(post(messages_api, request(max_tokens=0, **extra))).startswith("max_tokens: 0")


# --- replies start with thinking -------------------------------------------------------------


def test_an_answer_starts_with_an_omitted_thinking_block(messages_api):
    messages_api.push(text("Hello there."))
    for body in (request(), request()):
        message = accepted(post(messages_api, body))
        thinking = message["content"][0]
        assert thinking["type"] == "thinking" and thinking["thinking"] == ""
        assert len(base64.b64decode(thinking["signature"])) == 32
        assert message["usage"]["output_tokens_details"] == {"thinking_tokens": 16}
        assert message["usage"]["output_tokens"] > 16


def test_a_thinking_block_streams_as_the_api_streams_it(messages_api):
    messages_api.push(text("Hello there."))
    seen = events(post(messages_api, request(stream=True)))
    thinking = [data for name, data in seen if data.get("index") == 0]
    assert thinking[0]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    assert [d["delta"]["type"] for d in thinking[1:3]] == ["thinking_delta", "signature_delta"]
    assert thinking[1]["delta"]["thinking"] == "" and thinking[2]["delta"]["signature"]
    assert thinking[3]["type"] == "content_block_stop"


def test_an_answer_may_come_without_a_thinking_block(messages_api):
    messages_api.push(text("Hi.", thinks=False))
    message = accepted(post(messages_api, request()))
    assert [block["type"] for block in message["content"]] == ["text"]
    assert message["usage"]["output_tokens_details"] == {"thinking_tokens": 0}
    messages_api.skip_thinking()
    assert [b["type"] for b in accepted(post(messages_api, request()))["content"]] == ["text"]
    messages_api.skip_thinking(False)
    assert accepted(post(messages_api, request()))["content"][0]["type"] == "thinking"


def stream_of(display: str) -> list:
    """The events and pauses of a 3-second think streamed under `display`."""
    shown = api_support.THINKING_SUMMARY if display == "summarized" else ""
    block = {"type": "thinking", "thinking": shown, "signature": "c2ln"}
    message = {
        "content": [block],
        "stop_reason": "end_turn",
        "stop_details": None,
        "usage": {"output_tokens": 16, "output_tokens_details": {"thinking_tokens": 16}},
    }
    thinking = api_support.Thinking(seconds=3.0, summary_every_s=1.0)
    return list(api_support.sse_events(message, thinking=thinking))


def test_a_long_omitted_think_is_silent_until_its_signature():
    sent = stream_of("omitted")
    [pause] = [n for n, event in enumerate(sent) if isinstance(event, float)]
    assert sent[pause] == 3.0
    assert '"thinking_delta"' in sent[pause - 1] and '"signature_delta"' in sent[pause + 1]


def test_a_long_summarized_think_streams_a_piece_of_its_summary_every_summary_interval():
    sent = stream_of("summarized")
    pauses = [event for event in sent if isinstance(event, float)]
    assert pauses == [1.0, 1.0, 1.0]
    pieces = [json.loads(e.split("data: ")[1]) for e in sent if '"thinking_delta"' in str(e)]
    assert "".join(p["delta"]["thinking"] for p in pieces) == api_support.THINKING_SUMMARY


async def test_the_sdk_rebuilds_a_streamed_thinking_block_that_goes_back_as_it_came(messages_api):
    client = sdk(messages_api)
    messages: list = [{"role": "user", "content": "hello"}]
    async with client.messages.stream(model=OPUS, max_tokens=256, messages=messages) as stream:
        final = await stream.get_final_message()
    thinking = final.content[0]
    assert thinking.type == "thinking" and thinking.thinking == "" and thinking.signature
    assert final.usage.output_tokens_details.thinking_tokens == 16
    messages += [
        {"role": "assistant", "content": [b.to_dict() for b in final.content]},
        {"role": "user", "content": "and then?"},
    ]
    again = await client.messages.create(model=OPUS, max_tokens=256, messages=messages)
    await client.close()
    assert again.content[0].type == "thinking"
    assert all(r.rejected is None for r in messages_api.requests)


# --- failures a busy service gives -------------------------------------------------------------


def test_a_rate_limit_says_when_to_retry_in_seconds_and_milliseconds(messages_api):
    messages_api.push(rate_limited(retry_after_s=2, retry_after_ms=1500))
    answer = post(messages_api, request())
    assert answer.status_code == 429 and answer.json()["error"]["type"] == "rate_limit_error"
    assert answer.headers["retry-after"] == "2" and answer.headers["retry-after-ms"] == "1500"


@pytest.mark.parametrize(
    ("canned", "status", "kind"),
    [(overloaded(), 529, "overloaded_error"), (server_error(), 500, "api_error")],
)
def test_overloaded_and_internal_errors(messages_api, canned, status, kind):
    messages_api.push(canned)
    answer = post(messages_api, request())
    assert answer.status_code == status and answer.json()["error"]["type"] == kind
    assert "x-should-retry" not in answer.headers


@pytest.mark.parametrize("should_retry", [True, False])
def test_any_error_can_say_whether_to_retry(messages_api, should_retry):
    messages_api.push(error(409, "conflict_error", "Conflict", should_retry=should_retry))
    answer = post(messages_api, request())
    assert answer.status_code == 409
    assert answer.headers["x-should-retry"] == str(should_retry).lower()


async def test_an_error_inside_a_started_stream_reaches_the_sdk(messages_api):
    messages_api.push(overloaded(mid_stream=True))
    client = sdk(messages_api)
    with pytest.raises(anthropic.APIStatusError) as raised:
        async with client.messages.stream(
            model=OPUS, max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            await stream.get_final_message()
    await client.close()
    assert raised.value.status_code == 200 and raised.value.type == "overloaded_error"


def test_an_answer_cut_by_max_tokens_mid_text(messages_api):
    messages_api.push(cut("The tides at Bergen are"))
    message = accepted(post(messages_api, request()))
    assert message["stop_reason"] == "max_tokens" and message["stop_details"] is None
    assert message["content"][-1] == {"type": "text", "text": "The tides at Bergen are"}


async def test_a_tool_call_cut_by_max_tokens_streams_partial_json(messages_api):
    whole = {"q": "tides at Bergen", "days": 3}
    messages_api.push(cut(tool="lookup", tool_input=whole))
    seen = events(post(messages_api, request(tools=[LOOKUP], stream=True)))
    sent = "".join(
        data["delta"]["partial_json"]
        for name, data in seen
        if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta"
    )
    assert json.dumps(whole).startswith(sent) and sent != json.dumps(whole)
    assert seen[-2][1]["delta"]["stop_reason"] == "max_tokens"
    messages_api.push(cut(tool="lookup", tool_input=whole))
    client = sdk(messages_api)
    async with client.messages.stream(
        model=OPUS, max_tokens=64, messages=[{"role": "user", "content": "hi"}], tools=[LOOKUP]
    ) as stream:
        final = await stream.get_final_message()
    await client.close()
    assert final.stop_reason == "max_tokens" and final.content[-1].type == "tool_use"


def test_a_tool_call_cut_by_max_tokens_holds_a_partial_input(messages_api):
    messages_api.push(cut(tool="lookup", tool_input={"days": 3, "q": "tides at Bergen"}))
    message = accepted(post(messages_api, request(tools=[LOOKUP])))
    assert message["stop_reason"] == "max_tokens"
    assert message["content"][-1]["input"] == {"days": 3}


def test_an_answer_that_spent_its_budget_thinking(messages_api):
    messages_api.push(cut())
    message = accepted(post(messages_api, request()))
    assert [b["type"] for b in message["content"]] == ["thinking"]
    assert message["stop_reason"] == "max_tokens"


def test_a_refusal_is_a_200_with_no_content_and_stop_details(messages_api):
    messages_api.push(refusal("bio"))
    message = accepted(post(messages_api, request()))
    assert message["content"] == [] and message["usage"]["output_tokens"] == 0
    assert message["stop_reason"] == "refusal"
    details = message["stop_details"]
    assert details["type"] == "refusal" and details["category"] == "bio" and details["explanation"]


async def test_a_streamed_refusal_reaches_the_sdk_with_its_stop_details(messages_api):
    messages_api.push(refusal())
    names = [name for name, _ in events(post(messages_api, request(stream=True)))]
    assert names == ["message_start", "message_delta", "message_stop"]
    messages_api.push(refusal("cyber", "Declined."))
    client = sdk(messages_api)
    async with client.messages.stream(
        model=OPUS, max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        final = await stream.get_final_message()
    await client.close()
    assert final.stop_reason == "refusal" and final.content == []
    assert final.stop_details is not None and final.stop_details.category == "cyber"
    assert final.stop_details.explanation == "Declined." and final.usage.output_tokens == 0


def test_a_paused_turn_is_continued_by_sending_it_back(messages_api):
    body = request()
    messages_api.push(paused("Still searching"))
    message = accepted(post(messages_api, body))
    assert message["stop_reason"] == "pause_turn"
    paused_turn = {"role": "assistant", "content": message["content"]}
    continued = {**body, "messages": [*body["messages"], paused_turn]}
    messages_api.push(text("Found it."))
    assert accepted(post(messages_api, continued))["stop_reason"] == "end_turn"
    paused_turn["content"] = [*message["content"][:-1], {"type": "text", "text": "Still"}]
    assert refused(post(messages_api, continued)).startswith("This model does not support")


def test_an_answer_cut_by_the_context_window(messages_api):
    messages_api.push(context_exceeded("The first half"))
    message = accepted(post(messages_api, request()))
    assert message["stop_reason"] == "model_context_window_exceeded"
    assert message["content"][-1]["text"] == "The first half" and message["stop_details"] is None


def test_failure_specs_over_http(messages_api):
    specs = [
        {"error": {"status": 429, "type": "rate_limit_error"}, "retry_after_ms": 250},
        {"cut": {"text": "Half"}},
        {"refusal": "general_harms"},
        {"text": "Wait", "stop_reason": "pause_turn"},
        {"error": {"status": 500, "type": "api_error"}, "should_retry": False},
    ]
    httpx.post(f"{messages_api.url}/_control/queue", json=specs, timeout=5).raise_for_status()
    answers = [post(messages_api, request()) for _ in specs]
    assert [a.status_code for a in answers] == [429, 200, 200, 200, 500]
    assert answers[0].headers["retry-after-ms"] == "250"
    assert [a.json()["stop_reason"] for a in answers[1:4]] == [
        "max_tokens",
        "refusal",
        "pause_turn",
    ]
    assert answers[4].headers["x-should-retry"] == "false"


def test_every_nth_valid_request_fails(messages_api):
    spec = {"every": 3, "spec": {"error": {"status": 529, "type": "overloaded_error"}}}
    httpx.post(f"{messages_api.url}/_control/every", json=spec, timeout=5).raise_for_status()
    asks = [request(metadata={"user_id": f"p{i}"}) for i in range(9)]
    statuses = [post(messages_api, ask).status_code for ask in asks[:3]]
    refused(post(messages_api, request(top_n=1)))  # refused requests are not counted
    statuses += [post(messages_api, ask).status_code for ask in asks[3:6]]
    assert statuses == [200, 200, 529, 200, 200, 529]
    # a failed request sent again passes, and the next new one fails in its place
    again = (asks[6], asks[7], asks[2], asks[8])
    assert [post(messages_api, ask).status_code for ask in again] == [200, 200, 200, 529]
    messages_api.fail_every(0)
    assert {post(messages_api, request()).status_code for _ in range(3)} == {200}


# --- structured answers in rules mode ----------------------------------------------------------

STRUCTURED_INPUTS = {
    s.FOLD: (
        s.FOLD_INSTRUCTIONS,
        {
            "previous_summary": "",
            "open_promises": ["call the dentist"],
            "lines": [
                {"speaker": "person", "text": "Please call the dentist for me."},
                {"speaker": "violet", "text": "Done, I called the dentist."},
            ],
        },
        s.fold_schema(),
    ),
    s.PICK: (
        s.PICK_INSTRUCTIONS,
        {
            "request": "Yes, book it.",
            "candidates": [{"id": "t_1", "description": "a table for two", "score": 0.8}],
        },
        s.pick_schema(["t_1"]),
    ),
    s.ORIGIN: (
        s.ORIGIN_INSTRUCTIONS,
        {"person_message": "My favourite colour is green.", "violet_answer": "Noted!"},
        s.origin_schema(),
    ),
}


@pytest.mark.parametrize("name", [s.FOLD, s.PICK, s.ORIGIN])
def test_rules_mode_answers_a_structured_output_with_the_offline_rules(messages_api, name):
    instructions, data, schema = STRUCTURED_INPUTS[name]
    prompt = s.with_input(instructions, data)
    body = formatted(
        anthropic.transform_schema(schema), messages=[{"role": "user", "content": prompt}]
    )
    thinking, answer = accepted(post(messages_api, body))["content"]
    assert thinking["type"] == "thinking" and answer["type"] == "text"
    assert json.loads(answer["text"]) == structured_answer(name, prompt)


def test_rules_mode_has_no_answer_for_an_unknown_format(messages_api):
    answer = refused(post(messages_api, formatted(strict(colour={"type": "string"}))))
    assert answer.startswith("the local server has no answer")


def test_a_failing_structured_call_fails_until_healed(messages_api):
    instructions, data, schema = STRUCTURED_INPUTS[s.PICK]
    body = formatted(
        anthropic.transform_schema(schema),
        messages=[{"role": "user", "content": s.with_input(instructions, data)}],
    )
    messages_api.fail_tool(s.PICK, 529)
    try:
        assert post(messages_api, body).status_code == 529
        assert post(messages_api, formatted(s.origin_schema())).status_code != 529
    finally:
        messages_api.heal_tool(s.PICK)
    accepted(post(messages_api, body))


# --- recording rejections ----------------------------------------------------------------------


def test_rejections_record_rule_refusals_but_not_scripted_errors(messages_api):
    earlier = len(messages_api.rejections())
    messages_api.push(invalid_request("scripted"), overloaded())
    assert post(messages_api, request()).status_code == 400
    assert post(messages_api, request()).status_code == 529
    refused(post(messages_api, request(temperature=0.2)))
    accepted(post(messages_api, request()))
    assert [r.status for r in messages_api.requests] == [400, 529, 400, 200]
    [rejected] = messages_api.rejections()[earlier:]
    assert rejected.body["temperature"] == 0.2 and "temperature" in (rejected.rejected or "")
    messages_api.reset()  # the suite reads rejections after the test: a reset keeps them
    assert messages_api.rejections()[earlier:] == [rejected]


def test_the_process_reports_its_rejections_over_http():
    with MessagesAPIProcess() as process:
        process.push({"error": {"status": 529, "type": "overloaded_error"}})
        for body in (request(), request(tool_choice={"type": "any"}, tools=[LOOKUP])):
            httpx.post(f"{process.url}/v1/messages", json=body, headers={"x-api-key": "k"})
        [rejected] = process.rejections()
        assert rejected["status"] == 400 and rejected["rejected"].startswith("tool_choice")
        process.reset()
        assert process.rejections() == [rejected]
    assert process.rejections() == [rejected]  # still known once the process has stopped
