"""`violet eval memory FILE`: memory recall on LoCoMo-format conversations.

Every turn of a conversation goes through the memory service's own capture path (the same
parts the service runs, in this process, on fresh stores in a temporary VIOLET_HOME), one person
per conversation: the turn's text, with its speaker's name, as the person's message, numbered as
transcript seqs in order. Each question with evidence (categories 1 to 4) is then recalled; a
hit at k is a top-k item made from one of the question's evidence turns. The last stdout line is
one JSON object; it also says whether the shipped ranking choices were tuned on any of the
file's conversations (`memory.tuning`), that is whether the figures are in sample.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.runtime import migrate, open_memory
from memory.settings import MemorySettings
from memory.store import NewTurn
from memory.tuning import conversation_fingerprint, tuned_fingerprints
from violet.models import JsonObject
from violet_cli.evaluation import on_fresh_stores

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 3, 5)
# Turns of one session are spread out in time, in order, as they were said.
TURN_SPACING = timedelta(seconds=30)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)")


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass
class Conversation:
    person: str
    turns: list[NewTurn] = field(default_factory=list)
    dialog_of_seq: dict[int, str] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)

    @property
    def fingerprint(self) -> str:
        return conversation_fingerprint(turn.person_message for turn in self.turns)


def load_locomo(path: str) -> list[Conversation]:
    return [_conversation(sample) for sample in json.loads(Path(path).read_text())]


def _conversation(sample: JsonObject) -> Conversation:
    talk = sample["conversation"]
    found = Conversation(person=f"locomo-{sample['sample_id']}")
    numbers = sorted(
        int(m.group(1))
        for key, value in talk.items()
        if (m := _SESSION.fullmatch(key)) and isinstance(value, list)
    )
    for number in numbers:
        began = _when(talk[f"session_{number}_date_time"])
        for i, turn in enumerate(talk[f"session_{number}"]):
            seq = len(found.turns) + 1
            found.dialog_of_seq[seq] = turn["dia_id"]
            found.turns.append(
                NewTurn(
                    person_message=_said(turn),
                    violet_answer="",
                    source_seqs=(seq,),
                    at=began + i * TURN_SPACING,
                    speaker=turn["speaker"],
                )
            )
    for qa in sample["qa"]:
        evidence = _evidence(qa.get("evidence") or [])
        if qa.get("category") in CATEGORIES and evidence:
            found.questions.append(Question(qa["question"], qa["category"], evidence))
    return found


def _when(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _said(turn: JsonObject) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def _evidence(entries: list[str]) -> frozenset[str]:
    """Dialog ids; tolerates "D8:6; D9:17" and a stray colon as in "D:11:26"."""
    return frozenset(
        f"D{m.group(1)}:{m.group(2)}"
        for entry in entries
        for part in entry.split(";")
        if (m := _EVIDENCE.search(part))
    )


def tuning_seen(conversations: list[Conversation]) -> JsonObject:
    """Whether the shipped ranking choices were tuned on any of these conversations: if so,
    the figures are in sample."""
    tuned = tuned_fingerprints()
    seen = sum(conversation.fingerprint in tuned for conversation in conversations)
    return {"weights_saw_file": seen > 0, "conversations_seen": seen}


async def _evaluate(conversations: list[Conversation], settings: MemorySettings) -> JsonObject:
    hits: dict[str, dict[int, list[bool]]] = defaultdict(lambda: {k: [] for k in KS})
    latencies_ms: list[float] = []
    async with open_memory(settings) as memory:
        for conversation in conversations:
            started = time.perf_counter()
            for turn in conversation.turns:
                await memory.capturer.accept(conversation.person, turn)
            await memory.capturer.settled(conversation.person)
            await memory.consolidator.consolidate(conversation.person)
            print(
                f"{conversation.person}: {len(conversation.turns)} turns captured in "
                f"{time.perf_counter() - started:.1f} s",
                file=sys.stderr,
            )
            for question in conversation.questions:
                began = time.perf_counter()
                recalled = await memory.recaller.recall(conversation.person, question.text, max(KS))
                latencies_ms.append((time.perf_counter() - began) * 1000)
                made_from = [
                    {conversation.dialog_of_seq.get(seq) for seq in r.item.source_seqs}
                    for r in recalled
                ]
                for k in KS:
                    hit = any(dialogs & question.evidence for dialogs in made_from[:k])
                    hits["all"][k].append(hit)
                    hits[CATEGORIES[question.category]][k].append(hit)
    return {**_report(hits, latencies_ms), **tuning_seen(conversations)}


def _report(hits: dict[str, dict[int, list[bool]]], latencies_ms: list[float]) -> JsonObject:
    def rates(found: dict[int, list[bool]]) -> dict[str, float]:
        return {f"recall_at_{k}": round(sum(found[k]) / max(len(found[k]), 1), 3) for k in KS}

    latencies_ms.sort()
    return {
        "questions": len(hits["all"][1]),
        **rates(hits["all"]),
        "by_category": {
            name: {"questions": len(hits[name][1]), **rates(hits[name])}
            for name in CATEGORIES.values()
        },
        "p50_ms": round(statistics.median(latencies_ms), 1) if latencies_ms else 0.0,
        "p99_ms": round(latencies_ms[int(0.99 * (len(latencies_ms) - 1))], 1)
        if latencies_ms
        else 0.0,
    }


def eval_memory(path: str) -> JsonObject:
    """Runs the evaluation on fresh stores; prints the report as the last stdout line."""
    conversations = load_locomo(path)
    return on_fresh_stores(
        "memory", MemorySettings, migrate, lambda settings: _evaluate(conversations, settings)
    )
