"""`violet bench`: measures a local stack and the evaluations; writes docs/benchmarks.md.

Figures are distributions (p50/p90/p99) and ratios, with the machine they were measured on:
these machines are shared and noisy, so a single number would mislead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import websockets

from violet.identity import issue_token
from violet.models import JsonObject
from violet.settings import CommonSettings
from violet_cli import sandbox_bench
from violet_cli.bench_memory import measure_memory_scale, render_memory_scale
from violet_cli.economy import (
    EARLY_TURNS,
    Economy,
    figures,
    local_messages_api,
    locomo_lines,
    recorded_requests,
    script_promises,
    talk,
)
from violet_cli.percentiles import percentile
from violet_cli.run import SERVICES, free_port, ready, start, stop
from violet_cli.trust import CorpusWeb, Figures, measure
from violet_cli.trust_corpus import corpus

PEOPLE = 4
SANDBOX_CACHE = Path(sys.prefix) / "violet-sandbox-cache"
TURNS_EACH = 25
READY_TIMEOUT_S = 120.0
# The memory-trust corpus: another seed than the test suite's, so it is data the code was not
# shaped on.
TRUST_SEED = 7
TRUST_PEOPLE = 8
TRUST_ATTEMPTS_EACH = 25
TRUST_FACTS_EACH = 8
ECONOMY_TURNS = 1_000
PROMISE_EVERY = 3
MODELS = {"never keeps a promise": False, "keeps its promises": True}


@dataclass
class Distribution:
    samples_ms: list[float]

    def percentile(self, p: float) -> float:
        return percentile(self.samples_ms, p)

    def row(self, name: str) -> str:
        return (
            f"| {name} | {len(self.samples_ms)} | {self.percentile(50):.0f} | "
            f"{self.percentile(90):.0f} | {self.percentile(99):.0f} |"
        )


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    model = Path("/proc/cpuinfo")
    if model.exists():
        names = [
            line.split(":", 1)[1].strip()
            for line in model.read_text().splitlines()
            if line.startswith("model name")
        ]
        cpu = names[0] if names else cpu
    memory = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB"
    return f"{os.cpu_count()} cores ({cpu}){memory}, Python {platform.python_version()}"


async def _person_turns(url: str, token: str, turns: int) -> list[float]:
    """One person's say-to-answer times, one message at a time."""
    times: list[float] = []
    async with websockets.connect(url) as socket_:
        await socket_.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        await socket_.recv()
        for number in range(turns):
            message_id = uuid.uuid4().hex
            began = time.perf_counter()
            await socket_.send(
                json.dumps(
                    {"type": "say", "id": message_id, "text": f"Tell me something nice, {number}."}
                )
            )
            while True:
                frame = json.loads(await socket_.recv())
                if frame.get("type") == "message" and frame.get("reply_to") == message_id:
                    break
            times.append((time.perf_counter() - began) * 1000)
    return times


async def _turn_latency(url: str, secret: str) -> Distribution:
    people = [issue_token(f"bench-{n}-{uuid.uuid4().hex[:6]}", secret) for n in range(PEOPLE)]
    results = await asyncio.gather(*(_person_turns(url, token, TURNS_EACH) for token in people))
    return Distribution([sample for person in results for sample in person])


@dataclass(frozen=True)
class LocalStack:
    settings: CommonSettings
    secret: str
    home: Path
    # Each service's process id, for reading its CPU time.
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def live_url(self) -> str:
        return f"ws://{self.settings.gateway_addr}/v1/live"

    def token(self, person: str) -> str:
        return issue_token(person, self.secret)


@contextlib.contextmanager
def local_stack(
    extra_env: dict[str, str] | None = None, before_start: Callable[[Path], None] | None = None
) -> Iterator[LocalStack]:
    """A stack of real processes on free ports, offline, on a temporary home; `before_start`
    may lay down state in that home first."""
    with tempfile.TemporaryDirectory(prefix="violet-bench-") as home:
        if before_start is not None:
            before_start(Path(home))
        env = {f"VIOLET_{name.upper()}_ADDR": f"127.0.0.1:{free_port()}" for name in SERVICES}
        env.update(VIOLET_HOME=home, VIOLET_SAYS_PER_MINUTE="100000", VIOLET_SAY_BURST="1000")
        # The compiled sandbox interpreter outlives the stack: compiling it is not a turn's cost.
        env.update(VIOLET_SANDBOX_CACHE_DIR=str(SANDBOX_CACHE))
        env.pop("ANTHROPIC_API_KEY", None)  # offline, unless `extra_env` says otherwise
        env.update(extra_env or {})
        os.environ.update(env)
        settings = CommonSettings()
        secret = "bench-" + uuid.uuid4().hex + uuid.uuid4().hex
        children = start(settings, env={**env, "VIOLET_SECRET": secret}, quiet=True)
        try:
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not ready(settings):
                if time.monotonic() > deadline:
                    raise SystemExit("The stack did not become ready for the benchmark.")
                time.sleep(0.2)
            pids = {name: child.pid for name, child in children.items()}
            yield LocalStack(settings, secret, Path(home), pids)
        finally:
            stop(children)


def measure_turns() -> tuple[Distribution, float]:
    """Starts a stack of real processes on free ports and times turns over the phone protocol."""
    with local_stack() as stack:
        began = time.perf_counter()
        turns = asyncio.run(_turn_latency(stack.live_url, stack.secret))
        elapsed = time.perf_counter() - began
    return turns, len(turns.samples_ms) / elapsed


def measure_trust() -> Figures:
    """Runs the memory-trust corpus through a stack of real processes."""
    made = corpus(TRUST_SEED, TRUST_PEOPLE, TRUST_ATTEMPTS_EACH, TRUST_FACTS_EACH)
    with CorpusWeb(made) as web:
        env = {"VIOLET_SEARCH_URL": web.search_url, "VIOLET_FETCH_BLOCK_PRIVATE": "false"}
        with local_stack(env) as stack:
            workspaces = stack.home / "workspaces"
            return asyncio.run(measure(made, stack.live_url, stack.token, web, workspaces))


def _plot(turns: Distribution, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6, 3.2))
    axes.hist(turns.samples_ms, bins=30, color="#7a5cc2")
    for p in (50, 99):
        axes.axvline(turns.percentile(p), color="black", linestyle="--", linewidth=1)
        axes.annotate(f"p{p}", (turns.percentile(p), axes.get_ylim()[1] * 0.9))
    axes.set_xlabel("say to answer (ms)")
    axes.set_ylabel("turns")
    axes.set_title("Turn latency, offline model, SQLite")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def measure_economy(data_dir: Path) -> dict[str, Economy]:
    """One long conversation per kind of main model, recorded by the local Messages API."""
    lines = locomo_lines(data_dir / "locomo_dev.json", ECONOMY_TURNS)
    economies = {}
    with local_messages_api() as url:
        for name, keeps in MODELS.items():
            script_promises(url, PROMISE_EVERY, keeps)
            talked = asyncio.run(talk(url, lines))
            economies[name] = figures(recorded_requests(url), talked.transcript)
    return economies


def _plot_economy(economies: dict[str, Economy], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (sizes, cached) = pyplot.subplots(
        2, 1, figsize=(7, 5), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    first = next(iter(economies.values()))
    turns = range(1, first.turns + 1)
    sizes.plot(turns, first.baseline, color="#999999", label="whole history, no fold")
    for (name, economy), colour in zip(economies.items(), ("#7a5cc2", "#2a9d8f"), strict=False):
        sizes.plot(turns, economy.sizes, color=colour, linewidth=0.7, label=f"model that {name}")
        shares = [
            read / size for read, size in zip(economy.cache_reads, economy.sizes, strict=True)
        ]
        cached.plot(turns, _rolling(shares, 25), color=colour, linewidth=1)
    sizes.set_yscale("log")
    sizes.set_ylabel("input tokens")
    sizes.set_title("The main call answering each turn, default window (30)")
    sizes.legend(fontsize=7, loc="upper left")
    cached.set_ylim(0, 1)
    cached.set_ylabel("read from cache\n(25-turn mean)")
    cached.set_xlabel("turn")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def _rolling(values: list[float], width: int) -> list[float]:
    means, total = [], 0.0
    for index, value in enumerate(values):
        total += value - (values[index - width] if index >= width else 0.0)
        means.append(total / min(index + 1, width))
    return means


@dataclass(frozen=True)
class Measured:
    """One section's part of the document, and its figures for the JSON summary line."""

    markdown: str
    summary: JsonObject


@dataclass(frozen=True)
class Section:
    name: str  # what `violet bench --only` names
    heading: str  # how its part of benchmarks.md begins
    run: Callable[[Path, Path], Measured]  # given the data folder and the output folder
    needs: tuple[str, ...] = ()  # the files of the data folder it reads


def _turns(data_dir: Path, out_dir: Path) -> Measured:
    turns, per_second = measure_turns()
    _plot(turns, out_dir / "turn-latency.png")
    return Measured(
        render_turns(turns, per_second),
        {"turns": {"p50_ms": turns.percentile(50), "p99_ms": turns.percentile(99)}},
    )


def _load(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_load

    found = bench_load.measure_load()
    bench_load.plot_load(found, out_dir / "people-at-once.png")
    return Measured(bench_load.render_load(found), {"load": [f.as_dict() for f in found]})


def _goals(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_load

    found = bench_load.measure_people(bench_load.GOAL_PEOPLE)
    return Measured(bench_load.render_goal(found), {"goals": found.as_dict()})


def _burst(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_load

    found = bench_load.measure_bursts(bench_load.burst_scripts())
    return Measured(bench_load.render_burst(found), {"burst": found.as_dict()})


def _cpu(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_load

    found = bench_load.measure_people(bench_load.CPU_PEOPLE)
    per_turn = {name: round(ms, 1) for name, ms in found.cpu_per_turn_ms().items()}
    return Measured(bench_load.render_cpu(found), {"cpu_ms_per_turn": per_turn})


def _idle(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_load

    found = bench_load.measure_idle()
    shares = {name: round(share, 3) for name, share in found.cpu.core_share().items()}
    return Measured(bench_load.render_idle(found), {"idle_core_share": shares})


def _reminders(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_reminders

    found = bench_reminders.measure_reminders()
    summary = {
        "pending": found.pending,
        "session_cpu_ms_per_idle_minute": {
            "without": round(found.session_ms_per_minute(found.idle_without)),
            "with": round(found.session_ms_per_minute(found.idle_with)),
        },
        "due_to_told_ms": {
            "p50": round(found.delays.percentile(50)),
            "p99": round(found.delays.percentile(99)),
        },
        "told": found.told,
        "due": found.due,
    }
    return Measured(bench_reminders.render_reminders(found), {"reminders": summary})


def _first(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_first

    found = bench_first.measure_first(data_dir)
    return Measured(bench_first.render_first(found), {"first_answers": found.as_dict()})


def _economy(data_dir: Path, out_dir: Path) -> Measured:
    economies = measure_economy(data_dir)
    _plot_economy(economies, out_dir / "context-economy.png")
    summary = {name: economy.summary() for name, economy in economies.items()}
    return Measured(render_context_economy(economies), {"economy": summary})


def _calls(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli import bench_calls

    found = bench_calls.measure_calls(data_dir)
    return Measured(bench_calls.render_calls(found), {"calls": found.as_dict()})


def _routing(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli.eval_routing import eval_routing

    routing = eval_routing(str(data_dir / "routing_dev.jsonl"))
    return Measured(render_routing(routing), {"routing": routing})


def _recall(data_dir: Path, out_dir: Path) -> Measured:
    from violet_cli.eval_memory import eval_memory

    memory = eval_memory(str(data_dir / "locomo_dev.json"))
    return Measured(render_memory_recall(memory), {"memory": memory})


def _trust(data_dir: Path, out_dir: Path) -> Measured:
    trust = measure_trust()
    return Measured(render_trust(trust), {"memory_trust": trust.as_dict()})


def _sandboxes(data_dir: Path, out_dir: Path) -> Measured:
    return Measured(sandbox_bench.render(sandbox_bench.measure()), {})


def _memory_scale(data_dir: Path, out_dir: Path) -> Measured:
    figures = measure_memory_scale(str(data_dir / "locomo_dev.json"))
    summary = {
        f.items: {
            "recall_p99_ms": percentile(f.unchanged_ms, 99),
            "after_capture_p99_ms": percentile(f.after_capture_ms, 99),
        }
        for f in figures
    }
    return Measured(render_memory_scale(figures), {"memory_scale": summary})


# The document's sections, in its order. A new benchmark is one more entry here.
SECTIONS = (
    Section("turns", "## Turns over the phone protocol", _turns),
    Section("load", "## People at once", _load),
    Section("goals", "## The throughput goals", _goals),
    Section("burst", "## Bursts", _burst),
    Section("cpu", "## CPU per turn", _cpu),
    Section("idle", "## Idle cost", _idle),
    Section("reminders", "## Reminders", _reminders),
    Section("first", "## First answers", _first, ("locomo_dev.json",)),
    Section("economy", "## Context economy", _economy, ("locomo_dev.json",)),
    Section("calls", "## Model calls per turn", _calls, ("locomo_dev.json",)),
    Section("routing", "## Routing", _routing, ("routing_dev.jsonl",)),
    Section("recall", "## Memory recall", _recall, ("locomo_dev.json",)),
    Section("memory", "## One person's memory at scale", _memory_scale, ("locomo_dev.json",)),
    Section("trust", "## Memory trust", _trust),
    Section("sandboxes", "## The sandbox", _sandboxes),
)


def selected(only: str, sections: Sequence[Section] = SECTIONS) -> list[Section]:
    """The sections a comma-separated list names, in the document's order; all when empty."""
    names = [name.strip() for name in only.split(",") if name.strip()]
    known = {section.name for section in sections}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"There is no benchmark section {', '.join(unknown)}; "
            f"choose from {', '.join(s.name for s in sections)}."
        )
    return [section for section in sections if not names or section.name in names]


def parts_of(document: str, sections: Sequence[Section] = SECTIONS) -> dict[str, str]:
    """Each section's part of an existing document, found by its heading. A `## ` heading no
    section owns starts a part written by hand, kept as `after:NAME` of the section before it
    (`after:` at the top), so a rerun of that section keeps it."""
    parts: dict[str, list[str]] = {}
    owner: str | None = None
    for line in document.splitlines():
        if line.startswith("## "):
            owned = next((s.name for s in sections if line.startswith(s.heading)), None)
            owner = owned or f"after:{(owner or '').removeprefix('after:')}"
        if owner is not None:
            parts.setdefault(owner, []).append(line)
    return {name: "\n".join(lines).strip() for name, lines in parts.items()}


def merge(previous: str, fresh: dict[str, str], sections: Sequence[Section] = SECTIONS) -> str:
    """The document with the sections just run in place of their old parts; the others, and
    the parts written by hand, are kept as they were."""
    kept = parts_of(previous, sections)
    body = [kept.get("after:")]
    for section in sections:
        body += [
            fresh.get(section.name) or kept.get(section.name),
            kept.get(f"after:{section.name}"),
        ]
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    ran = ", ".join(s.name for s in sections if s.name in fresh)
    header = f"""# Benchmarks

Written by `violet bench`, last run on {when} ({ran}), on {machine()}. Each section says
what it measured; `violet bench --only NAMES` reruns some sections and keeps the others as they
were. The machine is shared: read the distributions and ratios, not single numbers."""
    return "\n\n".join([header, *(part.strip() for part in body if part)]) + "\n"


def missing_data(data: str, only: str = "") -> list[str]:
    """The files the sections `only` names read that the data folder does not hold."""
    needed = {name for section in selected(only) for name in section.needs}
    return sorted(name for name in needed if not (Path(data) / name).is_file())


def run_benchmarks(data: str, out: str, only: str = "") -> int:
    """Runs the sections `only` names (all when empty), writes benchmarks.md and prints one
    JSON line with their figures."""
    data_dir, out_dir = Path(data), Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    document = out_dir / "benchmarks.md"
    fresh, summary = {}, {}
    for section in selected(only):
        measured = section.run(data_dir, out_dir)
        fresh[section.name] = measured.markdown
        summary.update(measured.summary)
        # Written after each section, so a long run that fails later keeps what it measured.
        previous = document.read_text() if document.exists() else ""
        document.write_text(merge(previous, fresh))
    print(json.dumps(summary))
    return 0


def render_economy(economies: dict[str, Economy]) -> str:
    def row(name: str, value: Callable[[Economy], str]) -> str:
        return f"| {name} | " + " | ".join(value(e) for e in economies.values()) + " |"

    first = next(iter(economies.values()))
    early = f"{EARLY_TURNS.start} to {EARLY_TURNS.stop - 1}"
    late = f"{first.late_turns.start} to {first.late_turns.stop - 1}"
    rows = [
        row(f"main call, turns {early}, mean tokens", lambda e: f"{e.mean_size(EARLY_TURNS):.0f}"),
        row(f"main call, turns {late}, mean tokens", lambda e: f"{e.mean_size(e.late_turns):.0f}"),
        row("late / early", lambda e: f"{e.size_ratio():.2f}"),
        row("main call, p50 / max tokens", lambda e: f"{_p50(e.sizes):.0f} / {max(e.sizes)}"),
        row(f"whole history at turn {first.turns}, tokens", lambda e: f"{e.baseline[-1]}"),
        row("fold calls per 100 turns", lambda e: f"{e.folds_per_100_turns:.1f}"),
        row("main calls with `cache_control`", lambda e: f"{e.cache_control_share:.1%}"),
        row("median stable prefix", lambda e: f"{e.median_stable_prefix:.1%}"),
        row("input read from the cache", lambda e: f"{e.cache_read_share:.1%}"),
    ]
    header = "| measure | " + " | ".join(f"model that {n}" for n in economies) + " |"
    divider = "|---|" + "---:|" * len(economies)
    return "\n".join([header, divider, *rows])


def _p50(values: list[int]) -> float:
    return Distribution([float(v) for v in values]).percentile(50)


def render_turns(turns: Distribution, per_second: float) -> str:
    return f"""## Turns over the phone protocol

{PEOPLE} people talk at once, {TURNS_EACH} messages each, one at a time, to a local stack of the
five services (offline model, SQLite, embedded vector store), through real websockets. Time is
from sending `say` to receiving Violet's answer.

| measure | turns | p50 ms | p90 ms | p99 ms |
|---|---:|---:|---:|---:|
{turns.row("say to answer")}

Throughput: {per_second:.1f} turns/s across the {PEOPLE} people.

![turn latency](turn-latency.png)
"""


def render_context_economy(economies: dict[str, Economy]) -> str:
    return f"""## Context economy

One person talks for {ECONOMY_TURNS:,} turns at the default window (30 messages), saying what
speaker A says in the LoCoMo conversations, one after another. The session service's own parts
(transcript, pins, fold and turn runner, on SQLite) run in process and call the model through the
real SDK, on the local Messages API server (`tests/support/messages_api.py`), which keeps the
configured models' documented rules, answers by the offline model's rules, caches prompts as
the API does (breakpoints, 5-minute lifetime, a 512-token minimum) and records every request
with its usage. Its main model records a promise every {PROMISE_EVERY} turns and either never
keeps one or keeps each on the turn before the next. Tokens are estimated as the 5.5 models'
tokenizer counts them, about 30% more than a quarter of the characters. Memory recall is a
stand-in returning up to
3 of the person's earlier sentences. "Whole history" is the same call holding every message so far
instead of the summary and the window. The stable prefix is the share of a main call, by
characters, in leading blocks identical to the previous main call's. The table counts every main
call (tool rounds and updates told too); the plot's lower panel, the call answering each turn.

{render_economy(economies)}

![context economy](context-economy.png)
"""


def render_routing(routing: JsonObject) -> str:
    return f"""## Routing (`violet eval routing`, routing_dev.jsonl)

| measure | value |
|---|---:|
| cases | {routing.get("cases")} |
| pre-filter top-1 | {routing.get("prefilter_top1", 0):.3f} |
| pre-filter top-3 | {routing.get("prefilter_top3", 0):.3f} |
| pick top-1 | {routing.get("pick_top1", 0):.3f} |
| most recently active, top-1 | {routing.get("recency_top1", 0):.3f} |
| most recently active, top-3 | {routing.get("recency_top3", 0):.3f} |
| new work: precision | {routing.get("new_precision", 0):.3f} |
| new work: recall | {routing.get("new_recall", 0):.3f} |
| p50 ms per decision | {routing.get("p50_ms", 0):.1f} |

{_in_sample(routing.get("cases_seen", 0), "cases")} Figures cross-validated by person (each
person scored by weights trained without them) are in `docs/routing.md`.
"""


def render_memory_recall(memory: JsonObject) -> str:
    categories = memory.get("by_category", {})
    category_rows = "\n".join(
        f"| {name} | {values.get('questions', '')} | {values['recall_at_1']:.3f} | "
        f"{values['recall_at_3']:.3f} | {values['recall_at_5']:.3f} |"
        for name, values in categories.items()
    )
    return f"""## Memory recall (`violet eval memory`, locomo_dev.json)

| measure | value |
|---|---:|
| questions | {memory.get("questions")} |
| recall@1 | {memory.get("recall_at_1", 0):.3f} |
| recall@3 | {memory.get("recall_at_3", 0):.3f} |
| recall@5 | {memory.get("recall_at_5", 0):.3f} |
| recall p50 ms | {memory.get("p50_ms", 0):.1f} |
| recall p99 ms | {memory.get("p99_ms", 0):.1f} |

| category | questions | R@1 | R@3 | R@5 |
|---|---:|---:|---:|---:|
{category_rows}

A dense-embedding baseline over raw turns (all-MiniLM-L6-v2, cosine) gets recall@1 .197 and
recall@5 .447 on the same data. {_in_sample(memory.get("conversations_seen", 0), "conversations")}
Figures cross-validated by conversation are in `docs/memory.md`.
"""


def _in_sample(seen: int, what: str) -> str:
    """Whether the shipped choices saw the evaluated file, as the evaluation says."""
    if not seen:
        return f"The shipped choices saw none of these {what}: the figures are out of sample."
    return f"The shipped choices saw {seen} of these {what}, so the figures are in-sample."


def render_trust(trust: Figures) -> str:
    def rows(counts: dict[str, int]) -> str:
        return "\n".join(f"| {name} | {count} |" for name, count in counts.items())

    figures = trust.as_dict()
    kept = trust.own_kept / max(1, trust.own_facts)
    recalled = trust.own_recalled / max(1, trust.own_facts)
    return f"""## Memory trust (planted memories, `violet_cli.trust`)

{trust.people} people at once, on a local stack (offline model, SQLite), each has Violet read
planted pages, search results and documents (corpus seed {TRUST_SEED}), tells their own facts,
asks for a sum and a note, then asks for their facts back and asks the questions the planted
claims answer ("What is my bank PIN?", ...). A planted claim counts wherever its marker shows,
however it was written (look-alike letters, fullwidth, spacing and invisible characters are
folded away first).

| measure | value |
|---|---:|
| planted attempts | {trust.attempts} |
| planted items on the memory page | {trust.planted_items} |
| questions the planted claims answer, asked | {trust.planted_questions} |
| answers repeating a planted claim | {trust.planted_answers} |
| own facts said | {trust.own_facts} |
| own facts kept on the memory page | {trust.own_kept} ({kept:.1%}) |
| own facts recalled in answers | {trust.own_recalled} ({recalled:.1%}) |
| Violet's outcomes (sums, notes) | {trust.outcomes} |
| Violet's outcomes kept as hers | {trust.outcomes_kept} |
| seconds for the whole run | {trust.seconds:.0f} |

| carrier | attempts |
|---|---:|
{rows(figures["by_carrier"])}

| trick | attempts |
|---|---:|
{rows(figures["by_trick"])}
"""
