"""Each person's own folder under VIOLET_WORKSPACE_DIR: their documents (notes and lists), within
a disk quota per person. Nothing here is reachable by a name from outside the folder. (Code runs
in a working folder of its own that lasts one run: see `worker.sandbox`.)

A deleted document moves to a hidden folder beside the documents (which code never sees), under
its name led by the moment it was deleted; it can be restored for `DELETED_KEPT` (30 days, time
enough to notice a mistake, not so long that a person's deleted words linger), then it is gone.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

from violet.clock import Clock, utc_now
from violet.text import document_title

DOCUMENT_SUFFIXES = (".md", ".txt", ".csv")
MAX_DOCUMENT_CHARS = 200_000
MAX_DOCUMENTS = 500
DEFAULT_QUOTA_BYTES = 50 * 1024 * 1024
DELETED_KEPT = timedelta(days=30)
DELETED_FOLDER = ".deleted"
# Enough of a document to find its heading in.
HEAD_CHARS = 1_000
# The empty folder code sees when the person has no documents; no person's folder name starts
# with a dot.
NOBODYS_FOLDER = ".nobody"
# How many times a removal goes over a folder that something was still adding to.
REMOVAL_PASSES = 3
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,99}$")
_SLUG = re.compile(r"[^a-z0-9]+")


ExcInfo = tuple[type[BaseException], BaseException, TracebackType]


class DocumentError(Exception):
    """A document request that cannot be done; the message is plain words for the model."""


class NoSuchDocument(DocumentError):
    """No document (or no deleted one, to restore) has that name."""


class NameTaken(DocumentError):
    """A deleted document cannot come back: another of its name is there now."""


@dataclass(frozen=True)
class Listed:
    name: str
    title: str
    modified: datetime
    size: int


@dataclass(frozen=True)
class Kept:
    """A document as the person's archive shows it: in the folder, or deleted and still able
    to come back."""

    name: str
    path: Path
    written_at: datetime
    size: int
    deleted: bool


@dataclass(frozen=True)
class PersonFolder:
    root: Path

    @property
    def documents(self) -> Path:
        return self.root / "documents"

    @property
    def deleted(self) -> Path:
        return self.root / DELETED_FOLDER


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

    def of(self, person: str, *, create: bool = True) -> PersonFolder:
        """The person's folder; made unless `create` is False (reading makes nothing, so no
        folder of a person is made again after their data was erased)."""
        folder = PersonFolder(self.root / folder_name(person))
        if create:
            folder.documents.mkdir(mode=0o700, parents=True, exist_ok=True)
        return folder

    def readable(self, person: str) -> PersonFolder:
        """The person's folder, for code to read their documents in; one that is empty and no
        one's while they have none, so running code never makes a person's folder."""
        folder = self.of(person, create=False)
        if folder.documents.is_dir():
            return folder
        nobodys = PersonFolder(self.root / NOBODYS_FOLDER)
        nobodys.documents.mkdir(mode=0o700, parents=True, exist_ok=True)
        return nobodys

    def documents(self, person: str, *, create: bool = True) -> Documents:
        return Documents(self.of(person, create=create).documents, self.quota_bytes)

    def remove(self, person: str) -> int:
        """Removes the person's whole folder (documents, deleted ones, anything else); how many
        files it held. Another pass goes over what was added meanwhile (a document moved among
        the deleted ones as the removal ran); a folder still there after the last pass is an
        OSError, and the next removal finishes it."""
        root = self.root / folder_name(person)
        if root.is_symlink():
            root.unlink()
            return 0
        files = sum(len(names) for _, _, names in os.walk(root))
        for _ in range(REMOVAL_PASSES):
            if not root.exists():
                return files
            shutil.rmtree(root, onerror=_unless_moved)
        if root.exists():
            raise OSError(errno.ENOTEMPTY, "the person's folder is still being written", root)
        return files

    def purge_deleted(self) -> None:
        """Removes everyone's deleted documents kept past `DELETED_KEPT`, including those of
        people who never come back."""
        for folder in self.root.iterdir() if self.root.is_dir() else ():
            documents = PersonFolder(folder).documents
            if documents.is_dir() and not folder.is_symlink():
                Documents(documents, self.quota_bytes).purge_deleted()


def _unless_moved(_function: Callable[..., object], _path: str, error: ExcInfo) -> None:
    """Lets a removal go on past an entry moved away, or added, while it ran; raises the rest."""
    problem = error[1]
    if isinstance(problem, FileNotFoundError):
        return
    if isinstance(problem, OSError) and problem.errno == errno.ENOTEMPTY:
        return
    raise problem


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

    def __init__(
        self, folder: Path, quota_bytes: int = DEFAULT_QUOTA_BYTES, clock: Clock = utc_now
    ) -> None:
        self._folder = folder
        self._quota_bytes = quota_bytes
        self._clock = clock
        self._deleted = folder.parent / DELETED_FOLDER

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
        safe, path = self._existing(name)
        return safe, path.read_text(encoding="utf-8", errors="replace")

    def _existing(self, name: str) -> tuple[str, Path]:
        safe, path = self._path(name)
        if not path.is_file():
            raise NoSuchDocument(f'There is no document called "{safe}".')
        return safe, path

    def names(self) -> list[str]:
        if not self._folder.is_dir():
            return []
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

    def newest_first(self) -> list[Listed]:
        found = []
        for name in self.names():
            path = self._folder / name
            with path.open(encoding="utf-8", errors="replace") as file:
                head = file.read(HEAD_CHARS)
            stat = path.stat()
            modified = datetime.fromtimestamp(stat.st_mtime, UTC)
            found.append(Listed(name, document_title(name, head), modified, stat.st_size))
        return sorted(found, key=lambda listed: (listed.modified, listed.name), reverse=True)

    def kept(self) -> list[Kept]:
        """Every document the person has: in the folder, and deleted ones within
        `DELETED_KEPT`; oldest written first."""
        oldest_kept = (self._clock() - DELETED_KEPT).timestamp() * 1_000_000
        entries = [(name, self._folder / name, False) for name in self.names()] + [
            (name, entry, True)
            for deleted_at, name, entry in self._deleted_ones()
            if deleted_at >= oldest_kept
        ]
        found = []
        for name, path, deleted in entries:
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue  # deleted, restored or purged while being listed
            modified = datetime.fromtimestamp(stat.st_mtime, UTC)
            found.append(Kept(name, path, modified, stat.st_size, deleted))
        return sorted(found, key=lambda kept: (kept.written_at, kept.name, kept.deleted))

    def delete(self, name: str) -> str:
        """Moves the document among the deleted ones, keeping its time of change."""
        safe, path = self._existing(name)
        self._deleted.mkdir(mode=0o700, exist_ok=True)
        deleted_at = int(self._clock().timestamp() * 1_000_000)
        os.replace(path, self._deleted / f"{deleted_at}-{safe}")
        self.purge_deleted()
        return safe

    def restore(self, name: str) -> str:
        """Brings back the document of that name deleted last."""
        self.purge_deleted()
        safe, path = self._path(name)
        kept = [entry for _, named, entry in self._deleted_ones() if named == safe]
        if not kept:
            raise NoSuchDocument(f'There is no deleted document called "{safe}" to bring back.')
        if path.exists():
            raise NameTaken(f'There is a document called "{safe}" already.')
        os.replace(kept[-1], path)
        return safe

    def purge_deleted(self) -> None:
        """Removes deleted documents kept past `DELETED_KEPT`, and the oldest beyond what the
        documents themselves may hold (in number and on disk)."""
        oldest_kept = (self._clock() - DELETED_KEPT).timestamp() * 1_000_000
        kept = self._deleted_ones()
        sizes = [entry.stat().st_size for _, _, entry in kept]
        for index, (deleted_at, _, entry) in enumerate(kept):
            newer = kept[index + 1 :]
            over = len(newer) >= MAX_DOCUMENTS or sum(sizes[index:]) > self._quota_bytes
            if deleted_at < oldest_kept or over:
                entry.unlink(missing_ok=True)

    def _deleted_ones(self) -> list[tuple[int, str, Path]]:
        """(deleted at, name, file) of each deleted document, oldest first."""
        if not self._deleted.is_dir():
            return []
        found = []
        for entry in self._deleted.iterdir():
            deleted_at, _, name = entry.name.partition("-")
            if deleted_at.isdigit() and entry.is_file() and not entry.is_symlink():
                found.append((int(deleted_at), name, entry))
        return sorted(found)
