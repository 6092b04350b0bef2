"""People at once (part of `violet bench`): many people connected through real websockets to a
local stack of real processes, each telling a fact of their own, chatting, then asking it back.

Each person follows a script over about a minute: their fact ("My locker number is 4817."), a
few chat lines, then the question ("What is my locker number?"). Like a person, each waits for
Violet's answer before saying the next thing, and otherwise keeps to the schedule. Counted over
the phone protocol: every say should get exactly one `message` with its `reply_to`, so answers
are counted per say (duplicates, missing), and a fact counts as recalled when the answer to its
question quotes the value. The CPU time of each service process (and of this client) is read
before and after; idle cost is the same reading with everyone connected and silent.

Bursts (`burst`) are the same people at once, each saying things of their own in words of their
own (the fact and the question each in one of several phrasings people use), each next say a
random pause after the previous answer arrives rather than on a schedule. The stack then writes
its spans to a trace file, and memory's capture spans say how long each turn took from its
stored answer to recallable (`violet.capture.answer_to_recallable_ms`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import websockets

from violet.models import JsonObject
from violet_cli.bench import Distribution, LocalStack, local_stack, machine
from violet_cli.bench_cpu import CpuReading, CpuUse, cpu_between, read_cpu

SIZES = (50, 100, 200, 500)
GOAL_PEOPLE = 300
CPU_PEOPLE = 50
IDLE_PEOPLE = 500
IDLE_S = 30.0
# After the last hello, the idle reading starts this much later.
CONNECTED_SETTLE_S = 5.0
SEED = 18
CHATS = 2
# Each person's first say falls in the first FIRST_SAY_WITHIN_S seconds; then one say every
# GAP_S seconds (later if the previous answer is late): four says in about a minute.
FIRST_SAY_WITHIN_S = 15.0
GAP_S = 15.0
ANSWER_TIMEOUT_S = 180.0
CONNECT_TIMEOUT_S = 120.0
CONNECTING_AT_ONCE = 50
# Listened for after the last answer, so a duplicate answer arriving late is still seen.
LATE_ANSWERS_S = 3.0
# After the load, background work (fact capture) is waited for until the services together
# use less than QUIET_SHARE of a core, at most SETTLE_LIMIT_S seconds; its CPU counts too.
QUIET_SHARE = 0.1
SETTLE_LIMIT_S = 90.0
CLIENT = "bench client"
# Memory's capture spans carry each turn's time from its stored answer to recallable.
RECALLABLE_ATTRIBUTE = "violet.capture.answer_to_recallable_ms"
SERVICE_ORDER = ("gateway", "session", "router", "memory", "worker")

# The goals of the throughput work, and the memory service's CPU per turn before it.
GOAL_P99_MS = 3000.0
GOAL_RECALLED = 0.98
# Bursts (issue 45): nearly every fact back, and each turn recallable soon after its answer.
GOAL_BURST_RECALLED = 0.995
GOAL_RECALLABLE_P99_MS = 2000.0
# CPU per turn (issue 30): the five services together, and the two that spend most of it.
GOAL_CPU_MS = {"all five services": 60.0, "session": 12.0, "memory": 40.0}
GOAL_IDLE_SESSION_SHARE = 0.10

# Bursts (issue 30): each person says BURST_SAYS things (the fact, chat, the question), each next
# one a uniformly random pause in BURST_PAUSE_S after the previous answer. 8 says so the question
# comes at least 7 x 8 = 56 s (about 84 s on average) after the fact; the first say within one
# mean pause, so 300 people offer about 300 / 12 = 25 says/s from the start, for about 2 minutes.
BURST_PEOPLE = 300
BURST_SAYS = 8
BURST_PAUSE_S = (8.0, 16.0)
BURST_FIRST_SAY_WITHIN_S = 12.0

THINGS = (
    "locker number",
    "gym door code",
    "bike lock code",
    "desk number",
    "parking space",
    "badge number",
    "hotel room",
    "storage unit",
)
CHAT_LINES = (
    "The weather was lovely this morning.",
    "Work was busy but fine today.",
    "The train was a little late again.",
    "We had pasta for dinner last night.",
    "The garden looks green after the rain.",
    "My sister called me this afternoon.",
)
# A burst's chat lines: WHO DID WHEN, each said by one person only (10 x 12 x 16 = 1920 lines).
WHO = (
    "My cousin",
    "Our neighbour",
    "The new intern",
    "My old teacher",
    "A friend from school",
    "The baker downstairs",
    "My sister",
    "Our landlord",
    "The bus driver",
    "My running partner",
)
DID = (
    "painted the fence",
    "baked rye bread",
    "lost an umbrella",
    "started a podcast",
    "adopted a kitten",
    "fixed a bicycle",
    "planted tomatoes",
    "learned to juggle",
    "went to Lisbon",
    "sold an old piano",
    "won a pub quiz",
    "sang in a choir",
)
WHEN = (
    "this morning",
    "last night",
    "on Sunday",
    "yesterday afternoon",
    "before lunch",
    "after work",
    "during the storm",
    "near the market",
    "for the first time",
    "again today",
    "without telling anyone",
    "in the rain",
    "with great care",
    "by accident",
    "just for fun",
    "on a whim",
)


# How people tell a fact and ask for it back, one of each per person ({thing}, {value}).
FACT_PHRASINGS = (
    "My {thing} is {value}.",
    "By the way, my {thing} is {value}.",
    "Remember that my {thing} is {value}.",
    "Just so you know, my {thing} is {value} now.",
    "Note this: my {thing} is {value}",
)
QUESTION_PHRASINGS = (
    "What is my {thing}?",
    "What's my {thing} again?",
    "Do you remember my {thing}?",
    "what was my {thing}",
    "Can you tell me my {thing}?",
    "Do you still know my {thing}?",
    "Which {thing} did I give you?",
)


@dataclass(frozen=True)
class Script:
    person: str
    value: str
    lines: tuple[str, ...]
    start_s: float
    gap_s: float
    # When set, say n (from 1) is due pauses_s[n - 1] after the answer to say n - 1 arrives.
    pauses_s: tuple[float, ...] = ()

    def due(self, number: int, began: float, answered_at: float) -> float:
        """When say `number` is due: on the schedule, or a pause after the previous answer."""
        if number and self.pauses_s:
            return answered_at + self.pauses_s[number - 1]
        return began + self.start_s + number * self.gap_s


def scripts(
    people: int,
    seed: int = SEED,
    gap_s: float = GAP_S,
    first_say_within_s: float = FIRST_SAY_WITHIN_S,
) -> list[Script]:
    """One script per person: a fact with a value of their own, chat, then the question."""
    rng = random.Random(seed)
    values = rng.sample(range(1000, 10000), people)
    run = f"{rng.getrandbits(32):08x}"
    made = []
    for number, value in enumerate(values):
        thing = THINGS[number % len(THINGS)]
        chat = rng.sample(CHAT_LINES, CHATS)
        lines = (f"My {thing} is {value}.", *chat, f"What is my {thing}?")
        start_s = rng.uniform(0, first_say_within_s)
        made.append(Script(f"load-{run}-{number}", str(value), lines, start_s, gap_s))
    return made


def burst_scripts(
    people: int = BURST_PEOPLE,
    seed: int = SEED,
    says: int = BURST_SAYS,
    pauses_s: tuple[float, float] = BURST_PAUSE_S,
    first_say_within_s: float = BURST_FIRST_SAY_WITHIN_S,
) -> list[Script]:
    """People who talk in bursts: a fact, says - 2 chat lines no one else says, the question;
    each next say a uniformly random pause in `pauses_s` after the previous answer."""
    rng = random.Random(seed)
    chats = says - 2
    own = [f"{who} {did} {when}." for who in WHO for did in DID for when in WHEN]
    lines = rng.sample(own, people * chats)
    made = []
    for number, script in enumerate(scripts(people, seed, first_say_within_s=first_say_within_s)):
        chat = lines[number * chats : (number + 1) * chats]
        pauses = tuple(rng.uniform(*pauses_s) for _ in range(says - 1))
        said = {"thing": THINGS[number % len(THINGS)], "value": script.value}
        fact = rng.choice(FACT_PHRASINGS).format(**said)
        question = rng.choice(QUESTION_PHRASINGS).format(**said)
        made.append(replace(script, lines=(fact, *chat, question), pauses_s=pauses))
    return made


def recalled(answer: str, value: str) -> bool:
    """Whether an answer quotes the value (as a whole number, not inside another)."""
    return re.search(rf"(?<!\d){re.escape(value)}(?!\d)", answer) is not None


@dataclass(frozen=True)
class Tally:
    """How the says were answered: each should have exactly one answer."""

    said: int
    answered: int
    duplicates: int
    missing: int
    strays: int

    @property
    def each_once(self) -> bool:
        return self.answered == self.said and self.duplicates == 0 and self.strays == 0


def tally(said: Sequence[str], reply_tos: Sequence[str]) -> Tally:
    """Counts answers per say: said holds each say's id, reply_tos each answer's `reply_to`.
    Answers beyond the first to a say are duplicates; answers to no say are strays."""
    counts = Counter(reply_tos)
    wanted = set(said)
    answered = sum(1 for said_id in wanted if counts[said_id] > 0)
    return Tally(
        said=len(said),
        answered=answered,
        duplicates=sum(count - 1 for said_id, count in counts.items() if said_id in wanted),
        missing=len(wanted) - answered,
        strays=sum(count for said_id, count in counts.items() if said_id not in wanted),
    )


def add(tallies: Sequence[Tally]) -> Tally:
    return Tally(
        said=sum(t.said for t in tallies),
        answered=sum(t.answered for t in tallies),
        duplicates=sum(t.duplicates for t in tallies),
        missing=sum(t.missing for t in tallies),
        strays=sum(t.strays for t in tallies),
    )


class Phone:
    """One person's websocket: every frame is read, answers are kept per say."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self._socket = socket
        self.reply_tos: list[str] = []
        self.errors: Counter[str] = Counter()
        self._answers: dict[str, asyncio.Future[tuple[float, str]]] = {}
        self.last_answer_at = 0.0

    def _answer(self, said_id: str) -> asyncio.Future[tuple[float, str]]:
        return self._answers.setdefault(said_id, asyncio.get_running_loop().create_future())

    async def listen(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for raw in self._socket:
                self._read(json.loads(raw))

    def _read(self, frame: JsonObject) -> None:
        if frame.get("type") == "error":
            self.errors[str(frame.get("code"))] += 1
        if frame.get("type") != "message" or "reply_to" not in frame:
            return
        said_id = str(frame["reply_to"])
        self.reply_tos.append(said_id)
        self.last_answer_at = time.perf_counter()
        answer = self._answer(said_id)
        if not answer.done():
            answer.set_result((self.last_answer_at, str(frame.get("text", ""))))

    async def say(self, said_id: str, text: str) -> tuple[float, str] | None:
        """Says text; the answer's latency in ms and its text, or None if none came in time."""
        answer = self._answer(said_id)
        sent = time.perf_counter()
        try:
            await self._socket.send(json.dumps({"type": "say", "id": said_id, "text": text}))
            arrived, said = await asyncio.wait_for(asyncio.shield(answer), ANSWER_TIMEOUT_S)
        except (TimeoutError, websockets.ConnectionClosed):
            return None  # counted as missing
        return (arrived - sent) * 1000, said

    async def close(self) -> None:
        await self._socket.close()


@dataclass
class PersonRun:
    said: list[str] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    fact_recalled: bool = False


async def connect(url: str, token: str, gate: asyncio.Semaphore) -> Phone:
    async with gate:
        socket = await websockets.connect(
            url, open_timeout=CONNECT_TIMEOUT_S, ping_interval=None, max_queue=None
        )
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        async with asyncio.timeout(CONNECT_TIMEOUT_S):
            while json.loads(await socket.recv()).get("type") != "welcome":
                continue
        return Phone(socket)


async def connect_all(url: str, tokens: Sequence[str]) -> list[Phone]:
    gate = asyncio.Semaphore(CONNECTING_AT_ONCE)
    return list(await asyncio.gather(*(connect(url, token, gate) for token in tokens)))


async def follow(phone: Phone, script: Script, began: float) -> PersonRun:
    """One person's script, one say at a time, each when the script says it is due."""
    run = PersonRun()
    answered_at = began
    for number, line in enumerate(script.lines):
        due = script.due(number, began, answered_at)
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        said_id = f"{script.person}-{number}"
        run.said.append(said_id)
        run.sent_at.append(time.perf_counter())
        answered = await phone.say(said_id, line)
        answered_at = time.perf_counter()  # or when the person gave up waiting
        if answered is None:
            continue
        latency_ms, text = answered
        run.latencies_ms.append(latency_ms)
        if number == len(script.lines) - 1:
            run.fact_recalled = recalled(text, script.value)
    return run


@dataclass
class LoadFigures:
    people: int
    latency: Distribution
    seconds: float
    tally: Tally
    facts_recalled: int
    errors: Counter[str]
    cpu: CpuUse
    settle_s: float
    load_average: float
    # From the first say sent to the last.
    saying_s: float = 0.0
    # From each turn's stored answer to its words recallable, read off memory's spans (bursts).
    recallable: Distribution | None = None

    @property
    def turns_per_second(self) -> float:
        return self.tally.answered / max(1e-9, self.seconds)

    @property
    def offered_per_second(self) -> float:
        """Says sent per second, as the people sent them (they wait for answers)."""
        return self.tally.said / max(1e-9, self.saying_s)

    @property
    def recalled_share(self) -> float:
        return self.facts_recalled / max(1, self.people)

    @property
    def recalls_missed(self) -> int:
        """Questions whose answer did not quote the fact, or that got no answer."""
        return self.people - self.facts_recalled

    def cpu_per_turn_ms(self) -> dict[str, float]:
        return self.cpu.per_turn_ms(self.tally.answered)

    def as_dict(self) -> JsonObject:
        return {
            "people": self.people,
            "p50_ms": round(self.latency.percentile(50)),
            "p90_ms": round(self.latency.percentile(90)),
            "p99_ms": round(self.latency.percentile(99)),
            "turns_per_s": round(self.turns_per_second, 2),
            "says_offered_per_s": round(self.offered_per_second, 2),
            "said": self.tally.said,
            "answered": self.tally.answered,
            "duplicates": self.tally.duplicates,
            "missing": self.tally.missing,
            "strays": self.tally.strays,
            "facts_recalled": self.facts_recalled,
            "recalls_missed": self.recalls_missed,
            "errors": dict(self.errors),
            "cpu_ms_per_turn": {k: round(v, 1) for k, v in self.cpu_per_turn_ms().items()},
            **self._recallable_figures(),
        }

    def _recallable_figures(self) -> JsonObject:
        if self.recallable is None:
            return {}
        return {
            "recallable_turns": len(self.recallable.samples_ms),
            "answer_to_recallable_p50_ms": round(self.recallable.percentile(50)),
            "answer_to_recallable_p99_ms": round(self.recallable.percentile(99)),
        }


def reading(services: Mapping[str, int]) -> CpuReading:
    """CPU so far of each service (with what it started) and of this client alone: the
    services are this process's children, so they are not counted twice."""
    return read_cpu({name: services[name] for name in SERVICE_ORDER}, {CLIENT: os.getpid()})


async def settle(services: Mapping[str, int]) -> float:
    """Waits until the services are quiet (background work done); the seconds it took."""
    began = time.monotonic()
    previous = reading(services)
    while time.monotonic() - began < SETTLE_LIMIT_S:
        await asyncio.sleep(1.0)
        current = reading(services)
        shares = cpu_between(previous, current).core_share()
        if sum(share for name, share in shares.items() if name != CLIENT) < QUIET_SHARE:
            break
        previous = current
    return time.monotonic() - began


async def people_at_once(
    live_url: str,
    token: Callable[[str], str],
    services: Mapping[str, int],
    made: Sequence[Script],
) -> LoadFigures:
    """Everyone of `made` connected at once, following their scripts; `services` holds each
    service's process id."""
    await settle(services)  # the stack's own start is not the load's cost
    load_average = os.getloadavg()[0]
    phones = await connect_all(live_url, [token(s.person) for s in made])
    listeners = [asyncio.create_task(phone.listen()) for phone in phones]
    before: CpuReading = reading(services)
    began = time.perf_counter()
    runs = await asyncio.gather(
        *(follow(phone, script, began) for phone, script in zip(phones, made, strict=True))
    )
    await asyncio.sleep(LATE_ANSWERS_S)
    last = max([began, *(phone.last_answer_at for phone in phones)])
    await asyncio.gather(*(phone.close() for phone in phones))
    await asyncio.gather(*listeners)
    settle_s = await settle(services)
    cpu = cpu_between(before, reading(services))
    counted = add([tally(r.said, phone.reply_tos) for r, phone in zip(runs, phones, strict=True)])
    errors: Counter[str] = Counter()
    for phone in phones:
        errors.update(phone.errors)
    sent = [at for run in runs for at in run.sent_at] or [began]
    return LoadFigures(
        people=len(made),
        latency=Distribution([ms for run in runs for ms in run.latencies_ms] or [0.0]),
        seconds=last - began,
        tally=counted,
        facts_recalled=sum(run.fact_recalled for run in runs),
        errors=errors,
        cpu=cpu,
        settle_s=settle_s,
        load_average=load_average,
        saying_s=max(sent) - min(sent),
    )


def measure_people(people: int) -> LoadFigures:
    """A fresh stack, `people` people at once."""
    return measure_scripts(scripts(people))


def measure_scripts(made: Sequence[Script]) -> LoadFigures:
    """A fresh stack, everyone of `made` at once."""
    with local_stack() as stack:
        return asyncio.run(people_at_once(stack.live_url, stack.token, stack.pids, made))


def measure_bursts(made: Sequence[Script]) -> LoadFigures:
    """`measure_scripts`, the stack writing its spans to a file: how long each turn took from
    its stored answer to recallable is read off memory's capture spans."""
    with tempfile.TemporaryDirectory(prefix="violet-bench-traces-") as folder:
        traces = Path(folder) / "spans.jsonl"
        with local_stack({"VIOLET_TRACE_FILE": str(traces)}) as stack:
            found = asyncio.run(people_at_once(stack.live_url, stack.token, stack.pids, made))
        return replace(found, recallable=answer_to_recallable(traces))


def answer_to_recallable(traces: Path) -> Distribution:
    """Each capture's time from its stored answer to recallable, in ms, from a trace file."""
    samples = []
    for line in traces.read_text().splitlines():
        span = json.loads(line)
        waited = span.get("attributes", {}).get(RECALLABLE_ATTRIBUTE)
        if span.get("service") == "memory" and waited is not None:
            samples.append(float(waited))
    return Distribution(samples or [0.0])


def measure_load(sizes: Sequence[int] = SIZES) -> list[LoadFigures]:
    return [measure_people(size) for size in sizes]


@dataclass(frozen=True)
class IdleFigures:
    people: int
    cpu: CpuUse
    load_average: float


async def silent(stack: LocalStack, people: int, seconds: float) -> IdleFigures:
    await settle(stack.pids)
    load_average = os.getloadavg()[0]
    tokens = [stack.token(s.person) for s in scripts(people)]
    phones = await connect_all(stack.live_url, tokens)
    listeners = [asyncio.create_task(phone.listen()) for phone in phones]
    await asyncio.sleep(CONNECTED_SETTLE_S)  # connecting is not idling
    before = reading(stack.pids)
    await asyncio.sleep(seconds)
    cpu = cpu_between(before, reading(stack.pids))
    await asyncio.gather(*(phone.close() for phone in phones))
    await asyncio.gather(*listeners)
    return IdleFigures(people, cpu, load_average)


def measure_idle(people: int = IDLE_PEOPLE, seconds: float = IDLE_S) -> IdleFigures:
    with local_stack() as stack:
        return asyncio.run(silent(stack, people, seconds))


# --- the document ----------------------------------------------------------------------------


def measured_on(load_average: float) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    return f"Measured on {when}, on {machine()}, load average {load_average:.1f} at the start."


STACK = (
    "Each person connects through a real websocket to a local stack of the five services "
    "(offline model, SQLite, embedded vector store)"
)
COUNTING = (
    "Time is from sending `say` to "
    "the `message` that answers it. A fact counts as recalled when the answer quotes its value; "
    "every say should have exactly one answer (`reply_to`), counted over the phone protocol "
    f"(a person waits at most {ANSWER_TIMEOUT_S:.0f} s for an answer before going on; a say still "
    f"unanswered {LATE_ANSWERS_S:.0f} s after the last answer is missing)."
)
SCENARIO = (
    f"{STACK}, then, over about a minute, tells a fact of "
    'their own ("My locker number is 4817.", a different value for each person), says '
    f'{CHATS} chat lines, and asks the fact back ("What is my locker number?"): one say every '
    f"{GAP_S:.0f} s, the first within {FIRST_SAY_WITHIN_S:.0f} s, each waiting for the previous "
    "answer. Facts are captured in the background, so the question comes at least "
    f"{GAP_S * (CHATS + 1):.0f} s and {CHATS} turns after the fact. {COUNTING}"
)
_LEAST_S, _MOST_S = BURST_PAUSE_S
BURST_SCENARIO = (
    f"{STACK}, fresh for this run, and says {BURST_SAYS} things of their own: a fact "
    '("My locker number is 4817.", a different value for each person, in one of '
    f"{len(FACT_PHRASINGS)} phrasings), "
    f'{BURST_SAYS - 2} chat lines nobody else says ("{WHO[0]} {DID[0]} {WHEN[0]}."), then the '
    f'question ("What is my locker number?", "Can you tell me my locker number?", ...: one of '
    f"{len(QUESTION_PHRASINGS)} phrasings). The first say comes within "
    f"{BURST_FIRST_SAY_WITHIN_S:.0f} s; each next one a uniformly random {_LEAST_S:.0f} to "
    f"{_MOST_S:.0f} s after the previous answer arrives, not on a clock. So the question comes "
    f"at least {(BURST_SAYS - 1) * _LEAST_S:.0f} s (about "
    f"{(BURST_SAYS - 1) * (_LEAST_S + _MOST_S) / 2:.0f} s on average) and {BURST_SAYS - 2} turns "
    "after the "
    "fact, and while answers are quick each person offers one say every "
    f"{(_LEAST_S + _MOST_S) / 2:.0f} s. {COUNTING} A recall is missed when the answer to the "
    "question does not quote the value, or no answer came."
)


COLUMNS: dict[str, Callable[[LoadFigures], object]] = {
    "people": lambda f: f.people,
    "says": lambda f: f.tally.said,
    "says offered/s": lambda f: f"{f.offered_per_second:.1f}",
    "p50 ms": lambda f: f"{f.latency.percentile(50):.0f}",
    "p90 ms": lambda f: f"{f.latency.percentile(90):.0f}",
    "p99 ms": lambda f: f"{f.latency.percentile(99):.0f}",
    "turns/s": lambda f: f"{f.turns_per_second:.1f}",
    "answered": lambda f: f.tally.answered,
    "duplicates": lambda f: f.tally.duplicates,
    "missing": lambda f: f.tally.missing,
    "facts recalled": lambda f: f"{f.facts_recalled} ({f.recalled_share:.0%})",
    "recalls missed": lambda f: f.recalls_missed,
    "seconds": lambda f: f"{f.seconds:.0f}",
}
LOAD_COLUMNS = [name for name in COLUMNS if name not in {"says offered/s", "recalls missed"}]


def load_table(found: Sequence[LoadFigures], columns: Sequence[str] = LOAD_COLUMNS) -> str:
    """A row per run of the figures `columns` names (keys of COLUMNS)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---:|" * len(columns)]
    lines += ["| " + " | ".join(str(COLUMNS[c](f)) for c in columns) + " |" for f in found]
    return "\n".join(lines)


def render_load(found: Sequence[LoadFigures]) -> str:
    load = max((f.load_average for f in found), default=0.0)
    fewest = min((f.people for f in found), default=0)
    return f"""## People at once (`violet_cli.bench_load`)

{measured_on(load)} {SCENARIO}
Each size runs on a fresh stack.

{load_table(found)}

Each person says {CHATS + 2} things in about a minute, so {fewest} people offer
about {_offered(fewest):.1f} says/s: while the stack keeps up, turns/s is
that rate, and beyond it, the stack's capacity. {_errors_line(found)}

![people at once](people-at-once.png)
"""


def _offered(people: int) -> float:
    """Says per second that many people offer, by the script's schedule."""
    return people * (CHATS + 2) / (FIRST_SAY_WITHIN_S + GAP_S * (CHATS + 1))


def _errors_line(found: Sequence[LoadFigures]) -> str:
    errors: Counter[str] = Counter()
    for figures in found:
        errors.update(figures.errors)
    if not errors:
        return "No `error` frame came."
    return "`error` frames: " + ", ".join(f"{code} {n}" for code, n in sorted(errors.items())) + "."


def _verdict(met: bool) -> str:
    return "met" if met else "not met"


def turn_goal_rows(found: LoadFigures) -> list[tuple[str, str, bool]]:
    """(goal, what was measured, whether it is met) for the goals on answers: each say answered
    once, the p99 wait, facts recalled."""
    t = found.tally
    p50, p99 = found.latency.percentile(50), found.latency.percentile(99)
    return [
        (
            "every say answered exactly once",
            f"{t.answered} of {t.said} answered, {t.duplicates} duplicates, {t.missing} missing",
            t.each_once,
        ),
        (
            f"p99 say to answer at most {GOAL_P99_MS / 1000:.0f} s",
            f"p99 {p99:.0f} ms, p50 {p50:.0f} ms",
            p99 <= GOAL_P99_MS,
        ),
        (
            f"at least {GOAL_RECALLED:.0%} of facts recalled",
            f"{found.facts_recalled} of {found.people} ({found.recalled_share:.1%}), "
            f"{found.recalls_missed} recalls missed",
            found.recalled_share >= GOAL_RECALLED,
        ),
    ]


def cpu_goal_rows(found: LoadFigures) -> list[tuple[str, str, bool]]:
    """(goal, what was measured, whether it is met) for CPU per turn."""
    per_turn = found.cpu_per_turn_ms()
    spent = {**per_turn, "all five services": sum(per_turn[name] for name in SERVICE_ORDER)}
    return [
        (
            f"{name} at most {most:.0f} ms of CPU per turn",
            f"{spent[name]:.1f} ms",
            spent[name] <= most,
        )
        for name, most in GOAL_CPU_MS.items()
    ]


def goal_table(rows: Sequence[tuple[str, str, bool]]) -> str:
    lines = [f"| {goal} | {measured} | {_verdict(met)} |" for goal, measured, met in rows]
    return "\n".join(["| goal | measured | |", "|---|---|---|", *lines])


def render_goal(found: LoadFigures) -> str:
    return f"""## The throughput goals: {found.people} people at once

{measured_on(found.load_average)} {SCENARIO}

{goal_table(turn_goal_rows(found))}

Throughput {found.turns_per_second:.1f} turns/s; the last answer came {found.seconds:.0f} s
after the first say. {_errors_line([found])}
"""


BURST_COLUMNS = [name for name in COLUMNS if name != "turns/s"]


def burst_goal_rows(found: LoadFigures) -> list[tuple[str, str, bool]]:
    """The goals of the bursts: each say answered once and quickly, nearly every fact recalled,
    and each turn recallable soon after its answer."""
    answered, _, _ = turn_goal_rows(found)
    t = found.tally
    p50, p99 = found.latency.percentile(50), found.latency.percentile(99)
    rows = [
        answered,
        (
            f"p99 say to answer at most {GOAL_P99_MS / 1000:.0f} s",
            f"p99 {p99:.0f} ms, p50 {p50:.0f} ms",
            p99 <= GOAL_P99_MS and t.each_once,
        ),
        (
            f"at least {GOAL_BURST_RECALLED:.1%} of facts recalled",
            f"{found.facts_recalled} of {found.people} ({found.recalled_share:.1%}), "
            f"{found.recalls_missed} recalls missed",
            found.recalled_share >= GOAL_BURST_RECALLED,
        ),
    ]
    if found.recallable is not None:
        ready = found.recallable
        rows.append(
            (
                f"p99 answer to recallable at most {GOAL_RECALLABLE_P99_MS / 1000:.0f} s",
                f"p99 {ready.percentile(99):.0f} ms, p50 {ready.percentile(50):.0f} ms, over "
                f"{len(ready.samples_ms)} turns",
                ready.percentile(99) <= GOAL_RECALLABLE_P99_MS,
            )
        )
    return rows


def render_burst(found: LoadFigures) -> str:
    return f"""## Bursts: {found.people} people who talk in bursts

{measured_on(found.load_average)} {BURST_SCENARIO}

{load_table([found], BURST_COLUMNS)}

{goal_table(burst_goal_rows(found))}

Answer to recallable is read off memory's capture spans (`violet.capture.answer_to_recallable_ms`):
from the moment the session stored a turn's answer (its clock) to the moment memory committed the
turn with the person's words recallable (memory's clock, the same machine's here). The stack
writes every span to a file for this section, which costs some CPU of its own.

While answers are quick, {found.people} people offer about
{found.people / ((_LEAST_S + _MOST_S) / 2):.0f} says/s; says offered/s is what they sent over the
{found.saying_s:.0f} s from the first say to the last (people wait for answers, so a slow stack
is offered less). The last answer came
{found.seconds:.0f} s after the first say. {_errors_line([found])}
"""


def render_cpu(found: LoadFigures) -> str:
    per_turn = found.cpu_per_turn_ms()
    wall = found.cpu.wall_s
    total = sum(per_turn[name] for name in SERVICE_ORDER)
    services_share = sum(found.cpu.seconds[name] for name in SERVICE_ORDER) / wall
    rows = "\n".join(
        f"| {name} | {per_turn[name]:.1f} | {per_turn[name] / max(1e-9, total):.0%} | "
        f"{found.cpu.seconds[name] / wall:.0%} |"
        for name in (*SERVICE_ORDER, CLIENT)
    )
    return f"""## CPU per turn

{measured_on(found.load_average)} A fixed load: the people-at-once script above with
{found.people} people ({found.tally.answered} turns answered in {found.seconds:.0f} s). Each
service process's CPU time (user and system, its descendants included, from `/proc/PID/stat`) is
read before the first say and after the load, once background work has settled (the services
together under {QUIET_SHARE:.0%} of a core; that took {found.settle_s:.0f} s), and divided by the
turns answered. The bench client (the {found.people} websockets) shares the machine, so it is
measured too. The reading spans {wall:.0f} s, connected but silent time included (see the idle
cost below). The router is asked only when work starts; these turns start none.

| process | CPU ms per turn | share of the services' CPU | share of a core over the reading |
|---|---:|---:|---:|
{rows}
| all five services | {total:.1f} | 100% | {services_share:.0%} |

{goal_table(cpu_goal_rows(found))}
"""


def render_idle(found: IdleFigures) -> str:
    shares = found.cpu.core_share()
    rows = "\n".join(f"| {name} | {shares[name]:.1%} |" for name in (*SERVICE_ORDER, CLIENT))
    met = _verdict(shares["session"] < GOAL_IDLE_SESSION_SHARE)
    return f"""## Idle cost: {found.people} people connected and silent

{measured_on(found.load_average)} {found.people} people connect through real websockets (each
says `hello`), {CONNECTED_SETTLE_S:.0f} s pass, then nobody says anything for
{found.cpu.wall_s:.0f} s. The table is each process's share of one core over that time (CPU
time from `/proc/PID/stat`).
Goal: the session service under {GOAL_IDLE_SESSION_SHARE:.0%} of a core ({met}).

| process | share of a core |
|---|---:|
{rows}
"""


def plot_load(found: Sequence[LoadFigures], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    people = [f.people for f in found]
    figure, (latency, rate) = pyplot.subplots(1, 2, figsize=(8, 3.2))
    for p, style in ((50, "-o"), (99, "--o")):
        seconds = [f.latency.percentile(p) / 1000 for f in found]
        latency.plot(people, seconds, style, color="#7a5cc2", label=f"p{p}")
    latency.set_xlabel("people at once")
    latency.set_ylabel("say to answer (s)")
    latency.legend(fontsize=8)
    rate.plot(people, [f.turns_per_second for f in found], "-o", color="#2a9d8f")
    rate.set_xlabel("people at once")
    rate.set_ylabel("turns/s")
    figure.suptitle("People at once, offline model, SQLite")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
