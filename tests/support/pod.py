"""A process as locked down as the chart's pods: run a command with no new privileges and a
seccomp filter that refuses new namespaces, as the RuntimeDefault profile does for a process
without CAP_SYS_ADMIN (unshare and setns refused, clone refused with any CLONE_NEW* flag, clone3
answered ENOSYS so that the C library falls back to clone). Capabilities are dropped by the
caller (`setpriv`).

    python -m tests.support.pod COMMAND [ARG...]
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_LOAD_WORD, _JUMP_EQUAL, _JUMP_ANY_BIT, _RETURN = 0x20, 0x15, 0x45, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NUMBER, _ARCH, _FIRST_ARGUMENT = 0, 4, 16
_NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET

# audit architecture, unshare, setns, clone, clone3
_CALLS = {
    "x86_64": (0xC000003E, 272, 308, 56, 435),
    "aarch64": (0xC00000B7, 97, 268, 220, 435),
}


def _filter() -> bytes:
    audit, unshare, setns, clone, clone3 = _CALLS[platform.machine()]
    refuse, no_clone3 = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    # (code, jump if true, jump if false, constant); jumps count the instructions skipped.
    program = [
        (_LOAD_WORD, 0, 0, _ARCH),
        (_JUMP_EQUAL, 1, 0, audit),
        (_RETURN, 0, 0, refuse),
        (_LOAD_WORD, 0, 0, _NUMBER),
        (_JUMP_EQUAL, 6, 0, unshare),
        (_JUMP_EQUAL, 5, 0, setns),
        (_JUMP_EQUAL, 5, 0, clone3),
        (_JUMP_EQUAL, 0, 2, clone),
        (_LOAD_WORD, 0, 0, _FIRST_ARGUMENT),
        (_JUMP_ANY_BIT, 1, 0, _NEW_NAMESPACES),
        (_RETURN, 0, 0, _ALLOW),
        (_RETURN, 0, 0, refuse),
        (_RETURN, 0, 0, no_clone3),
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def confine() -> None:
    """Installs the filter on this process; it holds for everything it starts."""
    libc = ctypes.CDLL(None, use_errno=True)
    code = _filter()
    buffer = ctypes.create_string_buffer(code)

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = Program(len(code) // 8, ctypes.addressof(buffer))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


if __name__ == "__main__":
    confine()
    os.execv(sys.argv[1], sys.argv[1:])
