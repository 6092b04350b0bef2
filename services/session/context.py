"""What the main model sees: the system prompt and the live window of the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from session.transcript import Message

SYSTEM_PROMPT = """You are Violet, a personal assistant for people who are not developers: \
teenagers, busy parents, anyone who wants to say what they need and get it done. You and the \
person share one conversation that never starts over. Answer warmly, briefly and in the \
person's own language. Never mention how you work inside: no tools, systems, sessions, \
identifiers or models."""


def model_messages(window: Sequence[Message]) -> list[dict]:
    """The window as Messages API turns: alternating roles, starting with the person."""
    turns: list[dict] = []
    for message in window:
        role = "user" if message.author == "you" else "assistant"
        if not turns and role == "assistant":
            continue  # a model conversation opens with the person's words
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + message.text
        else:
            turns.append({"role": role, "content": message.text})
    return turns
