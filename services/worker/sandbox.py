"""Running short Python for a person: no network, no other process, limits on time, memory and
disk, and of the files only the interpreter and that person's own documents (read-only).

Each run gets a fresh working folder of its own (a size-limited tmpfs at /work, its disk
quota), gone when the run ends, so nothing a program writes stays behind or fills the disk.

`Sandbox` is the interface; `BubblewrapSandbox` runs each program in fresh Linux namespaces
(Debian's `bubblewrap`) under resource limits (`prlimit`) and a seccomp filter that makes the
program its sandbox's only process (`worker.seccomp`). A deployment that wants each run in its
own Kubernetes Pod implements the same `run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from worker.folders import PersonFolder
from worker.seccomp import single_process_filter

log = logging.getLogger(__name__)

OUTPUT_LIMIT_BYTES = 20_000
FILE_LIMIT_BYTES = 16 * 1024 * 1024
TMP_LIMIT_BYTES = 32 * 1024 * 1024
OPEN_FILES_LIMIT = 256
NOBODY = "65534"
# Mount points for the program: its own working folder and, read-only, the person's documents.
WORK_MOUNT = "/work"
DOCUMENTS_MOUNT = "/documents"
# Host folders every program needs; each is bound read-only, or re-created as the same symlink.
SYSTEM_PATHS = ("/usr", "/bin", "/lib", "/lib64", "/sbin")


class SandboxUnavailable(Exception):
    """Code cannot be run on this server; the message says so in plain words."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    memory_mb: int
    # What one run may write in its working folder.
    disk_mb: int = 64


@dataclass(frozen=True)
class RunOutcome:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False

    def problem(self, limits: Limits) -> str | None:
        """What went wrong, in plain words; None when the program ended well."""
        if self.timed_out:
            unit = "second" if limits.timeout_s == 1 else "seconds"
            return f"The code ran longer than {limits.timeout_s:g} {unit} and was stopped."
        if self.exit_code == 0:
            return None
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        if lines:
            return f"The code stopped with an error: {lines[-1]}"
        return f"The code stopped with exit code {self.exit_code}."


class Sandbox(Protocol):
    async def run(self, code: str, folder: PersonFolder) -> RunOutcome:
        """Runs `code` (a whole Python program) with `folder`'s working folder as its own."""
        ...


class BubblewrapSandbox:
    def __init__(self, limits: Limits, hidden: tuple[Path, ...] = ()) -> None:
        """`hidden`: folders that must stay out of reach even if a bound path holds them
        (Violet's home, the workspace root)."""
        self.limits = limits
        self._hidden = tuple(path.resolve() for path in hidden)
        self._interpreter = Path(sys.executable).resolve()
        self._prefix = Path(sys.base_prefix).resolve()
        self._filter = single_process_filter()
        if self._filter is None:
            log.warning("no process limit for this architecture: only memory bounds processes")

    def command(self, folder: PersonFolder, filter_fd: int | None = None) -> list[str]:
        """The command line of one run; `filter_fd` is an open file holding the seccomp
        filter, when there is one."""
        timeout = math.ceil(self.limits.timeout_s)
        limits = [
            "prlimit",
            f"--as={self.limits.memory_mb * 1024 * 1024}",
            f"--cpu={timeout}",
            f"--fsize={FILE_LIMIT_BYTES}",
            f"--nofile={OPEN_FILES_LIMIT}",
            "--core=0",
            "--",
        ]
        isolation = [
            "bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--cap-drop", "ALL",
            "--uid", NOBODY,
            "--gid", NOBODY,
            "--hostname", "sandbox",
        ]  # fmt: skip
        return [
            *limits,
            *isolation,
            *self._system_binds(),
            *("--proc", "/proc", "--dev", "/dev"),
            *("--size", str(TMP_LIMIT_BYTES), "--tmpfs", "/tmp"),
            *("--size", str(self.limits.disk_mb * 1024 * 1024), "--perms", "0700"),
            *("--tmpfs", WORK_MOUNT),
            *("--ro-bind", str(folder.documents.resolve()), DOCUMENTS_MOUNT),
            *(("--seccomp", str(filter_fd)) if filter_fd is not None else ()),
            *("--chdir", WORK_MOUNT),
            *("--setenv", "HOME", WORK_MOUNT),
            *("--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin"),
            *("--setenv", "LANG", "C.UTF-8"),
            *(str(self._interpreter), "-I", "-B", "-"),
        ]

    def _system_binds(self) -> list[str]:
        binds: list[str] = []
        bound: list[Path] = []
        for name in SYSTEM_PATHS:
            path = Path(name)
            if path.is_symlink():
                binds += ["--symlink", str(path.readlink()), name]
            elif path.is_dir():
                binds += ["--ro-bind", name, name]
                bound.append(path)
        if not any(self._prefix.is_relative_to(path) for path in bound):
            binds += ["--ro-bind", str(self._prefix), str(self._prefix)]
            bound.append(self._prefix)
        for hidden in self._hidden:
            if any(hidden.is_relative_to(path) for path in bound):
                binds += ["--tmpfs", str(hidden)]
        return binds

    async def run(self, code: str, folder: PersonFolder) -> RunOutcome:
        try:
            with self._filter_file() as filter_fd:
                process = await asyncio.create_subprocess_exec(
                    *self.command(folder, filter_fd),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=() if filter_fd is None else (filter_fd,),
                )
        except OSError as error:
            log.error("the sandbox cannot start", extra={"error": str(error)})
            raise SandboxUnavailable("Running code is not available just now.") from error
        # Killing bwrap at the time limit ends everything inside: the program is its pid
        # namespace's init.
        stdout, stderr, timed_out = await feed_and_wait(
            process, code.encode(), self.limits.timeout_s
        )
        if process.returncode != 0 and stderr.startswith("bwrap:"):
            log.error("the sandbox failed", extra={"error": stderr.strip()})
            raise SandboxUnavailable("Running code is not available just now.")
        return RunOutcome(stdout, stderr, process.returncode or 0, timed_out)

    @contextlib.contextmanager
    def _filter_file(self) -> Iterator[int | None]:
        """The read end of a pipe holding the filter, for bubblewrap to load; closed here
        once the child has its own copy."""
        if self._filter is None:
            yield None
            return
        read, write = os.pipe()
        try:
            with open(write, "wb") as pipe:  # a few hundred bytes: well within its buffer
                pipe.write(self._filter)
            yield read
        finally:
            os.close(read)


class NoSandbox:
    """Where no sandbox can be made, code is refused rather than run unconfined."""

    async def run(self, code: str, folder: PersonFolder) -> RunOutcome:
        raise SandboxUnavailable("Running code is not set up on this server.")


async def feed_and_wait(
    process: asyncio.subprocess.Process, given: bytes, timeout_s: float
) -> tuple[str, str, bool]:
    """Writes `given` to the process's stdin and waits for it to end, killing it at the time
    limit; its capped stdout and stderr, and whether it ran out of time."""
    assert process.stdin and process.stdout and process.stderr
    reading = asyncio.gather(capped_output(process.stdout), capped_output(process.stderr))
    timed_out = False
    try:
        process.stdin.write(given)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await process.stdin.drain()
        process.stdin.close()
        await asyncio.wait_for(process.wait(), timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    stdout, stderr = await reading
    return stdout, stderr, timed_out


async def capped_output(stream: asyncio.StreamReader) -> str:
    """The first OUTPUT_LIMIT_BYTES of a stream, read to its end so the writer never blocks."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < OUTPUT_LIMIT_BYTES:
            kept += chunk[: OUTPUT_LIMIT_BYTES - len(kept)]
    return kept.decode("utf-8", errors="replace")


def choose_sandbox(limits: Limits, hidden: tuple[Path, ...]) -> Sandbox:
    if shutil.which("bwrap") and shutil.which("prlimit"):
        return BubblewrapSandbox(limits, hidden)
    log.warning("bubblewrap is not installed; code will not be run (apt-get install bubblewrap)")
    return NoSandbox()
