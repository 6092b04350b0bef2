"""The sandbox that needs no privileges: each program runs in CPython compiled to WebAssembly,
under Wasmtime, in a process of its own (`worker.wasi_python`).

It asks nothing of the kernel beyond starting a process, so it runs where bubblewrap cannot:
in a pod with every capability dropped under the RuntimeDefault seccomp profile, where user
namespaces and a fresh /proc are refused. The limits:
- network: WASI preview 1 gives the program no sockets;
- processes: WASI has no fork, exec or threads;
- memory: the store caps the program's linear memory (a MemoryError past it);
- time: the run's process is killed at the time limit, whatever the program waits on;
- disk: a fresh working folder per run under `runs`, gone when the run ends, which no file may
  outgrow and which the run may not outgrow as a whole (see `worker.wasi_python`); each worker
  process keeps its runs in a folder of its own, locked while it lives, so the folders of one
  that died mid-run are removed by the next;
- files: only that folder (/work) and the person's documents, read-only (/documents).

The interpreter is compiled once into `cache` (some seconds); `prepare` does it ahead of the
first run.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.metadata
import json
import logging
import math
import shutil
import sys
import tempfile
from asyncio.subprocess import Process
from pathlib import Path
from typing import IO

from worker.folders import PersonFolder
from worker.sandbox import (
    OPEN_FILES_LIMIT,
    Limits,
    RunOutcome,
    SandboxUnavailable,
    feed_and_wait,
)
from worker.wasi_python import RUNTIME_SHA256, UNAVAILABLE

log = logging.getLogger(__name__)

RUNNER = [sys.executable, "-I", "-m", "worker.wasi_python"]
LOCK = ".lock"


def compiled_path(cache: Path) -> Path:
    """The compiled module's file: one per interpreter build and Wasmtime release."""
    wasmtime = importlib.metadata.version("wasmtime")
    return cache / f"python-{RUNTIME_SHA256[:16]}-wasmtime-{wasmtime}.cwasm"


class WasmSandbox:
    def __init__(self, limits: Limits, cache: Path, runs: Path) -> None:
        """`cache`: where the compiled interpreter is kept; `runs`: where each run's working
        folder is made. Both must be writable by this service alone."""
        self.limits = limits
        self._compiled = compiled_path(cache)
        self._runs = runs
        self._prepared = False
        self._preparing = asyncio.Lock()
        self._mine: Path | None = None  # this process's folder under `runs`, once claimed
        self._lock: IO[str] | None = None
        # A runner started ahead, its interpreter loaded, waiting for the next run's job.
        self._spare: Process | None = None

    async def prepare(self) -> None:
        """Compiles the interpreter into the cache unless it is there, once per process, and
        starts the first run's runner, so that no run waits for an interpreter to load."""
        async with self._preparing:
            if self._prepared:
                return
            try:
                process = await asyncio.create_subprocess_exec(
                    *RUNNER,
                    "prepare",
                    str(self._compiled),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                    env={},
                )
                _, stderr = await process.communicate()
            except OSError as error:
                stderr, process = str(error).encode(), None
            if process is None or process.returncode != 0:
                log.error("the sandbox cannot be prepared", extra={"error": stderr.decode()})
                raise SandboxUnavailable("Running code is not available just now.")
            if self._mine is None:
                self._mine = await asyncio.to_thread(self._claim_runs_folder)
            self._prepared = True
        await self._start_spare()

    def _claim_runs_folder(self) -> Path:
        """A folder for this process's runs, locked for as long as it lives. Folders no process
        holds (left by one that died) are removed first."""
        self._runs.mkdir(mode=0o700, parents=True, exist_ok=True)
        for folder in self._runs.glob("worker-*"):
            try:
                with open(folder / LOCK, "a") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except (BlockingIOError, FileNotFoundError):
                continue  # a live process's, or removed meanwhile
            shutil.rmtree(folder, ignore_errors=True)
        # Locked before it gets the name the sweep above looks for.
        claiming = Path(tempfile.mkdtemp(dir=self._runs, prefix=".claiming-"))
        self._lock = open(claiming / LOCK, "w")  # noqa: SIM115 (held until the process ends)
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        mine = self._runs / f"worker-{claiming.name.removeprefix('.claiming-')}"
        claiming.rename(mine)
        return mine

    async def run(self, code: str, folder: PersonFolder) -> RunOutcome:
        await self.prepare()
        work = await asyncio.to_thread(self._new_working_folder)
        try:
            return await self._run_in(code, work, folder.documents.resolve())
        finally:
            await asyncio.to_thread(shutil.rmtree, work, ignore_errors=True)

    def _new_working_folder(self) -> Path:
        assert self._mine is not None, "prepared first"
        return Path(tempfile.mkdtemp(dir=self._mine, prefix="run-"))

    async def close(self) -> None:
        """Ends the runner started ahead and gives up this process's runs folder."""
        if self._spare is not None:
            await _discard(self._spare)
            self._spare = None
        if self._mine is not None:
            await asyncio.to_thread(shutil.rmtree, self._mine, ignore_errors=True)
            self._mine, self._prepared = None, False
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    async def _start_runner(self) -> Process:
        limits = self.limits
        try:
            return await asyncio.create_subprocess_exec(
                *RUNNER,
                "run",
                str(self._compiled),
                str(limits.memory_mb * 1024 * 1024),
                str(math.ceil(limits.timeout_s) + 1),
                str(limits.disk_mb * 1024 * 1024),
                str(OPEN_FILES_LIMIT),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={},  # nothing of the worker's environment (its secrets) reaches the run
            )
        except OSError as error:
            log.error("the sandbox cannot start", extra={"error": str(error)})
            raise SandboxUnavailable("Running code is not available just now.") from error

    async def _runner(self) -> Process:
        """The runner started ahead if it still waits, else a new one."""
        runner, self._spare = self._spare, None
        if runner is not None and runner.returncode is not None:
            await _discard(runner)
            runner = None
        return runner or await self._start_runner()

    async def _start_spare(self) -> None:
        """Starts the next run's runner, after a run, so that its loading is on no run's time."""
        if self._spare is None and self._prepared:
            with contextlib.suppress(SandboxUnavailable):
                self._spare = await self._start_runner()

    async def _run_in(self, code: str, work: Path, documents: Path) -> RunOutcome:
        try:
            return await self._run_with(await self._runner(), code, work, documents)
        finally:
            await self._start_spare()

    async def _run_with(
        self, process: Process, code: str, work: Path, documents: Path
    ) -> RunOutcome:
        job = json.dumps({"work": str(work), "documents": str(documents)})
        stdout, stderr, timed_out = await feed_and_wait(
            process, f"{job}\n".encode() + code.encode(), self.limits.timeout_s
        )
        if process.returncode == UNAVAILABLE:
            log.error("the sandbox failed", extra={"error": stderr.strip()})
            self._prepared = False  # its cache may be gone: the next run prepares again
            raise SandboxUnavailable("Running code is not available just now.")
        return RunOutcome(stdout, stderr, process.returncode or 0, timed_out)


async def _discard(process: Process) -> None:
    if process.returncode is None:
        process.kill()
    await process.communicate()
