"""What Violet did for a request, read from the actions the worker carried out.

A request's result goes to the person as words, and those words may carry a page's or a
document's text. Memory gets none of them: it gets deeds, structured, with Violet's own
parameters, read from the tool calls and their results, never from a model's report:
- a calculation: a program that prints one arithmetic expression, run without error, whose
  output is a number;
- a document written, by the name it was saved under;
- an email sent (not one declined or failed), to whom and about what.
Fetching a page, searching, reading a document and asking other work are reading, not deeds:
they give memory no fact. The memory service decides what of a deed it keeps.

The pages and documents a result came from are read here too (`sources_of`): what Violet tells
of the result is kept as a told record attributed to them, never as a fact about the person.
"""

from __future__ import annotations

import ast
import json
import re

from violet.models import JsonObject, ModelMessage
from violet.models import tools as t

# Operations and functions a calculation may use: arithmetic, nothing that names a thing.
_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)
_FUNCTIONS = frozenset({"abs", "round", "min", "max", "pow"})
_NUMBER = re.compile(r"^-?(?:\d[\d,_]*(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?$", re.IGNORECASE)


# Sources a result names at most (`violet.v1.Source`), and search results taken as sources.
MAX_SOURCES = 8
SEARCH_SOURCES = 3


def deeds_of(exchange: list[ModelMessage], asked: str) -> list[JsonObject]:
    """The deeds of one request's exchange (its messages from the request on), as
    `violet.v1.Deed` JSON objects, in the order they were done."""
    found: list[JsonObject] = []
    for name, tool_input, result in _done(exchange):
        deed = _deed(name, tool_input, result)
        if deed:
            found.append({**deed, "asked": asked})
    return found


def sources_of(exchange: list[ModelMessage]) -> list[JsonObject]:
    """The pages fetched or found and the documents read or written in one request's exchange,
    as `violet.v1.Source` JSON objects, each once, in the order they were used."""
    found: list[JsonObject] = []
    for name, tool_input, result in _done(exchange):
        for source in _sources(name, tool_input, result):
            if source not in found:
                found.append(source)
    return found[:MAX_SOURCES]


def _done(exchange: list[ModelMessage]) -> list[tuple[str, JsonObject, JsonObject]]:
    """(tool name, input, result) of each tool call of the exchange that succeeded."""
    calls = {
        block["id"]: block
        for message in exchange
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_use"
    }
    done = []
    for message in exchange:
        if message["role"] != "user" or not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block["type"] != "tool_result" or block.get("is_error"):
                continue
            call = calls.get(block["tool_use_id"])
            if call is not None:
                done.append(
                    (call["name"], dict(call.get("input") or {}), _json(block.get("content")))
                )
    return done


def _sources(name: str, tool_input: JsonObject, result: JsonObject) -> list[JsonObject]:
    if name == t.FETCH_PAGE and tool_input.get("url"):
        return [_source("page", str(tool_input["url"]), result.get("title"))]
    if name == t.WEB_SEARCH:
        hits = [hit for hit in result.get("results") or [] if isinstance(hit, dict)]
        return [
            _source("page", str(hit["url"]), hit.get("title"))
            for hit in hits[:SEARCH_SOURCES]
            if hit.get("url")
        ]
    if name in (t.READ_DOCUMENT, t.WRITE_DOCUMENT) and result.get("name"):
        return [_source("document", str(result["name"]), None)]
    return []


def _source(kind: str, where: str, title: object) -> JsonObject:
    source: JsonObject = {kind: where.strip()}
    if isinstance(title, str) and title.strip():
        source["title"] = " ".join(title.split())[:300]
    return source


def _deed(name: str, tool_input: JsonObject, result: JsonObject) -> JsonObject | None:
    if name == t.RUN_PYTHON:
        expression = arithmetic_printed(str(tool_input.get("code", "")))
        lines = [line.strip() for line in str(result.get("stdout", "")).splitlines()]
        value = next((line for line in reversed(lines) if line), "")
        if expression and result.get("exit_code") == 0 and _NUMBER.match(value):
            return {"calculated": {"expression": expression, "value": value}}
        return None
    if name == t.WRITE_DOCUMENT and result.get("name"):
        return {"wrote": {"name": str(result["name"])}}
    if name == t.SEND_EMAIL and result.get("sent") is True:
        sent = {"to": str(tool_input.get("to", "")), "subject": str(tool_input.get("subject", ""))}
        return {"sent": sent}
    return None


def arithmetic_printed(code: str) -> str | None:
    """The expression of a program that only prints one arithmetic expression, as written."""
    try:
        tree = ast.parse(code.strip())
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    if call.func.id != "print" or len(call.args) != 1 or call.keywords:
        return None
    expression = call.args[0]
    if not all(_arithmetic(node) for node in ast.walk(expression)):
        return None
    return ast.get_source_segment(code.strip(), expression)


def _arithmetic(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.Call):
        named = isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
        return named and not node.keywords
    if isinstance(node, ast.Name):
        return node.id in _FUNCTIONS  # the called function's own name
    return isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Load, *_OPERATORS))


def _json(content: object) -> JsonObject:
    if not isinstance(content, str):
        return {}
    try:
        value = json.loads(content)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
