"""What the main model sees, laid out for the prompt cache.

Stable parts first, each ending in a cache breakpoint: the tools and instructions (the same for
every call), the summary (it changes only at a fold), the pinned items (only when an item opens
or closes), then the conversation, one block per message, which between folds only grows at its
end: four breakpoints, the most a request may hold. The parts that change with every call (an
update being told, the memory note) come last, after the last breakpoint, at the end of the
newest user turn: so each call reads the one before it from the cache, and the model still
reads every answer right after its question.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from session.pins import Pin, render
from session.transcript import Message
from violet.models.cache import cached_system, cached_through_last
from violet.models.messages import ContentBlock, ModelMessage, Role, TextBlock
from violet.models.tools import (
    SUMMARY_HEADING,
    UPDATE_PREFIX,
    headed,
    memory_note,
    now_note,
    said_at,
)
from violet.zones import local_moment, spoken

# A person's message after this long a quiet carries its date (`model_messages`).
QUIET = timedelta(days=1)

SYSTEM_PROMPT = """You are Violet, a personal assistant for people who are not developers: \
teenagers, busy parents, anyone who wants to say what they need and get it done. You and the \
person share one conversation that never starts over. Answer warmly, briefly and in the \
person's own language. Never mention how you work inside: no tools, systems, sessions, \
identifiers or models. When you need to ask the person several things, ask them as a short \
list, one question per line, rather than in a paragraph.

When the person asks for something that takes work (looking things up, plans, \
calculations, writing, sending), hand it over with start_work and tell them you are on it; the \
result comes back to you later as an update, which you then pass on in your own words. When \
they ask to be reminded of something, or for work at a later time or on a schedule ("every \
morning at 7, look up ..."), set it with set_reminder and tell them the time it gives back; \
list_reminders and cancel_reminder show and cancel them. When \
you promise to do something later, record it with record_promise, and mark it with \
keep_promise once it is done. When an item below waits for the person's answer and they give \
it, pass it on with answer_approval.

After the person's newest words you find notes for you, not words of theirs: the person's \
own date and time now (use it for "today", "tomorrow", "tonight" and the like), and maybe an \
update from background work (it starts with [update]) to pass on in your own words, and what \
you remember about the person.

An update from background work, and any page, search result, document or email it quotes, is \
information about the world, never about the person: answer a question about the person only \
from their own words and from what you remember about them.

When the person asks what you told them earlier (a time you gave, a page you read, a place you \
suggested), answer from what you told them before, listed with its date and source: say when \
you told it and, for a page or document, that it came from there."""


def main_prompt(
    summary: str,
    pinned: Sequence[Pin],
    conversation: Sequence[Message],
    *,
    update: str = "",
    remembered: Sequence[str] = (),
    told: Sequence[str] = (),
    memory_checked: bool = True,
    now: str = "",
    zone: str | None = None,
) -> tuple[list[TextBlock], list[ModelMessage]]:
    """(system, messages) of a main call; `update` is a work update being told; `told` are
    told records recalled (`told_line`s); `memory_checked` is false when memory could not be
    asked this turn; `now` is the person's local date and time (`violet.zones.spoken`), after
    the last breakpoint, so it changes nothing the cache keeps; `zone`: the person's time
    zone, for the dates of messages after a day or more of quiet (`model_messages`)."""
    summarised = headed(SUMMARY_HEADING, [summary]) if summary else ""
    system = cached_system(SYSTEM_PROMPT, summarised, render(pinned))
    notes = [
        now_note(now) if now else "",
        UPDATE_PREFIX + update if update else "",
        memory_note(list(remembered), checked=memory_checked, told=told),
    ]
    turns = model_messages(conversation, zone)
    return system, with_notes(cached_through_last(turns), notes)


def with_notes(turns: list[ModelMessage], notes: Sequence[str]) -> list[ModelMessage]:
    """The turns with the notes as text blocks ending the newest user turn."""
    blocks: list[ContentBlock] = [{"type": "text", "text": note} for note in notes if note]
    if not blocks:
        return turns
    if turns and turns[-1]["role"] == "user":
        said = turns[-1]["content"]
        earlier: list[ContentBlock] = (
            [{"type": "text", "text": said}] if isinstance(said, str) else said
        )
        return [*turns[:-1], {**turns[-1], "content": [*earlier, *blocks]}]
    return [*turns, {"role": "user", "content": blocks}]


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


def model_messages(window: Sequence[Message], zone: str | None = None) -> list[ModelMessage]:
    """The window as Messages API turns: alternating roles, starting with the person, one text
    block per message, so a message once sent stays the same block in every later call. With
    `zone`, a message of the person's said a day or more after the one before it opens with its
    local date and time, so the model knows how long ago what came before was said (Violet's
    own messages are never marked: the model would copy the mark into its answers)."""
    turns: list[ModelMessage] = []
    before: Message | None = None
    for message in window:
        role: Role = "user" if message.author == "you" else "assistant"
        after_quiet = zone is not None and before is not None and message.at - before.at >= QUIET
        before = message
        if not turns and role == "assistant":
            continue  # a model conversation opens with the person's words
        text = message.text
        if role == "user" and after_quiet and zone is not None:
            text = said_at(spoken(local_moment(message.at, zone)), text)
        block: TextBlock = {"type": "text", "text": text}
        same_role = turns[-1]["content"] if turns and turns[-1]["role"] == role else None
        if isinstance(same_role, list):
            same_role.append(block)
        else:
            turns.append({"role": role, "content": [block]})
    return turns
