"""The sandbox that needs no privileges: each program runs in CPython compiled to WebAssembly,
under Wasmtime, in a process of its own (`worker.wasi_python`).

It asks nothing of the kernel beyond starting a process, so it runs where bubblewrap cannot:
in a pod with every capability dropped under the RuntimeDefault seccomp profile, where user
namespaces and a fresh /proc are refused. The limits:
- network: WASI preview 1 gives the program no sockets;
- processes: WASI has no fork, exec or threads;
- memory: the store caps the program's linear memory (a MemoryError past it);
- time: the run's process is killed at the time limit, whatever the program waits on;
- disk: a fresh working folder per run under `runs/`, gone when the run ends, which no file may
  outgrow and which the run may not outgrow as a whole (see `worker.wasi_python`);
- files: only that folder (/work) and the person's documents, read-only (/documents).

The interpreter is compiled once into `cache` (some seconds); `prepare` does it ahead of the
first run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import shutil
import sys
import tempfile
from pathlib import Path

from worker.folders import PersonFolder
from worker.sandbox import (
    OPEN_FILES_LIMIT,
    Limits,
    RunOutcome,
    SandboxUnavailable,
    _capped,
)
from worker.wasi_python import UNAVAILABLE

log = logging.getLogger(__name__)

RUNNER = [sys.executable, "-I", "-m", "worker.wasi_python"]


class WasmSandbox:
    def __init__(self, limits: Limits, cache: Path, runs: Path) -> None:
        """`cache`: where the compiled interpreter is kept; `runs`: where each run's working
        folder is made. Both must be writable by this service alone."""
        self.limits = limits
        self._cache = cache
        self._runs = runs
        self._prepared = False
        self._preparing = asyncio.Lock()

    async def prepare(self) -> None:
        """Compiles the interpreter into the cache unless it is there; once per process."""
        async with self._preparing:
            if self._prepared:
                return
            process = await asyncio.create_subprocess_exec(
                *RUNNER,
                "prepare",
                str(self._cache),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env={},
            )
            _, stderr = await process.communicate()
            if process.returncode != 0:
                log.error("the sandbox cannot be prepared", extra={"error": stderr.decode()})
                raise SandboxUnavailable("Running code is not available just now.")
            self._prepared = True

    async def run(self, code: str, folder: PersonFolder) -> RunOutcome:
        await self.prepare()
        with self._working_folder() as work:
            return await self._run_in(code, work, folder.documents)

    @contextlib.contextmanager
    def _working_folder(self):  # type: ignore[no-untyped-def]
        self._runs.mkdir(mode=0o700, parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=self._runs, prefix="run-"))
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)

    async def _run_in(self, code: str, work: Path, documents: Path) -> RunOutcome:
        limits = self.limits
        process = await asyncio.create_subprocess_exec(
            *RUNNER,
            "run",
            str(self._cache),
            str(work),
            str(documents.resolve()),
            str(limits.memory_mb * 1024 * 1024),
            str(math.ceil(limits.timeout_s) + 1),
            str(limits.disk_mb * 1024 * 1024),
            str(OPEN_FILES_LIMIT),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={},  # nothing of the worker's environment (its secrets) reaches the run
        )
        assert process.stdin and process.stdout and process.stderr
        reading = asyncio.gather(_capped(process.stdout), _capped(process.stderr))
        timed_out = False
        try:
            process.stdin.write(code.encode())
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await process.stdin.drain()
            process.stdin.close()
            await asyncio.wait_for(process.wait(), limits.timeout_s)
        except TimeoutError:
            timed_out = True
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        stdout, stderr = await reading
        if process.returncode == UNAVAILABLE:
            log.error("the sandbox failed", extra={"error": stderr.strip()})
            self._prepared = False  # its cache may be gone: the next run prepares again
            raise SandboxUnavailable("Running code is not available just now.")
        return RunOutcome(stdout, stderr, process.returncode or 0, timed_out)
