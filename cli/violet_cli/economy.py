"""Context economy: what the main call costs as one conversation grows, on the real path.

The session service's own parts run in this process (transcript, pins, fold and turn runner, on
SQLite in a temporary folder) and call the model through the real SDK over HTTP, on a server
that speaks the Messages API: the benchmark and the tests use the repo's local one, whose
prompt cache works as the API's and which records every request with its usage. One person
says each line and waits for the answer and the fold after it. Memory recall is a small
stand-in that returns up to 3 of the person's earlier sentences sharing words with the query
(memory has its own evaluation); no line hands work over, so no router or worker is needed.

`figures` reads the recorded requests: the size of the main call answering each turn, fold
calls, `cache_control`, the stable prefix (leading blocks identical to the previous main call)
and the share of input read from the cache. The full-history baseline is the same call with the
whole conversation in place of the summary and the window, estimated as the local server counts
tokens (about 30% more than a quarter of the characters of each block's JSON, as the 5.5
models' tokenizer counts).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import cast

import httpx
from sqlalchemy.engine import make_url

from session.actions import MainActions
from session.capture.owed import Bounds, Capture, OwedCaptures
from session.capture.sender import CaptureSender
from session.feed import Feed
from session.fold import Fold
from session.memory_client import MemoryClient, Recollection
from session.notify.outbox import Outbox
from session.pins import Pin
from session.runner import Delivery, Replica, TurnRunner
from session.store import ConversationStore
from session.transcript import Message
from session.turn import MainSession
from session.turn_lock import turn_lock
from session.window import Window
from violet import database
from violet.channels import Peers
from violet.identity import Identity
from violet.models import JsonObject, make_model_client
from violet.models.offline_rules import WORK_VERB
from violet.models.offline_text import estimate_tokens, strip_lead
from violet.models.tools import RECORD_PROMISE, UPDATE_PREFIX, is_memory_note

EARLY_TURNS = range(40, 61)  # turns 40 to 60: the summary has filled up by then
REPO = Path(__file__).resolve().parents[2]


class RecentSentences:
    """Memory for the measurement: up to 3 of the person's earlier messages, by shared words."""

    def __init__(self) -> None:
        self._said: list[str] = []

    async def recall(self, identity: Identity, query: str) -> Recollection:
        wanted = _words(query)
        scored = [(len(wanted & _words(said)), said) for said in self._said]
        best = sorted((pair for pair in scored if pair[0]), key=lambda pair: -pair[0])[:3]
        return Recollection([said[:160] for _, said in best])

    async def capture(self, identity: Identity, capture: Capture, answered_at: datetime) -> None:
        if capture.person_message:
            self._said.append(capture.person_message)


def _words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z']{4,}", text.lower())}


@dataclass(frozen=True)
class Talked:
    transcript: list[Message]
    open_items: list[Pin]  # what was still open at the end


async def talk(api_url: str, lines: Sequence[str], *, window: int = 30) -> Talked:
    """Says each line as one person to the session's parts, one turn at a time."""
    with tempfile.TemporaryDirectory(prefix="violet-economy-") as home:
        url = make_url(f"sqlite:///{Path(home) / 'session.db'}")
        database.migrate(url, "session.migrations", "alembic_version_session")
        db = database.open_database(url)
        model = make_model_client(api_key="economy", base_url=api_url, main_model="", fast_model="")
        try:
            store = ConversationStore.open(db, notify=False)
            transcript, pins = store.transcript, store.pins
            memory, frame = cast(MemoryClient, RecentSentences()), Window(window)
            nobody = Peers({}, 5.0)  # no line hands work over, so no peer is ever called
            actions = MainActions(pins, store.effects, nobody, store.reminders)
            captures = CaptureSender(
                OwedCaptures(db, "economy", 30.0), memory, "e" * 32, Bounds(1000, 1000)
            )
            runner = TurnRunner(
                store,
                MainSession(model, pins, memory, actions, frame),
                Fold(model, store, frame, "economy"),
                Delivery(Feed(1.0), captures, Outbox(db, 1.0)),
                Replica("economy", "e" * 32, turn_lock(db, "economy", 30.0)),
            )
            conversation = await store.conversations.conversation_of("economy")
            for number, line in enumerate(lines):
                await transcript.append_say(conversation, f"say-{number}", line)
                runner.schedule(conversation)
                await runner.idle(conversation)
                await captures.settled(conversation.id, conversation.person)
                if await transcript.next_unanswered(conversation.id) is not None:
                    raise RuntimeError(f"turn {number + 1} was not answered")
            await runner.stop(5.0)
            await captures.stop(5.0)
            return Talked(
                await transcript.since(conversation.id, 0, limit=1_000_000),
                await pins.open(conversation.id),
            )
        finally:
            await model.aclose()
            await db.dispose()


@dataclass
class Economy:
    """What a recorded conversation's main calls cost. Sizes are prompt tokens (read afresh,
    written to the cache and read from it), one per turn, for the call answering it."""

    sizes: list[int]
    baseline: list[int]
    cache_reads: list[int]
    fold_calls: int
    main_calls: int
    marked_calls: int
    stable_prefixes: list[float] = field(default_factory=list)
    read_tokens: int = 0
    prompt_tokens: int = 0

    @property
    def turns(self) -> int:
        return len(self.sizes)

    @property
    def late_turns(self) -> range:
        """The last 21 turns, as long a stretch as `EARLY_TURNS`."""
        return range(self.turns - len(EARLY_TURNS) + 1, self.turns + 1)

    def mean_size(self, turns: range) -> float:
        return statistics.mean(self.sizes[turns.start - 1 : turns.stop - 1])

    def size_ratio(self) -> float:
        """The main call's mean size over the last turns against turns 40 to 60."""
        return self.mean_size(self.late_turns) / self.mean_size(EARLY_TURNS)

    @property
    def folds_per_100_turns(self) -> float:
        return 100 * self.fold_calls / self.turns

    @property
    def cache_control_share(self) -> float:
        return self.marked_calls / self.main_calls

    @property
    def median_stable_prefix(self) -> float:
        return statistics.median(self.stable_prefixes)

    @property
    def cache_read_share(self) -> float:
        return self.read_tokens / self.prompt_tokens

    def summary(self) -> JsonObject:
        return {
            "turns": self.turns,
            "size_ratio": round(self.size_ratio(), 3),
            "folds_per_100_turns": round(self.folds_per_100_turns, 1),
            "cache_control_share": round(self.cache_control_share, 3),
            "median_stable_prefix": round(self.median_stable_prefix, 3),
            "cache_read_share": round(self.cache_read_share, 3),
            "size_p50": statistics.median(self.sizes),
            "size_max": max(self.sizes),
            "baseline_last": self.baseline[-1],
        }


def figures(recorded: Sequence[JsonObject], transcript: Sequence[Message]) -> Economy:
    """The figures of one conversation from its recorded requests (`{"body", "usage"}` each)."""
    mains = [r for r in recorded if _is_main(r["body"]) and r.get("usage")]
    folds = [r for r in recorded if _is_fold(r["body"])]
    openers = [r for r in mains if answers_person(r["body"])]
    history = _history_tokens(transcript)
    economy = Economy(
        sizes=[prompt_tokens(r["usage"]) for r in openers],
        baseline=[_full_history(r["body"], next(history)) for r in openers],
        cache_reads=[r["usage"]["cache_read_input_tokens"] for r in openers],
        fold_calls=len(folds),
        main_calls=len(mains),
        marked_calls=sum(1 for r in mains if any("cache_control" in b for b in _blocks(r["body"]))),
        read_tokens=sum(r["usage"]["cache_read_input_tokens"] for r in mains),
        prompt_tokens=sum(prompt_tokens(r["usage"]) for r in mains),
    )
    for before, after in zip(mains, mains[1:], strict=False):
        economy.stable_prefixes.append(stable_prefix(before["body"], after["body"]))
    return economy


def stable_prefix(before: JsonObject, after: JsonObject) -> float:
    """The share of `after` (by characters) in leading blocks identical to `before`'s."""
    earlier, later = _sized_blocks(before), _sized_blocks(after)
    shared = 0
    for (one, size), (other, _) in zip(earlier, later, strict=False):
        if one != other:
            break
        shared += size
    return shared / sum(size for _, size in later)


def _sized_blocks(body: JsonObject) -> list[tuple[str, int]]:
    found = []
    for block in _blocks(body):
        text = json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)
        found.append((text, len(text)))
    return found


def _blocks(body: JsonObject) -> list[JsonObject]:
    """Tools, system blocks and message blocks, in the order the API reads them."""
    system = body.get("system") or []
    blocks = [*(body.get("tools") or [])]
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else system
    for message in body["messages"]:
        content = message["content"]
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content
    return blocks


def _is_fold(body: JsonObject) -> bool:
    """A fold: the structured answer whose schema holds the summary."""
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema") or {}
    return "summary" in schema.get("properties", {})


def _is_main(body: JsonObject) -> bool:
    return any(tool["name"] == RECORD_PROMISE for tool in body.get("tools") or [])


def answers_person(body: JsonObject) -> bool:
    """A main call that opens the turn answering the person (not a tool round, not a telling)."""
    last = body["messages"][-1]
    content = last["content"]
    texts = (
        [content]
        if isinstance(content, str)
        else [b["text"] for b in content if b["type"] == "text" and not is_memory_note(b)]
    )
    return last["role"] == "user" and bool(texts) and not texts[0].startswith(UPDATE_PREFIX)


def prompt_tokens(usage: JsonObject) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def _tokens(value: object) -> int:
    return estimate_tokens(json.dumps(value))


def _history_tokens(transcript: Sequence[Message]) -> Iterator[int]:
    """For each of the person's messages in turn: the tokens of everything said up to it."""
    total = 0
    for message in transcript:
        total += _tokens({"type": "text", "text": message.text})
        if message.author == "you":
            yield total


def _full_history(body: JsonObject, history: int) -> int:
    """The call with the whole conversation instead of the summary, pins and window: its tools,
    instructions and notes, and every message so far."""
    system = body["system"]
    instructions = system if isinstance(system, str) else system[0]
    notes = [b for b in body["messages"][-1]["content"] if is_memory_note(b)]
    return sum(_tokens(b) for b in [*(body.get("tools") or []), instructions, *notes]) + history


def chatter(count: int, seed: int = 14) -> list[str]:
    """`count` things a person might say in a long conversation: facts about themselves,
    questions about them, and small talk, of varied length; none hands work over."""
    rng = random.Random(seed)
    things = ["sister", "dog", "favourite colour", "dentist", "neighbour", "bike", "book club"]
    values = ["Ana", "Rex", "teal", "Dr Brown", "Sam", "a blue one", "on Thursdays"]
    moods = ["tired", "happy", "busy", "calm", "excited about the weekend", "a bit worried"]
    places = ["the park", "the market", "my grandmother's", "the library", "the beach"]
    said = []
    for number in range(count):
        pick = rng.randrange(4)
        thing = rng.randrange(len(things))
        if pick == 0:
            said.append(f"My {things[thing]} is {values[thing]}, by the way.")
        elif pick == 1:
            said.append(f"What is my {things[thing]}?")
        elif pick == 2:
            said.append(f"I feel {rng.choice(moods)} today, after a long day at work.")
        else:
            place = rng.choice(places)
            said.append(
                f"This morning I went to {place} and it was lovely, number {number}. "
                + "The weather was kind and I met a friend I had not seen in a while. "
                * rng.randrange(1, 4)
            )
    return said


def locomo_lines(path: Path, count: int) -> list[str]:
    """What one speaker says in the LoCoMo conversations, in order, as one person's lines."""
    said: list[str] = []
    for sample in json.loads(path.read_text()):
        dialog = sample["conversation"]
        sessions = sorted(
            (key for key in dialog if re.fullmatch(r"session_\d+", key)),
            key=lambda key: int(key.split("_")[1]),
        )
        for key in sessions:
            for turn in dialog[key]:
                text = turn.get("text", "").strip()
                if turn["speaker"] != dialog["speaker_a"] or not text:
                    continue
                if not WORK_VERB.match(strip_lead(text)):
                    said.append(text)
    return (said * (count // max(1, len(said)) + 1))[:count]


@contextlib.contextmanager
def local_messages_api() -> Iterator[str]:
    """The repo's local Messages API server (`tests/support/messages_api.py`) in its own
    process; its address."""
    command = [sys.executable, "-m", "tests.support.messages_api", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"the local Messages API server did not start: {line!r}")
        yield line.removeprefix("listening on ").strip()
    finally:
        server.terminate()
        server.wait(10)


def script_promises(url: str, every: int, keeps: bool) -> None:
    """Starts afresh, with a main model that records a promise every `every` turns."""
    httpx.post(f"{url}/_control/reset", timeout=10).raise_for_status()
    spec = {"every": every, "keeps": keeps}
    httpx.post(f"{url}/_control/promises", json=spec, timeout=10).raise_for_status()


def recorded_requests(url: str) -> list[JsonObject]:
    answer = httpx.get(f"{url}/_control/requests", timeout=120)
    answer.raise_for_status()
    return answer.json()
