"""Fault injection, for tests only: a process reaching a named point kills itself with SIGKILL, as
a machine that loses power would stop, when that point is armed.

`VIOLET_FAULT_FILE=PATH` arms the points named in PATH (whitespace-separated), read afresh at
each point, so a test can arm one in a stack that is already running and crash it at an exact
moment of a turn or of background work. Unset (always, outside the fault suite), a point costs
one environment lookup and does nothing.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ENV = "VIOLET_FAULT_FILE"


def fault_point(name: str) -> None:
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        armed = Path(path).read_text().split()
    except OSError:
        return
    if name in armed:
        os.write(2, f"fault point {name} reached: killing this process\n".encode())
        os.kill(os.getpid(), signal.SIGKILL)
