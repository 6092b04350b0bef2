"""The model-calls benchmark tells each recorded request's kind from its shape, and counts
answers, retries, refusals by the API and the cache's share."""

from __future__ import annotations

from violet.models import tools as t
from violet.models.anthropic_client import tool_param
from violet.models.structured import fold_schema, origin_schema, pick_schema
from violet_cli.bench_calls import count_calls, kind_of

MAIN = [tool_param(tool) for tool in t.MAIN_TOOLS]
WORK = [tool_param(tool) for tool in t.WORK_TOOLS]


def structured(schema: dict) -> dict:
    return {"output_config": {"format": {"type": "json_schema", "schema": schema}}}


def main_call(last: list[dict]) -> dict:
    return {"tools": MAIN, "messages": [{"role": "user", "content": last}]}


def test_each_kind_of_call_is_told_apart() -> None:
    said = {"type": "text", "text": "hello"}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    update = {"type": "text", "text": t.UPDATE_PREFIX + "It is done."}
    assert kind_of(structured(fold_schema())) == "fold"
    assert kind_of(structured(pick_schema(["c1"]))) == "pick"
    assert kind_of(structured(origin_schema())) == "origin"
    assert kind_of({"tools": WORK, "messages": []}) == "work"
    assert kind_of(main_call([said])) == "main"
    assert kind_of(main_call([result])) == "main tool round"
    assert kind_of(main_call([update])) == "main telling a result"


def test_answers_retries_refusals_and_the_cache_share_are_counted() -> None:
    said = main_call([{"type": "text", "text": "hello"}])
    usage = {"input_tokens": 20, "cache_read_input_tokens": 60, "cache_creation_input_tokens": 20}
    answered = [{"body": said, "status": 200, "usage": usage} for _ in range(50)]
    recorded = [
        {"body": said, "status": 429, "usage": None},
        *answered,
        {"body": said, "status": 400, "usage": None, "rejected": "no prefill"},
    ]
    calls = count_calls(recorded, turns=50, seconds=1.0)
    assert calls.by_kind == {"main": 50}
    assert calls.retried == {"main": 1}
    assert calls.rejected == 1
    assert calls.cache_share == {50: 0.6}
    assert calls.as_dict()["per_turn"] == {"main": 1.0}
