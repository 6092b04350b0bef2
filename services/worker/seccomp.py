"""The sandbox's process limit: a seccomp filter under which the program is its sandbox's only
process. Threads may be made (their number is bounded by the memory limit); `fork`, `vfork`
and a `clone` without CLONE_THREAD fail with EAGAIN, as at a process limit, and `clone3`
(whose flags a filter cannot read) fails with ENOSYS, so the C library falls back to `clone`.

RLIMIT_NPROC cannot do this here: it is not enforced for root, and counts every process of
the worker's user rather than the program's own. The filter holds for any user and needs no
privilege (bubblewrap loads it with `--seccomp FD`).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# Classic BPF, as seccomp reads it (linux/filter.h, linux/seccomp.h).
_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JUMP_ANY_BIT = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
# Offsets in struct seccomp_data: the call's number, the architecture, the first argument's
# low 32 bits (the byte order of both architectures below is little-endian).
_NUMBER, _ARCH, _FIRST_ARGUMENT = 0, 4, 16
_CLONE_THREAD = 0x00010000
_X32_CALLS = 0x40000000


# An instruction: its code, the labels to jump to when true and when false, its constant.
Instruction = tuple[int, str | None, str | None, int]
Row = Instruction | str


@dataclass(frozen=True)
class _Architecture:
    audit: int
    clone: int
    clone3: int
    forks: tuple[int, ...]  # fork and vfork, where they exist


_ARCHITECTURES = {
    "x86_64": _Architecture(0xC000003E, clone=56, clone3=435, forks=(57, 58)),
    "aarch64": _Architecture(0xC00000B7, clone=220, clone3=435, forks=()),
}


def single_process_filter(machine: str | None = None) -> bytes | None:
    """The filter program for this machine's architecture; None where it is not known."""
    arch = _ARCHITECTURES.get(machine or platform.machine())
    if arch is None:
        return None
    program: list[Row] = [
        (_LOAD_WORD, None, None, _ARCH),
        (_JUMP_EQUAL, "next", "refuse", arch.audit),
        (_LOAD_WORD, None, None, _NUMBER),
        (_JUMP_AT_LEAST, "refuse", "next", _X32_CALLS),
        *((_JUMP_EQUAL, "no process", "next", number) for number in arch.forks),
        (_JUMP_EQUAL, "no clone3", "next", arch.clone3),
        (_JUMP_EQUAL, "next", "allow", arch.clone),
        (_LOAD_WORD, None, None, _FIRST_ARGUMENT),
        (_JUMP_ANY_BIT, "allow", "no process", _CLONE_THREAD),
        "allow",
        (_RETURN, None, None, _ALLOW),
        "no process",
        (_RETURN, None, None, _ERRNO | errno.EAGAIN),
        "no clone3",
        (_RETURN, None, None, _ERRNO | errno.ENOSYS),
        "refuse",
        (_RETURN, None, None, _ERRNO | errno.EPERM),
    ]
    return _assemble(program)


def _assemble(program: list[Row]) -> bytes:
    """Instructions whose jumps name labels (a row that is a string labels the instruction
    after it; "next" is the following instruction) as the bytes of `struct sock_filter[]`."""
    labels: dict[str, int] = {}
    instructions: list[Instruction] = []
    for row in program:
        if isinstance(row, str):
            labels[row] = len(instructions)
        else:
            instructions.append(row)

    def offset(label: str | None, index: int) -> int:
        return 0 if label in (None, "next") else labels[label] - index - 1

    return b"".join(
        struct.pack("=HBBI", code, offset(yes, index), offset(no, index), k)
        for index, (code, yes, no, k) in enumerate(instructions)
    )
