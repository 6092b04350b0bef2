"""First answers (part of `violet bench`): is the first answer as quick as later ones?

Two kinds of people open the app on a local stack of real processes, one after another, each
alone: new people, and people with a long memory that this stack has not loaded since it
started (as after a restart, or when another server takes them on). Each connects, says
`hello`, then a few says, each waiting for Violet's answer. Timed over the phone protocol:
hello to `welcome`, the first say to its answer and the later says to theirs, so a first
answer is read against the same person's later ones on the same machine at the same moment.
Memory is readied at `hello`; a person with a long memory who speaks at once gets little of
that head start, one who reads for a moment first gets all of it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import websockets

from memory.runtime import migrate, open_memory
from memory.settings import MemorySettings
from violet.models import JsonObject
from violet_cli.bench import Distribution, LocalStack, local_stack
from violet_cli.bench_load import measured_on
from violet_cli.bench_memory import fill, real_pool

NEW_PEOPLE = 30
SAYS_EACH = 5
# People with a long memory: how long it is, how many speak at once and how many read first.
LONG_MEMORY_ITEMS = 10_000
LONG_MEMORY_PEOPLE = 3
READING_S = 3.0
QUESTIONS = (
    "What do I like to do at the weekend?",
    "Where did I go last summer?",
    "What do I do for work?",
)
LINES = (
    "Hi, I'm new here!",
    "My favourite colour is green.",
    "What can you help me with?",
    "The weather is nice today.",
    "Thanks, talk soon.",
)


@dataclass
class Answers:
    """One kind of person's times, in ms."""

    welcome: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    later: list[float] = field(default_factory=list)

    def ratio(self) -> float:
        """The first answer's p50 over the later answers'."""
        later = Distribution(self.later).percentile(50)
        return Distribution(self.first).percentile(50) / later if later else float("nan")

    def as_dict(self) -> JsonObject:
        first, later = Distribution(self.first), Distribution(self.later)
        return {
            "people": len(self.first),
            "first_p50_ms": round(first.percentile(50), 1),
            "first_p99_ms": round(first.percentile(99), 1),
            "later_p50_ms": round(later.percentile(50), 1),
            "later_p99_ms": round(later.percentile(99), 1),
        }


@dataclass
class FirstFigures:
    load_average: float
    new: Answers = field(default_factory=Answers)
    # People with a long memory: speaking at once, and after reading for a moment.
    at_once: Answers = field(default_factory=Answers)
    after_reading: Answers = field(default_factory=Answers)

    def as_dict(self) -> JsonObject:
        return {
            "new": self.new.as_dict(),
            "long_memory_at_once": self.at_once.as_dict(),
            "long_memory_after_reading": self.after_reading.as_dict(),
        }


async def _answer(socket: websockets.ClientConnection, text: str) -> float:
    """Milliseconds from sending `say` to the message that answers it."""
    message_id = uuid.uuid4().hex
    began = time.perf_counter()
    await socket.send(json.dumps({"type": "say", "id": message_id, "text": text}))
    while True:
        frame = json.loads(await socket.recv())
        if frame.get("type") == "message" and frame.get("reply_to") == message_id:
            return (time.perf_counter() - began) * 1000


async def _person(
    stack: LocalStack, person: str, found: Answers, lines: Sequence[str], reading_s: float = 0.0
) -> None:
    async with websockets.connect(stack.live_url) as socket:
        began = time.perf_counter()
        hello = {"type": "hello", "token": stack.token(person), "since": 0}
        await socket.send(json.dumps(hello))
        while json.loads(await socket.recv()).get("type") != "welcome":
            pass
        found.welcome.append((time.perf_counter() - began) * 1000)
        await asyncio.sleep(reading_s)
        found.first.append(await _answer(socket, lines[0]))
        for line in lines[1:]:
            found.later.append(await _answer(socket, line))


def _long_memories(people: Sequence[str], items: int, data: Path) -> Callable[[Path], None]:
    """Lays down each person's long memory in a stack's home before it starts."""

    def lay_down(home: Path) -> None:
        settings = MemorySettings(home=home, database_url="", qdrant_url="")
        migrate(settings)
        asyncio.run(_fill(settings, people, items, data))

    return lay_down


async def _fill(settings: MemorySettings, people: Sequence[str], items: int, data: Path) -> None:
    async with open_memory(settings) as memory:
        pool = await real_pool(memory, data)
        for person in people:
            await fill(memory, pool, 0, items, person)


async def _first_answers(
    stack: LocalStack, people: int, long_memories: Sequence[str]
) -> FirstFigures:
    found = FirstFigures(os.getloadavg()[0])
    # One person first, not counted: the stack's own first turn is nobody's cost.
    await _person(stack, "warming-up", Answers(), LINES[:1])
    for _ in range(people):
        await _person(stack, f"newcomer-{uuid.uuid4().hex[:10]}", found.new, LINES[:SAYS_EACH])
    half = len(long_memories) // 2
    for person in long_memories[:half]:
        await _person(stack, person, found.at_once, QUESTIONS)
    for person in long_memories[half:]:
        await _person(stack, person, found.after_reading, QUESTIONS, READING_S)
    return found


def measure_first(data: Path, people: int = NEW_PEOPLE) -> FirstFigures:
    long_memories = [f"long-memory-{n}" for n in range(2 * LONG_MEMORY_PEOPLE)]
    lay_down = _long_memories(long_memories, LONG_MEMORY_ITEMS, data / "locomo_dev.json")
    with local_stack(before_start=lay_down) as stack:
        return asyncio.run(_first_answers(stack, people, long_memories))


def render_first(found: FirstFigures) -> str:
    rows = [
        row
        for name, answers in (
            ("new", found.new),
            (f"{LONG_MEMORY_ITEMS:,} items, speaks at once", found.at_once),
            (f"{LONG_MEMORY_ITEMS:,} items, reads {READING_S:.0f} s first", found.after_reading),
        )
        for row in _rows(name, answers)
    ]
    new = found.new
    table = "\n".join(rows)
    return f"""## First answers

{measured_on(found.load_average)} People open the app one after another, each alone on a
local stack of the five services (offline model, SQLite, embedded vector store), and talk
through a real websocket, each say waiting for Violet's answer: {len(new.first)} new people
({SAYS_EACH} says each), then {len(found.at_once.first) + len(found.after_reading.first)} people
with {LONG_MEMORY_ITEMS:,} items in memory that the stack has not loaded since it started (as
after a restart, or on another server), asking {len(QUESTIONS)} questions each: half at once,
half after reading for {READING_S:.0f} s. Memory is readied at `hello`. The stack's own first
turn is made before, by a person not counted.

| person | measure | count | p50 ms | p90 ms | p99 ms |
|---|---|---:|---:|---:|---:|
{table}

First answer p50 against the same people's later answers: {found.new.ratio():.2f} for new
people; with a long memory, {found.at_once.ratio():.2f} speaking at once and
{found.after_reading.ratio():.2f} after reading.
"""


def _rows(name: str, answers: Answers) -> list[str]:
    return [
        f"| {name} | {Distribution(samples).row(measure)[2:]}"
        for measure, samples in (
            ("hello to welcome", answers.welcome),
            ("first say to answer", answers.first),
            ("later says to answer", answers.later),
        )
    ]
