"""Structured answers: the JSON text a structured call returns, checked against its full schema
the same way in both implementations.

The wire schema is the API's subset (constraints such as `maxLength` or `minimum` travel in
descriptions there, `anthropic.transform_schema`); the full schema is enforced here. Enum values
may come back in another case (the API does not promise it): they are read case-insensitively
and given back in the schema's own spelling. Nothing else is repaired.
"""

from __future__ import annotations

import json
from typing import Any

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


def structured_answer(name: str, schema: JsonObject, content: list[ContentBlock]) -> JsonObject:
    """The JSON object the answer's words hold, provided it fits `schema`."""
    words = "".join(block["text"] for block in content if block["type"] == "text")
    try:
        answer = json.loads(words)
    except ValueError:
        raise ModelOutputInvalid(f'The answer to "{name}" is not JSON.') from None
    if not isinstance(answer, dict):
        raise ModelOutputInvalid(f'The answer to "{name}" is not an object.')
    answer = _enums_as_written(schema, answer)
    check_against_schema(name, schema, answer)
    return answer


def check_against_schema(name: str, schema: JsonObject, answer: JsonObject) -> None:
    error = best_match(Draft202012Validator(schema).iter_errors(answer))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise ModelOutputInvalid(
            f'The answer to "{name}" does not fit its schema at {where}: {error.message}'
        )


def _enums_as_written(schema: JsonObject, value: Any) -> Any:
    """`value` with each string that matches one of its schema's enum values but for case
    replaced by that value."""
    kind = schema.get("type")
    if kind == "object" and isinstance(value, dict):
        properties = schema.get("properties", {})
        return {
            key: _enums_as_written(properties[key], item) if key in properties else item
            for key, item in value.items()
        }
    if kind == "array" and isinstance(value, list):
        items = schema.get("items", {})
        return [_enums_as_written(items, item) for item in value]
    if isinstance(value, str) and "enum" in schema and value not in schema["enum"]:
        same = [e for e in schema["enum"] if isinstance(e, str) and e.lower() == value.lower()]
        if len(same) == 1:
            return same[0]
    return value
