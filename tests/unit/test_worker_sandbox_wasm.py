"""The WebAssembly sandbox needs no privileges: it holds its limits in a process as locked down
as the chart's pods, where bubblewrap cannot start. Its interpreter is compiled once and kept,
a build that is not the pinned one is refused, and what a worker that died left is cleaned."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ci import unavailable
from tests.support.sandbox import SANDBOX_CACHE
from worker import wasi_python
from worker.folders import Folders
from worker.sandbox import Limits, SandboxUnavailable
from worker.sandbox_wasm import WasmSandbox, compiled_path

REPO = Path(__file__).resolve().parents[2]
LIMITS = Limits(timeout_s=2, memory_mb=256, disk_mb=16)

# Each limit, tried from inside a locked-down process.
PROGRAMS = {
    "runs": "print(17*23)",
    "network": "import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)",
    "processes": "import subprocess; subprocess.run(['/usr/bin/true'])",
    "memory": "block = bytearray(1024 ** 3)",
    "time": "while True: pass",
    "disk": "open('big', 'wb').write(b'x' * (64 * 1024 * 1024))",
    "files": "print(open('/etc/passwd').read())",
}

LOCKED_DOWN = """
import asyncio, json, shutil, subprocess, sys
from collections.abc import Iterator
from pathlib import Path
from worker.folders import Folders
from worker.sandbox import Limits
from worker.sandbox_wasm import WasmSandbox

cache, home, programs = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])

async def main():
    limits = Limits(timeout_s=2, memory_mb=256, disk_mb=16)
    sandbox = WasmSandbox(limits, cache, home / "runs")
    folder = Folders(home / "workspaces").of("ana")
    found = {
        "bwrap": shutil.which("bwrap"),
        "unshare": subprocess.run(["/usr/bin/unshare", "--user", "true"]).returncode,
        "bubblewrap": subprocess.run(
            ["/usr/bin/bwrap", "--unshare-user", "--ro-bind", "/", "/", "/bin/true"]
        ).returncode,
    }
    for name, code in programs.items():
        outcome = await sandbox.run(code, folder)
        found[name] = [outcome.stdout, outcome.problem(limits)]
    await sandbox.close()
    print(json.dumps(found))

asyncio.run(main())
"""


def test_it_holds_every_limit_where_namespaces_and_capabilities_are_refused(
    tmp_path: Path,
) -> None:
    setpriv = shutil.which("setpriv")
    if not (setpriv and Path("/usr/bin/unshare").exists()):
        unavailable("setpriv and unshare are not installed (apt-get install util-linux)")
    no_tools = tmp_path / "bin"
    no_tools.mkdir()
    command = [
        setpriv, "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all",
        "--ambient-caps=-all", "--",
        sys.executable, "-m", "tests.support.pod",
        sys.executable, "-c", LOCKED_DOWN, str(SANDBOX_CACHE), str(tmp_path), json.dumps(PROGRAMS),
    ]  # fmt: skip
    finished = subprocess.run(
        command,
        cwd=REPO,
        env={"PATH": str(no_tools)},  # no bwrap, no unshare to be found
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr
    found = json.loads(finished.stdout.splitlines()[-1])
    # The process can make no namespace: neither `unshare --user` nor bubblewrap starts.
    assert found["bwrap"] is None and found["unshare"] != 0 and found["bubblewrap"] != 0
    assert found["runs"] == ["391\n", None]
    for limit in ("network", "processes", "files"):
        assert found[limit][1].startswith("The code stopped with an error: "), limit
    assert found["memory"][1] == "The code stopped with an error: MemoryError"
    assert found["time"][1] == "The code ran longer than 2 seconds and was stopped."
    assert found["disk"][1] == "The code stopped with an error: OSError: [Errno 22] File too large"
    assert not list((tmp_path / "runs").rglob("big"))


async def prepared(sandbox: WasmSandbox) -> None:
    await sandbox.prepare()
    await sandbox.close()


async def test_the_interpreter_is_compiled_once_and_a_foreign_build_is_made_anew(
    tmp_path: Path,
) -> None:
    await prepared(WasmSandbox(LIMITS, SANDBOX_CACHE, tmp_path / "runs"))  # the tests' own
    cache = tmp_path / "cache"
    kept = compiled_path(cache)
    cache.mkdir()
    shutil.copy(compiled_path(SANDBOX_CACHE), kept)
    before = kept.stat().st_ino
    await prepared(WasmSandbox(LIMITS, cache, tmp_path / "runs"))
    assert kept.stat().st_ino == before  # found usable: not compiled again
    kept.write_bytes(b"not a module this Wasmtime made")
    again = WasmSandbox(LIMITS, cache, tmp_path / "runs")
    outcome = await again.run("print(17*23)", Folders(tmp_path / "workspaces").of("ana"))
    await again.close()
    assert outcome.stdout == "391\n" and kept.stat().st_size > 1_000_000


def test_a_build_other_than_the_pinned_one_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wasi_python, "RUNTIME_SHA256", "0" * 64)
    with pytest.raises(wasi_python.RuntimeUnavailable, match="is not the WASI build"):
        wasi_python._runtime_bytes()


async def test_a_lost_interpreter_is_a_plain_error_and_the_next_run_prepares_it(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    kept = compiled_path(cache)
    shutil.copy(compiled_path(SANDBOX_CACHE), kept)
    sandbox = WasmSandbox(LIMITS, cache, tmp_path / "runs")
    folder = Folders(tmp_path / "workspaces").of("ana")
    await sandbox.prepare()
    kept.unlink()  # e.g. the pod's /tmp cleaned under it
    with pytest.raises(SandboxUnavailable, match="^Running code is not available just now.$"):
        await sandbox.run("print(1)", folder)
    shutil.copy(compiled_path(SANDBOX_CACHE), kept)
    assert (await sandbox.run("print(1)", folder)).stdout == "1\n"
    await sandbox.close()


@contextlib.contextmanager
def held_by_a_live_worker(folder: Path) -> Iterator[None]:
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


async def test_what_a_worker_that_died_left_is_removed_and_a_live_ones_kept(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    dead, alive = runs / "worker-dead", runs / "worker-alive"
    for folder in (dead, alive):
        (folder / "run-1").mkdir(parents=True)
        (folder / "run-1" / "left.txt").write_text("half a run")
    with held_by_a_live_worker(alive):
        sandbox = WasmSandbox(LIMITS, SANDBOX_CACHE, runs)
        outcome = await sandbox.run("print(1)", Folders(tmp_path / "workspaces").of("ana"))
        assert outcome.stdout == "1\n"
        assert not dead.exists() and (alive / "run-1" / "left.txt").exists()
        [mine] = [p for p in runs.iterdir() if p != alive]
        assert mine.name.startswith("worker-") and os.listdir(mine) == [".lock"]
        await sandbox.close()
        assert not mine.exists()


async def test_a_program_cannot_pass_for_the_sandbox_failing(tmp_path: Path) -> None:
    sandbox = WasmSandbox(LIMITS, SANDBOX_CACHE, tmp_path / "runs")
    code = "import sys; print('sandbox: gone', file=sys.stderr); sys.exit(125)"
    outcome = await sandbox.run(code, Folders(tmp_path / "workspaces").of("ana"))
    await sandbox.close()
    assert outcome.exit_code == 1 and outcome.problem(LIMITS) == (
        "The code stopped with an error: sandbox: gone"
    )
