"""The person's data held by the worker (`violet.v1.PersonData`), for the person of the call's
internal token alone: exported as the archive's "documents", "work" and "approvals" sections,
and erased so that nothing of theirs is written afterwards by any replica.

An erase marks itself under way first, so no replica takes a new request or answer of the
person's; stops their work on this replica; then removes their rows in one transaction that
first locks their work sessions, as every step of work does first, so a step under way on
another replica ends before it and a later one finds its work session gone and writes nothing
(`worker.store.erasures`); then removes their folder, which a tool changes only while its work
session's row is held the same way; and last lifts the mark.

A trim removes what the operator's retention lets go of: the person's work finished before the
horizon, each work session's oldest first, and what was sent of it (`worker.store.trims`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from violet.identity import acting_for
from violet.models import JsonObject
from violet.person_data import Erased, Horizon, Record, when
from violet.text import document_title
from worker.agent import told_failure
from worker.folders import HEAD_CHARS, Folders, Kept
from worker.runner import WorkRunner
from worker.store import WorkStore
from worker.store.approvals import Asked as AskedApproval
from worker.store.requests import Asked

log = logging.getLogger(__name__)

# Rows read at a time, so a long history never sits in memory.
PAGE = 500

# Every table of the worker: the archive section it feeds, or why it feeds none.
TABLES = {
    "work_sessions": "internal: a topic's running state (title, version, lease, held tool "
    "results); what the person asked of it is in work",
    "work_messages": "internal: the work model's own conversation (prompts, tool calls, results)",
    "work_requests": "work",
    "approvals": "approvals",
    "outbox": "internal: results, questions and cards on their way to the session and the "
    "router, which keep what they take",
    "work_erasures": "internal: marks an erase of the person under way, gone when it ends",
}

# A request's status as the person knows it: "pending" waits for its turn, "waiting" for the
# person's yes; a "done" one failed when the person was told it could not be done.
_STATES = {"pending": "waiting", "running": "working", "waiting": "waiting"}


def _state(asked: Asked) -> str:
    if asked.status != "done":
        return _STATES[asked.status]
    return "failed" if told_failure(asked.outcome or "") else "done"


def work_record(asked: Asked) -> JsonObject:
    done = asked.status == "done"
    return {
        "asked": asked.text,
        "asked_at": when(asked.created_at),
        "state": _state(asked),
        "result": asked.outcome if done else None,
        "finished_at": when(asked.finished_at) if done and asked.finished_at else None,
    }


def approval_record(asked: AskedApproval) -> JsonObject:
    return {
        "question": asked.question,
        "asked_at": when(asked.created_at),
        "answer": asked.answer or "waiting",
        "answered_at": when(asked.answered_at) if asked.answered_at else None,
    }


def document_record(kept: Kept, content: bytes) -> JsonObject:
    head = content[: HEAD_CHARS * 4].decode("utf-8", errors="replace")[:HEAD_CHARS]
    return {
        "name": kept.name,
        "title": document_title(kept.name, head),
        "written_at": when(kept.written_at),
        "size": len(content),
        "deleted": kept.deleted,
    }


class WorkData:
    """The person's documents, work and approvals (`violet.person_data.HeldData`)."""

    def __init__(self, store: WorkStore, runner: WorkRunner, folders: Folders) -> None:
        self._store = store
        self._runner = runner
        self._folders = folders

    async def export(self, person: str) -> AsyncIterator[Record]:
        with acting_for(person):
            async for document in self._documents(person):
                yield document
            async for work in self._work(person):
                yield work
            async for approval in self._approvals(person):
                yield approval

    async def _documents(self, person: str) -> AsyncIterator[Record]:
        documents = self._folders.documents(person, create=False)
        for kept in await asyncio.to_thread(documents.kept):
            try:
                content = await asyncio.to_thread(kept.path.read_bytes)
            except FileNotFoundError:
                continue  # deleted, restored or purged since it was listed
            yield Record("documents", document_record(kept, content), content)

    async def _work(self, person: str) -> AsyncIterator[Record]:
        after = 0
        while page := await self._store.requests.page_of(person, after, PAGE):
            for asked in page:
                yield Record("work", work_record(asked))
            after = page[-1].id

    async def _approvals(self, person: str) -> AsyncIterator[Record]:
        after: AskedApproval | None = None
        while page := await self._store.approvals.page_of(person, after, PAGE):
            for asked in page:
                yield Record("approvals", approval_record(asked))
            after = page[-1]

    async def erase(self, person: str) -> Erased:
        with acting_for(person):
            await self._store.erasures.begin(person)
            async with self._runner.stopped_for(person):
                rows = await self._store.erasures.remove_rows(person)
                files = await asyncio.to_thread(self._folders.remove, person)
            await self._store.erasures.end(person)
        log.info("a person's work and documents erased", extra={"rows": rows, "files": files})
        return Erased(rows=rows, files=files)

    async def trim(self, person: str, horizon: Horizon) -> Erased:
        """Removes the person's work finished before the horizon. Their work sessions (a topic
        and its title), documents and folders stay: they are the person's, like files in a
        drive, kept until the person deletes them or is erased."""
        before = horizon.work_before
        if before is None:
            return Erased()
        trims = self._store.trims
        rows = running = 0
        with acting_for(person):
            for work_session_id in await trims.work_sessions_to_trim(person, before):
                removed = await trims.trim(work_session_id, before)
                running += removed is None  # left for the next pass
                rows += removed or 0
            rows += await trims.drop_sent(person, before)
        log.info("a person's finished work trimmed", extra={"rows": rows, "running": running})
        return Erased(rows=rows)
