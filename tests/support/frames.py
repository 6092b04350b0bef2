"""Hypothesis strategies for what a device may send: valid frames of every type, and anything
at all (wrong types, lone surrogates, nesting, huge numbers, NULs, garbage bytes)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

FRAME_TYPES = [
    "hello",
    "say",
    "memory.list",
    "memory.forget",
    "memory.restore",
    "memory.forget_all",
    "documents.list",
    "document.open",
    "document.delete",
    "document.restore",
]
# The keys a frame's fields are drawn from.
FRAME_KEYS = ["id", "text", "token", "since", "item", "name", "extra"]

# Text of every kind, lone surrogates and NULs included.
any_text = st.text(st.characters(blacklist_categories=()), max_size=40)
huge_numbers = st.integers(min_value=-(10**300), max_value=10**300)
scalars = st.one_of(st.none(), st.booleans(), huge_numbers, st.floats(allow_nan=False), any_text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(any_text, inner, max_size=3)
    ),
    max_leaves=8,
)

# What the contract allows in a say: an id of 1 to 128 characters, text without NUL.
valid_ids = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=128)
valid_texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=300,
).filter(str.strip)
valid_says = st.builds(
    lambda message_id, text: {"type": "say", "id": message_id, "text": text},
    valid_ids,
    valid_texts,
)


@st.composite
def hostile_frames(draw: st.DrawFn) -> str | bytes:
    """One frame as sent on the wire: mostly objects shaped like frames with fields of any
    value, sometimes deep nesting, raw garbage or something too big."""
    shape = draw(st.sampled_from(["frame", "frame", "frame", "nested", "garbage", "bytes"]))
    if shape == "nested":
        depth = draw(st.integers(min_value=1, max_value=20_000))
        return '{"type":"say","id":"1","text":' + "[" * depth + "]" * depth + "}"
    if shape == "garbage":
        return draw(st.text(max_size=200))
    if shape == "bytes":
        return draw(st.binary(max_size=200))
    frame = {"type": draw(st.one_of(st.sampled_from(FRAME_TYPES), json_values))}
    for key in draw(st.sets(st.sampled_from(FRAME_KEYS))):
        frame[key] = draw(json_values)
    return json.dumps(frame)
