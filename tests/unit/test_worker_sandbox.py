"""The sandbox: code runs, but cannot reach the network, another person's folder or Violet's
own state, and cannot run past its time, memory or disk; each failure is a plain error.

Every test of a limit runs against both backends: CPython compiled to WebAssembly (the default,
which needs no privileges) and bubblewrap (Linux namespaces)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.ci import unavailable
from tests.support.sandbox import SANDBOX_CACHE
from tests.support.waiting import eventually
from violet.models import ToolCall
from violet.models import tools as t
from worker.folders import Folders
from worker.sandbox import BubblewrapSandbox, Limits, NoSandbox, Sandbox
from worker.sandbox_wasm import WasmSandbox
from worker.toolbox import Asker, Toolbox

LIMITS = Limits(timeout_s=2, memory_mb=256, disk_mb=16)
# How far past its quota a WebAssembly run may write before its watch stops it: what it writes
# between two looks at its folder, here with room for a loaded machine.
WASM_DISK_OVERSHOOT_MB = 32


def bubblewrap_installed() -> None:
    if not (shutil.which("bwrap") and shutil.which("prlimit")):
        unavailable("bubblewrap is not installed (apt-get install bubblewrap)")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "secret").write_text("the stack's signing secret")
    return tmp_path


@pytest.fixture
def folders(home: Path) -> Folders:
    return Folders(home / "workspaces")


@pytest.fixture(params=["wasm", "bubblewrap"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "bubblewrap":
        bubblewrap_installed()
    return request.param


@pytest.fixture
async def sandbox(backend: str, home: Path, folders: Folders) -> AsyncIterator[Sandbox]:
    if backend == "bubblewrap":
        yield BubblewrapSandbox(LIMITS, hidden=(home, folders.root))
        return
    wasm = WasmSandbox(LIMITS, SANDBOX_CACHE, home / "sandbox-runs")
    await wasm.prepare()  # as the worker does at start: no run pays for a cold interpreter
    yield wasm
    await wasm.close()


async def test_code_runs_and_prints(sandbox: Sandbox, folders: Folders) -> None:
    outcome = await sandbox.run("print(17*23)", folders.of("ana"))
    assert (outcome.stdout, outcome.exit_code, outcome.problem(LIMITS)) == ("391\n", 0, None)


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server


async def test_the_network_is_out_of_reach(
    sandbox: Sandbox, folders: Folders, listening: socket.socket
) -> None:
    port = listening.getsockname()[1]
    for code in (
        f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)",
        f"import socket; socket.socket().connect(('127.0.0.1', {port}))",  # no name to look up
    ):
        outcome = await sandbox.run(code, folders.of("ana"))
        assert outcome.exit_code != 0
        assert "The code stopped with an error:" in (outcome.problem(LIMITS) or "")
    with pytest.raises(BlockingIOError):  # no connection ever arrived
        listening.accept()


async def test_another_persons_folder_and_violets_state_are_out_of_reach(
    sandbox: Sandbox, folders: Folders, home: Path
) -> None:
    theirs = folders.of("bob").documents / "diary.md"
    theirs.write_text("bob's diary")
    for path in (theirs, home / "secret", folders.root, SANDBOX_CACHE):
        outcome = await sandbox.run(
            f"import os; print(os.listdir({str(path)!r}) "
            f"if os.path.isdir({str(path)!r}) "
            f"else open({str(path)!r}).read())",
            folders.of("ana"),
        )
        assert outcome.exit_code != 0, path
        assert "FileNotFoundError" in (outcome.problem(LIMITS) or ""), path


async def test_documents_are_readable_and_the_working_folder_lasts_one_run(
    sandbox: Sandbox, folders: Folders
) -> None:
    mine = folders.of("ana")
    (mine.documents / "numbers.csv").write_text("1\n2\n3\n")
    code = (
        "import os\n"
        "total = sum(int(x) for x in open('/documents/numbers.csv'))\n"
        "open('total.txt', 'w').write(str(total))\n"
        "print(os.getcwd(), total, open('total.txt').read())\n"
    )
    outcome = await sandbox.run(code, mine)
    assert outcome.stdout == "/work 6 6\n"
    again = await sandbox.run("import os; print(os.listdir('.'))", mine)
    assert again.stdout == "[]\n"
    assert sorted(path.name for path in mine.root.rglob("*")) == ["documents", "numbers.csv"]
    refused = await sandbox.run("open('/documents/numbers.csv', 'w').write('x')", mine)
    assert refused.exit_code != 0 and "Error" in (refused.problem(LIMITS) or "")
    assert (mine.documents / "numbers.csv").read_text() == "1\n2\n3\n"


async def test_a_run_writes_no_more_than_its_disk_quota(
    backend: str, sandbox: Sandbox, folders: Folders, home: Path
) -> None:
    code = (
        "block = b'x' * (1024 * 1024)\n"
        "try:\n"
        "    for n in range(192):\n"
        "        with open(f'part-{n}', 'wb') as part:\n"
        "            part.write(block)\n"
        "        print('wrote', n + 1, flush=True)\n"
        "except OSError as error:\n"
        "    print('refused', error.errno)\n"
    )
    outcome = await sandbox.run(code, folders.of("ana"))
    written = [int(line.split()[1]) for line in outcome.stdout.splitlines() if "wrote" in line]
    if backend == "bubblewrap":  # a size-limited tmpfs: the write past it fails
        assert max(written) <= LIMITS.disk_mb and outcome.stdout.endswith("refused 28\n")
    else:  # a watched folder: the run is stopped as soon as the watch sees it past its quota
        assert max(written) <= LIMITS.disk_mb + WASM_DISK_OVERSHOOT_MB < 192
        assert outcome.problem(LIMITS) == (
            "The code stopped with an error: OSError: the code wrote more than its working "
            "folder may hold (16 MB or 10000 files) and was stopped"
        )
    assert not await asyncio.to_thread(lambda: list(home.rglob("part-*")))


async def test_code_that_runs_too_long_is_stopped(sandbox: Sandbox, folders: Folders) -> None:
    started = time.monotonic()
    outcome = await sandbox.run("while True: pass", folders.of("ana"))
    assert outcome.timed_out and time.monotonic() - started < LIMITS.timeout_s + 5
    assert outcome.problem(LIMITS) == "The code ran longer than 2 seconds and was stopped."


async def test_code_that_takes_too_much_memory_fails(sandbox: Sandbox, folders: Folders) -> None:
    outcome = await sandbox.run("block = bytearray(1024 ** 3)", folders.of("ana"))
    assert outcome.problem(LIMITS) == "The code stopped with an error: MemoryError"


async def test_the_code_starts_no_other_process(sandbox: Sandbox, folders: Folders) -> None:
    code = (
        "import os, subprocess\n"
        "try:\n"
        "    if os.fork() == 0:\n"
        "        os._exit(0)\n"
        "    print('forked')\n"
        "except (AttributeError, OSError):\n"  # WASI has no fork at all
        "    print('no fork')\n"
        "try:\n"
        "    subprocess.run(['/usr/bin/true'])\n"
        "    print('spawned')\n"
        "except OSError:\n"
        "    print('no spawn')\n"
    )
    outcome = await sandbox.run(code, folders.of("ana"))
    assert outcome.stdout.splitlines() == ["no fork", "no spawn"]


async def test_the_code_sees_nothing_of_the_workers_environment(
    sandbox: Sandbox, folders: Folders, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIOLET_SECRET", "the worker's own secret, not the code's")
    outcome = await sandbox.run("import os; print(dict(os.environ))", folders.of("ana"))
    assert outcome.exit_code == 0 and "VIOLET" not in outcome.stdout


async def test_with_bubblewrap_the_code_is_its_only_process_though_threads_run(
    home: Path, folders: Folders
) -> None:
    bubblewrap_installed()
    sandbox = BubblewrapSandbox(LIMITS, hidden=(home, folders.root))
    code = (
        "import os, subprocess, threading\n"
        "forks = 0\n"
        "try:\n"
        "    for _ in range(500):\n"
        "        if os.fork() == 0:\n"
        "            os._exit(0)\n"
        "        forks += 1\n"
        "except OSError as error:\n"
        "    print('fork', forks, error.errno)\n"
        "try:\n"
        "    subprocess.run(['/usr/bin/true'])\n"
        "except OSError as error:\n"
        "    print('spawn', error.errno)\n"
        "found = []\n"
        "worker = threading.Thread(target=lambda: found.append(17 * 23))\n"
        "worker.start(); worker.join()\n"
        "print('thread', found[0])\n"
    )
    outcome = await sandbox.run(code, folders.of("ana"))
    assert outcome.stdout.splitlines() == ["fork 0 11", "spawn 11", "thread 391"]  # EAGAIN


async def test_code_stopped_at_its_time_leaves_nothing_running(
    sandbox: Sandbox, folders: Folders
) -> None:
    mine = folders.of("ana")
    code = "import time\nwhile True:\n    time.sleep(61)\n"
    outcome = await sandbox.run(code, mine)
    assert outcome.timed_out
    # Each backend's processes carry the person's documents folder on their command line.
    marker = str(mine.documents.resolve())
    # A process's end is no event here: look for 5 s at most.
    await eventually(lambda: not _processes_with(marker), "no process left", timeout_s=5.0)


def _processes_with(marker: str) -> list[Path]:
    found = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in path.read_bytes().decode(errors="replace"):
                found.append(path)
        except OSError:
            continue  # ended meanwhile
    return found


async def test_the_tool_reports_a_time_out_as_a_plain_error(
    sandbox: Sandbox, folders: Folders
) -> None:
    toolbox = Toolbox(
        web=None,
        folders=folders,
        sandbox=sandbox,
        limits=LIMITS,
        mailer=None,
        store=None,
        other_work=None,
    )  # type: ignore[arg-type]
    call = ToolCall("toolu_1", t.RUN_PYTHON, {"code": "import time; time.sleep(60)"})
    result = await toolbox.run(call, Asker("t_1", "ana", []))
    assert result.is_error and result.content.startswith("The code ran longer than")


async def test_without_a_sandbox_code_is_refused_in_plain_words(folders: Folders) -> None:
    toolbox = Toolbox(
        web=None,
        folders=folders,
        sandbox=NoSandbox(),
        limits=LIMITS,
        mailer=None,
        store=None,
        other_work=None,
    )  # type: ignore[arg-type]
    result = await toolbox.run(
        ToolCall("toolu_1", t.RUN_PYTHON, {"code": "print(1)"}), Asker("t_1", "ana", [])
    )
    assert result.is_error and result.content == "Running code is not set up on this server."
