"""CPU time of processes, read from /proc: what each service spent between two moments.

A process's CPU time is its user and system time plus that of its children it has waited for;
the live descendants (a sandbox run, a helper process) are added, so nothing a service starts
escapes the count.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
# Fields of /proc/PID/stat after the command name (which may hold spaces and parentheses),
# counted from the state field (field 3 of proc(5)).
_PARENT = 1
_USER, _SYSTEM, _CHILDREN_USER, _CHILDREN_SYSTEM = 11, 12, 13, 14


def _fields(stat_text: str) -> list[str]:
    return stat_text[stat_text.rindex(")") + 2 :].split()


def cpu_seconds(
    stat_text: str, ticks_per_second: int = TICKS_PER_SECOND, waited_children: bool = True
) -> float:
    """User plus system time of one process, and of its waited-for children unless told not
    to, in seconds."""
    fields = _fields(stat_text)
    counted = (
        (_USER, _SYSTEM, _CHILDREN_USER, _CHILDREN_SYSTEM) if waited_children else (_USER, _SYSTEM)
    )
    return sum(int(fields[i]) for i in counted) / ticks_per_second


def parent_pid(stat_text: str) -> int:
    return int(_fields(stat_text)[_PARENT])


def tree_cpu_seconds(
    pid: int, stats: Mapping[int, str], ticks_per_second: int = TICKS_PER_SECOND
) -> float:
    """CPU seconds of a process and all its live descendants, from every process's stat text."""
    children: dict[int, list[int]] = {}
    for other, text in stats.items():
        children.setdefault(parent_pid(text), []).append(other)
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        if current in stats:
            total += cpu_seconds(stats[current], ticks_per_second)
            pending.extend(children.get(current, []))
    return total


def read_stats(proc: Path = Path("/proc")) -> dict[int, str]:
    """Every process's stat text; a process that ends while being read is left out."""
    stats = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = (entry / "stat").read_text()
            except OSError:
                continue
    return stats


@dataclass(frozen=True)
class CpuReading:
    at: float
    seconds: dict[str, float]


def read_cpu(trees: Mapping[str, int], alone: Mapping[str, int] | None = None) -> CpuReading:
    """CPU seconds so far of each named process: those of `trees` with their descendants,
    those of `alone` without (a process whose children are counted under their own names)."""
    stats = read_stats()
    seconds = {name: tree_cpu_seconds(pid, stats) for name, pid in trees.items()}
    for name, pid in (alone or {}).items():
        seconds[name] = cpu_seconds(stats[pid], waited_children=False)
    return CpuReading(time.monotonic(), seconds)


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds each process spent over wall_s seconds."""

    seconds: dict[str, float]
    wall_s: float

    def per_turn_ms(self, turns: int) -> dict[str, float]:
        return {name: 1000 * spent / max(1, turns) for name, spent in self.seconds.items()}

    def core_share(self) -> dict[str, float]:
        """The share of one core each used (1.0 is a whole core)."""
        return {name: spent / max(1e-9, self.wall_s) for name, spent in self.seconds.items()}


def cpu_between(before: CpuReading, after: CpuReading) -> CpuUse:
    return CpuUse(
        {name: after.seconds[name] - before.seconds[name] for name in before.seconds},
        after.at - before.at,
    )
