"""Each person's own folder under VIOLET_WORKSPACE_DIR: their documents (notes and lists), within
a disk quota per person. Nothing here is reachable by a name from outside the folder. (Code runs
in a working folder of its own that lasts one run: see `worker.sandbox`.)"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

DOCUMENT_SUFFIXES = (".md", ".txt", ".csv")
MAX_DOCUMENT_CHARS = 200_000
MAX_DOCUMENTS = 500
DEFAULT_QUOTA_BYTES = 50 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$")
_SLUG = re.compile(r"[^a-z0-9]+")


class DocumentError(Exception):
    """A document request that cannot be done; the message is plain words for the model."""


@dataclass(frozen=True)
class PersonFolder:
    root: Path

    @property
    def documents(self) -> Path:
        return self.root / "documents"


def folder_name(person: str) -> str:
    """A folder name no person's id can steer outside the root: a slug for people reading the
    disk, a digest so two ids never share a folder."""
    slug = _SLUG.sub("-", person.lower()).strip("-")[:40] or "person"
    return f"{slug}-{hashlib.sha256(person.encode()).hexdigest()[:16]}"


class Folders:
    def __init__(self, root: Path, quota_bytes: int = DEFAULT_QUOTA_BYTES) -> None:
        """`quota_bytes`: what one person's documents may take on disk, all together."""
        self.root = root
        self.quota_bytes = quota_bytes

    def of(self, person: str) -> PersonFolder:
        folder = PersonFolder(self.root / folder_name(person))
        folder.documents.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder

    def documents(self, person: str) -> Documents:
        return Documents(self.of(person).documents, self.quota_bytes)


def document_name(name: str) -> str:
    """The file name a document is kept under; raises DocumentError for unsafe names."""
    name = " ".join(name.split())
    if not _NAME.match(name) or ".." in name:
        raise DocumentError(
            "A document name uses letters, digits, spaces, dots, dashes and underscores, "
            "starts with a letter or digit, and has at most 100 characters."
        )
    suffix = Path(name).suffix.lower()
    if not suffix:
        return name + ".md"
    if suffix not in DOCUMENT_SUFFIXES:
        raise DocumentError(f"Documents end in {', '.join(DOCUMENT_SUFFIXES)}.")
    return name


class Documents:
    """The notes and lists in one person's folder."""

    def __init__(self, folder: Path, quota_bytes: int = DEFAULT_QUOTA_BYTES) -> None:
        self._folder = folder
        self._quota_bytes = quota_bytes

    def _path(self, name: str) -> tuple[str, Path]:
        safe = document_name(name)
        path = self._folder / safe
        if path.is_symlink() or path.resolve().parent != self._folder.resolve():
            raise DocumentError(f'"{safe}" is not a document here.')
        return safe, path

    def write(self, name: str, content: str) -> str:
        if len(content) > MAX_DOCUMENT_CHARS:
            raise DocumentError(f"A document holds at most {MAX_DOCUMENT_CHARS} characters.")
        safe, path = self._path(name)
        if not path.exists() and len(self.names()) >= MAX_DOCUMENTS:
            raise DocumentError(f"The folder already holds {MAX_DOCUMENTS} documents.")
        kept = sum((self._folder / other).stat().st_size for other in self.names() if other != safe)
        if kept + len(content.encode()) > self._quota_bytes:
            megabytes = self._quota_bytes / (1024 * 1024)
            raise DocumentError(
                f"The person's documents may take {megabytes:g} MB in all, and this one would "
                "go past that."
            )
        # Written beside it and moved into place, so a reader never sees half a document.
        handle, temporary = tempfile.mkstemp(dir=self._folder, prefix=".writing-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(content)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return safe

    def read(self, name: str) -> tuple[str, str]:
        safe, path = self._path(name)
        if not path.is_file():
            raise DocumentError(f'There is no document called "{safe}".')
        return safe, path.read_text(encoding="utf-8", errors="replace")

    def names(self) -> list[str]:
        return sorted(
            entry.name
            for entry in self._folder.iterdir()
            if entry.is_file()
            and not entry.is_symlink()
            and entry.suffix.lower() in DOCUMENT_SUFFIXES
            and not entry.name.startswith(".")
        )

    def listing(self) -> list[dict[str, str | int]]:
        found: list[dict[str, str | int]] = []
        for name in self.names():
            stat = (self._folder / name).stat()
            changed = datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(timespec="seconds")
            found.append({"name": name, "bytes": stat.st_size, "changed": changed})
        return found
