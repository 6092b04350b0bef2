"""One person's memory at scale: recall latency and capture-to-recallable as items grow.

The memory service's own parts run in this process on fresh stores (SQLite and the embedded
vector store in a temporary home), for one person. Filling 100,000 items through the capture
path would take hours of embedding, so the filler items are written through the store and the
vector store directly: a pool of real LoCoMo turns is embedded once and its vectors are re-used,
each filler carrying a pool turn's words and vectors. What is measured then goes through the
real paths: `Recaller.recall` with a real query embedding, and a real capture through the
`Capturer` (the offline model proposes the facts).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from memory.runtime import Memory, migrate, open_memory
from memory.settings import MemorySettings
from memory.store import TURN, Item, NewTurn, PersonMemory, new_item_id
from violet.embedder import embed_in_thread, get_embedder
from violet.vectors import VectorPoint
from violet_cli.percentiles import percentile

SIZES = (1_000, 10_000, 100_000)
PERSON = "bench-memory"
POOL = 512
FILL_BATCH = 2_000
RECALL_K = 3
# Samples per size: fewer where one recall may take seconds (before recall was incremental).
UNCHANGED_RECALLS = {1_000: 60, 10_000: 60, 100_000: 30}
RECALLS_AFTER_CAPTURE = {1_000: 20, 10_000: 20, 100_000: 10}
CAPTURES_TO_RECALLABLE = {1_000: 8, 10_000: 8, 100_000: 5}
RECALLABLE_TIMEOUT_S = 120.0
FIRST_DAY = datetime(2023, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Pool:
    """Real turns with their vectors, and real questions to recall with."""

    texts: list[str]
    speakers: list[str]
    vectors: NDArray[np.float32]
    questions: list[str]


@dataclass(frozen=True)
class ScaleFigures:
    items: int
    fill_s: float
    unchanged_ms: list[float]
    after_capture_ms: list[float]
    recallable_ms: list[float]


def measure_memory_scale(
    data: str = "../shared/data/locomo_dev.json", sizes: Sequence[int] = SIZES
) -> list[ScaleFigures]:
    """Recall and capture figures for one person at each size, grown in one store."""
    with tempfile.TemporaryDirectory(prefix="violet-bench-memory-") as home:
        settings = MemorySettings(home=Path(home), database_url="", qdrant_url="")
        migrate(settings)
        return asyncio.run(_measure(settings, Path(data), sizes))


async def _measure(
    settings: MemorySettings, data: Path, sizes: Sequence[int]
) -> list[ScaleFigures]:
    found: list[ScaleFigures] = []
    async with open_memory(settings) as memory:
        pool = await real_pool(memory, data)
        filled = 0
        seq = 0
        for size in sorted(sizes):
            started = time.perf_counter()
            filled = await fill(memory, pool, filled, size)
            fill_s = time.perf_counter() - started
            unchanged = await _recalls_unchanged(memory, pool, UNCHANGED_RECALLS.get(size, 30))
            after, seq = await _recalls_after_capture(
                memory, pool, seq, RECALLS_AFTER_CAPTURE.get(size, 10)
            )
            recallable, seq = await _captures_to_recallable(
                memory, seq, CAPTURES_TO_RECALLABLE.get(size, 5)
            )
            found.append(ScaleFigures(size, fill_s, unchanged, after, recallable))
    return found


async def real_pool(memory: Memory, data: Path) -> Pool:
    samples = json.loads(await asyncio.to_thread(data.read_text))
    turns = [
        (turn["speaker"], f"{turn['speaker']}: {turn['text']}")
        for sample in samples
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    questions = [qa["question"] for sample in samples for qa in sample["qa"] if qa.get("question")]
    chosen = turns[:: max(1, len(turns) // POOL)][:POOL]
    texts = [text for _, text in chosen]
    vectors = await embed_in_thread(get_embedder(), texts)
    return Pool(texts, [speaker for speaker, _ in chosen], vectors, questions)


async def fill(memory: Memory, pool: Pool, filled: int, size: int, person: str = PERSON) -> int:
    """Adds filler turn items until the person has `size` items."""
    while filled < size:
        count = min(FILL_BATCH, size - filled)
        items, points = [], []
        for n in range(filled, filled + count):
            at = FIRST_DAY + timedelta(minutes=n)
            item = _filler(pool, n, at, person)
            vector = pool.vectors[n % len(pool.texts)]
            items.append(item)
            points.append(VectorPoint(item.id, person, TURN, vector, vector))
        await memory.vectors.upsert(points)
        await memory.store.run(person, partial(PersonMemory.add_items, items=items))
        filled += count
    return filled


def _filler(pool: Pool, n: int, at: datetime, person: str) -> Item:
    text = pool.texts[n % len(pool.texts)]
    return Item(
        id=new_item_id(),
        person=person,
        kind=TURN,
        text=text,
        origin="you",
        quote=text,
        speaker=pool.speakers[n % len(pool.texts)],
        source_seqs=(),
        turn_items=(),
        previous_item=None,
        subject=None,
        subject_value=None,
        created_at=at,
        updated_at=at,
    )


async def _timed_recall(memory: Memory, query: str) -> tuple[float, list[str]]:
    started = time.perf_counter()
    recalled = await memory.recaller.recall(PERSON, query, RECALL_K)
    return (time.perf_counter() - started) * 1000, [r.item.text for r in recalled]


async def _recalls_unchanged(memory: Memory, pool: Pool, count: int) -> list[float]:
    await _timed_recall(memory, pool.questions[0])  # the index, as it stands after the fill
    return [
        (await _timed_recall(memory, pool.questions[n % len(pool.questions)]))[0]
        for n in range(1, count + 1)
    ]


def _captured_turn(seq: int, text: str) -> NewTurn:
    return NewTurn(
        person_message=text,
        violet_answer="Noted.",
        source_seqs=(seq,),
        at=datetime.now(UTC),
        speaker="",
    )


async def _recalls_after_capture(
    memory: Memory, pool: Pool, seq: int, count: int
) -> tuple[list[float], int]:
    """The first recall after each capture, once the capture's items are made."""
    times = []
    for n in range(count):
        seq += 1
        await memory.capturer.accept(
            PERSON, _captured_turn(seq, f"I like walking by the river {seq}.")
        )
        await memory.capturer.settled(PERSON)
        times.append((await _timed_recall(memory, pool.questions[n % len(pool.questions)]))[0])
    return times, seq


async def _captures_to_recallable(memory: Memory, seq: int, count: int) -> tuple[list[float], int]:
    """From handing a turn to capture until a recall brings back an item made from it."""
    times = []
    for _ in range(count):
        seq += 1
        code = f"zx{seq}q"
        started = time.perf_counter()
        await memory.capturer.accept(PERSON, _captured_turn(seq, f"My locker code is {code}."))
        while time.perf_counter() - started < RECALLABLE_TIMEOUT_S:
            _, texts = await _timed_recall(memory, f"What is my locker code {code}?")
            if any(code in text for text in texts):
                break
        times.append((time.perf_counter() - started) * 1000)
        await memory.capturer.settled(PERSON)
    return times, seq


def _spread(samples: Sequence[float]) -> str:
    return f"{percentile(samples, 50):.0f} / {percentile(samples, 99):.0f}"


def render_memory_scale(figures: Sequence[ScaleFigures]) -> str:
    """The markdown section for docs/benchmarks.md."""
    rows = [
        f"| {f.items:,} | {_spread(f.unchanged_ms)} | {_spread(f.after_capture_ms)} "
        f"| {_spread(f.recallable_ms)} "
        f"| {len(f.unchanged_ms)} / {len(f.after_capture_ms)} / {len(f.recallable_ms)} |"
        for f in figures
    ]
    return "\n".join(
        [
            "## One person's memory at scale",
            "",
            "One person's recall (top 3, the query embedded each time) with nothing changed,",
            "the first recall after a capture (its items made), and capture to recallable: from",
            "handing a turn to the `Capturer` until a recall brings back an item made from it.",
            "The memory service's parts run in one process on SQLite and the embedded vector",
            "store. The filler items are written through the store and the vector store",
            f"directly, re-using the vectors of {POOL} real LoCoMo turns embedded once: filling",
            "100,000 items through capture would take hours of embedding. Times in ms, p50 / p99.",
            "",
            "| items | recall, unchanged | recall after a capture | capture to recallable "
            "| samples |",
            "|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
