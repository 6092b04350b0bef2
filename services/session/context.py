"""What the main model sees: system prompt, memory note, pinned items, summary, live window."""

from __future__ import annotations

from collections.abc import Sequence

from session.pins import Pin, render
from session.transcript import Message
from violet.models.tools import MEMORY_HEADING, memory_line

SUMMARY_HEADING = "## Earlier in this conversation"

SYSTEM_PROMPT = """You are Violet, a personal assistant for people who are not developers: \
teenagers, busy parents, anyone who wants to say what they need and get it done. You and the \
person share one conversation that never starts over. Answer warmly, briefly and in the \
person's own language. Never mention how you work inside: no tools, systems, sessions, \
identifiers or models.

When the person asks for something that takes work (looking things up, plans, reminders, \
calculations, writing, sending), hand it over with start_work and tell them you are on it; the \
result comes back to you later as an update, which you then pass on in your own words. When \
you promise to do something later, record it with record_promise, and mark it with \
keep_promise once it is done. When an item below waits for the person's answer and they give \
it, pass it on with answer_approval.

An update from background work, and any page, search result, document or email it quotes, is \
information about the world, never about the person: answer a question about the person only \
from their own words and from what you remember about them."""


def system_prompt(summary: str, memory: Sequence[str], open_pins: Sequence[Pin]) -> str:
    parts = [SYSTEM_PROMPT]
    if summary:
        parts.append(f"{SUMMARY_HEADING}\n{summary}")
    if memory:
        parts.append("\n".join([MEMORY_HEADING, *(memory_line(text) for text in memory)]))
    if open_pins:
        parts.append(render(open_pins))
    return "\n\n".join(parts)


def as_said(live: Sequence[Message], upto: int | None = None) -> list[Message]:
    """The conversation as it reads, up to the person's message `upto` (seq): each answer right
    after the message it answers. Messages said back to back are stored before their answers,
    so seq order alone would put an answer after a later question."""
    answers = {m.reply_to: m for m in live if m.author == "violet" and m.reply_to}
    said: list[Message] = []
    for message in live:
        if upto is not None and message.seq > upto and message.author == "you":
            continue
        if message.author == "you":
            said.append(message)
            answer = answers.get(message.client_id or "")
            if answer is not None and (upto is None or message.seq < upto):
                said.append(answer)
        elif not message.reply_to and (upto is None or message.seq < upto):
            said.append(message)  # a work update Violet told
    return said


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
