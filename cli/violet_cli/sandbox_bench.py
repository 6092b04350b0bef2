"""The sandbox benchmark (part of `violet bench`): what one run of code costs with each backend,
what compiling the WebAssembly interpreter costs, and each limit shown held.

Every limit is tried with a program that tests it, on each backend, and the table says what
happened to it, in the sandbox's own words.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from violet_cli.percentiles import percentile
from worker.folders import Folders
from worker.sandbox import BubblewrapSandbox, Limits, RunOutcome, Sandbox
from worker.sandbox_wasm import WasmSandbox

RUNS = 60
# Runs come seconds apart in a work session; this gap lets the runner started ahead be ready.
GAP_S = 0.3
LIMITS = Limits(timeout_s=2, memory_mb=256, disk_mb=16)
DISK_PROGRAM = """\
block = b"x" * (1024 * 1024)
for n in range(192):
    with open(f"part-{n}", "wb") as part:
        part.write(block)
"""


@dataclass(frozen=True)
class Probe:
    limit: str
    program: str
    # Whether the outcome shows the limit held.
    held: Callable[[RunOutcome], bool]


def _failed(outcome: RunOutcome) -> bool:
    return outcome.exit_code != 0 or outcome.timed_out


def probes(port: int, elsewhere: Path) -> list[Probe]:
    return [
        Probe(
            "network",
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)",
            _failed,
        ),
        Probe("processes", "import subprocess; subprocess.run(['/usr/bin/true'])", _failed),
        Probe("memory", "block = bytearray(1024 ** 3)", lambda o: "MemoryError" in o.stderr),
        Probe("time", "while True: pass", lambda o: o.timed_out),
        Probe("disk", DISK_PROGRAM, _failed),
        Probe("files", f"print(open({str(elsewhere)!r}).read())", _failed),
    ]


@dataclass
class BackendFigures:
    name: str
    runs_ms: list[float] = field(default_factory=list)
    limits: dict[str, tuple[bool, str]] = field(default_factory=dict)
    compile_s: float | None = None
    cached_prepare_ms: float | None = None
    load_average: float = 0.0


def _said(outcome: RunOutcome) -> str:
    return outcome.problem(LIMITS) or "ran to its end"


async def _measure(name: str, sandbox: Sandbox, folders: Folders) -> BackendFigures:
    figures = BackendFigures(name)
    folder = folders.of("bench")
    for _ in range(RUNS):
        await asyncio.sleep(GAP_S)
        started = time.perf_counter()
        outcome = await sandbox.run("print(17*23)", folder)
        figures.runs_ms.append((time.perf_counter() - started) * 1000)
        assert outcome.stdout == "391\n", outcome
    elsewhere = folders.of("someone else").documents / "diary.md"
    elsewhere.write_text("not yours")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        for probe in probes(listener.getsockname()[1], elsewhere):
            outcome = await sandbox.run(probe.program, folder)
            held = probe.held(outcome)
            if probe.limit == "network":
                try:
                    listener.accept()[0].close()
                    held = False
                except BlockingIOError:
                    pass
            if probe.limit == "disk":
                held = held and not list(folders.root.rglob("part-*"))
            figures.limits[probe.limit] = (held, _said(outcome))
    return figures


async def measure_sandboxes() -> list[BackendFigures]:
    with tempfile.TemporaryDirectory(prefix="violet-sandbox-bench-") as scratch:
        root = Path(scratch)
        folders = Folders(root / "workspaces")
        wasm = WasmSandbox(LIMITS, root / "cache", root / "runs")
        started = time.perf_counter()
        await wasm.prepare()
        compile_s = time.perf_counter() - started
        again = WasmSandbox(LIMITS, root / "cache", root / "runs")
        started = time.perf_counter()
        await again.prepare()
        cached_ms = (time.perf_counter() - started) * 1000
        found = [await _measure("wasm (default)", again, folders)]
        await again.close()
        found[0].compile_s, found[0].cached_prepare_ms = compile_s, cached_ms
        found[0].load_average = os.getloadavg()[0]
        if shutil.which("bwrap") and shutil.which("prlimit"):
            bubblewrap = BubblewrapSandbox(LIMITS, hidden=(root,))
            found.append(await _measure("bubblewrap", bubblewrap, folders))
        return found


def measure() -> list[BackendFigures]:
    return asyncio.run(measure_sandboxes())


def render(found: list[BackendFigures]) -> str:
    runs = "\n".join(
        f"| {f.name} | {len(f.runs_ms)} | {percentile(f.runs_ms, 50):.0f} | "
        f"{percentile(f.runs_ms, 90):.0f} | {percentile(f.runs_ms, 99):.0f} |"
        for f in found
    )
    limits = "\n".join(
        f"| {limit} | "
        + " | ".join(
            ("held: " if f.limits[limit][0] else "NOT HELD: ")
            + f.limits[limit][1].replace("|", "/")
            for f in found
        )
        + " |"
        for limit in found[0].limits
    )
    wasm = found[0]
    return f"""## The sandbox (`violet_cli.sandbox_bench`)

One run of `print(17*23)`, {RUNS} times, {GAP_S:g} s apart, from the call to the outcome, with
each backend (limits: {LIMITS.timeout_s:g} s, {LIMITS.memory_mb} MiB, {LIMITS.disk_mb} MiB of
disk), while the machine's load average was {wasm.load_average:.1f}. Compiling the WebAssembly
interpreter into an empty cache took {wasm.compile_s:.1f} s; with the compiled module cached,
getting ready took {wasm.cached_prepare_ms:.0f} ms. A WebAssembly run starts a process (loaded
ahead of the run, between runs) and a fresh CPython; a bubblewrap run starts the host's Python
in fresh namespaces.

| backend | runs | p50 ms | p90 ms | p99 ms |
|---|---:|---:|---:|---:|
{runs}

Each limit tried with a program that tests it (a connection to a listening loopback port, a
subprocess, 1 GiB of memory, an endless loop, 192 MiB written in 1 MiB files, another person's
document by its path):

| limit | {" | ".join(f.name for f in found)} |
|---|{"---|" * len(found)}
{limits}"""
