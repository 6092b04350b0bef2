"""Strict structured answers: what a forced tool call must return, checked the same way in both
implementations."""

from __future__ import annotations

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from violet.models.errors import ModelOutputInvalid
from violet.models.messages import ContentBlock, JsonObject


def strict_object(**properties: JsonObject) -> JsonObject:
    """A JSON schema of an object with exactly these properties, all required."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def structured_input(name: str, schema: JsonObject, content: list[ContentBlock]) -> JsonObject:
    """The input of the `name` tool call in `content`, provided it fits `schema`."""
    calls = [b for b in content if b["type"] == "tool_use" and b["name"] == name]
    if len(calls) != 1:
        raise ModelOutputInvalid(f'The answer did not fill in "{name}" exactly once.')
    answer = calls[0].get("input")
    if not isinstance(answer, dict):
        raise ModelOutputInvalid(f'The answer to "{name}" is not an object.')
    check_against_schema(name, schema, answer)
    return answer


def check_against_schema(name: str, schema: JsonObject, answer: JsonObject) -> None:
    error = best_match(Draft202012Validator(schema).iter_errors(answer))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise ModelOutputInvalid(
            f'The answer to "{name}" does not fit its schema at {where}: {error.message}'
        )
