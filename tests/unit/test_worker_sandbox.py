"""The sandbox: code runs, but cannot reach the network, another person's folder or Violet's
own state, and cannot run past its time or memory; each failure is a plain error."""

from __future__ import annotations

import asyncio
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ci import unavailable
from violet.models import ToolCall
from violet.models import tools as t
from worker.folders import Folders
from worker.sandbox import BubblewrapSandbox, Limits, NoSandbox
from worker.toolbox import Asker, Toolbox

LIMITS = Limits(timeout_s=2, memory_mb=256, disk_mb=16)


@pytest.fixture(scope="module", autouse=True)
def bubblewrap() -> None:
    if not (shutil.which("bwrap") and shutil.which("prlimit")):
        unavailable("bubblewrap is not installed (apt-get install bubblewrap)")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "secret").write_text("the stack's signing secret")
    return tmp_path


@pytest.fixture
def folders(home: Path) -> Folders:
    return Folders(home / "workspaces")


@pytest.fixture
def sandbox(home: Path, folders: Folders) -> BubblewrapSandbox:
    return BubblewrapSandbox(LIMITS, hidden=(home, folders.root))


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


async def test_code_runs_and_prints(sandbox: BubblewrapSandbox, folders: Folders) -> None:
    outcome = await sandbox.run("print(17*23)", folders.of("ana"))
    assert (outcome.stdout, outcome.exit_code, outcome.problem(LIMITS)) == ("391\n", 0, None)


async def test_the_network_is_out_of_reach(
    sandbox: BubblewrapSandbox, folders: Folders, listening: int
) -> None:
    code = f"import socket; socket.create_connection(('127.0.0.1', {listening}), timeout=2)"
    outcome = await sandbox.run(code, folders.of("ana"))
    assert outcome.exit_code != 0
    assert "The code stopped with an error:" in (outcome.problem(LIMITS) or "")
    assert "Connection refused" in outcome.stderr or "unreachable" in outcome.stderr


async def test_another_persons_folder_and_violets_state_are_out_of_reach(
    sandbox: BubblewrapSandbox, folders: Folders, home: Path
) -> None:
    theirs = folders.of("bob").documents / "diary.md"
    theirs.write_text("bob's diary")
    for path in (theirs, home / "secret", folders.root):
        outcome = await sandbox.run(
            f"import os; print(os.listdir({str(path)!r}) "
            f"if os.path.isdir({str(path)!r}) "
            f"else open({str(path)!r}).read())",
            folders.of("ana"),
        )
        assert outcome.exit_code != 0, path
        assert "FileNotFoundError" in (outcome.problem(LIMITS) or ""), path


async def test_documents_are_readable_and_the_working_folder_lasts_one_run(
    sandbox: BubblewrapSandbox, folders: Folders
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
    assert "Read-only file system" in refused.stderr


async def test_a_run_writes_no_more_than_its_disk_quota(
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
    code = (
        "import os\n"
        "block = b'x' * (1024 * 1024)\n"
        "written = 0\n"
        "try:\n"
        "    for n in range(192):\n"
        "        with open(f'part-{n}', 'wb') as part:\n"
        "            part.write(block)\n"
        "        written += 1\n"
        "except OSError as error:\n"
        "    print(written, error.errno)\n"
    )
    outcome = await sandbox.run(code, folders.of("ana"))
    written, error = outcome.stdout.split()
    assert int(written) <= LIMITS.disk_mb and error == "28"  # ENOSPC
    assert not list(folders.root.rglob("part-*"))


async def test_code_that_runs_too_long_is_stopped(
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
    started = time.monotonic()
    outcome = await sandbox.run("while True: pass", folders.of("ana"))
    assert outcome.timed_out and time.monotonic() - started < LIMITS.timeout_s + 5
    assert outcome.problem(LIMITS) == "The code ran longer than 2 seconds and was stopped."


async def test_code_that_takes_too_much_memory_fails(
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
    outcome = await sandbox.run("block = bytearray(1024 ** 3)", folders.of("ana"))
    assert outcome.problem(LIMITS) == "The code stopped with an error: MemoryError"


async def test_the_code_is_its_only_process_though_threads_run(
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
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
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
    marker = f"{61 + time.time() % 1:.6f}"
    code = f"import time\nwhile True:\n    time.sleep({marker})\n"
    outcome = await sandbox.run(code, folders.of("ana"))
    assert outcome.timed_out
    await asyncio.sleep(0.5)
    assert not _processes_with(marker)


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
    sandbox: BubblewrapSandbox, folders: Folders
) -> None:
    toolbox = Toolbox(
        web=None, folders=folders, sandbox=sandbox, limits=LIMITS, mailer=None, store=None
    )  # type: ignore[arg-type]
    call = ToolCall("toolu_1", t.RUN_PYTHON, {"code": "import time; time.sleep(60)"})
    result = await toolbox.run(call, Asker("t_1", "ana", []))
    assert result.is_error and result.content.startswith("The code ran longer than")


async def test_without_a_sandbox_code_is_refused_in_plain_words(folders: Folders) -> None:
    toolbox = Toolbox(
        web=None, folders=folders, sandbox=NoSandbox(), limits=LIMITS, mailer=None, store=None
    )  # type: ignore[arg-type]
    result = await toolbox.run(
        ToolCall("toolu_1", t.RUN_PYTHON, {"code": "print(1)"}), Asker("t_1", "ana", [])
    )
    assert result.is_error and result.content == "Running code is not set up on this server."
