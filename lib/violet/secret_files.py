"""Secret files a stack makes for itself on first use (its secret, its keys): each written whole
and owner-only before anyone can see it.

The text is written aside, in a file only the owner may read (0600 from its creation, whatever
the umask), then linked into place: a link never replaces a file, so two services starting at
once agree on the first one's text, and no reader ever finds the file empty or half written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path


def made_once(path: Path, make: Callable[[], str]) -> str:
    """The text of the secret file at `path`, made by `make` when there is none yet."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as file:
                file.write(make())
                file.flush()
                os.fsync(file.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)
        finally:
            aside.unlink()
    return path.read_text()
