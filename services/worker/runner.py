"""Runs work sessions: at most a few at once per person and overall, one replica per session
(a lease), each kept loaded between turns and unloaded when idle.

Loaded means the session's model conversation is held in memory here. Its state is stored
with every step, so unloading only lets go of the copy; the next turn loads it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from violet.identity import acting_for
from violet.models import PersonGone
from violet.models.credentials import CallsHeld
from violet.tasks import cancel_all, end_within
from worker.agent import WorkAgent
from worker.store import WorkStore
from worker.store.work_sessions import WorkSession, WorkSessionGone

log = logging.getLogger(__name__)


@dataclass
class Loaded:
    work_session: WorkSession
    last_turn: float


class WorkRunner:
    def __init__(
        self,
        *,
        store: WorkStore,
        agent: WorkAgent,
        replica: str,
        per_person: int,
        overall: int,
        idle_s: float,
        lease_s: float,
    ) -> None:
        self._store = store
        self._agent = agent
        self._replica = replica
        self._per_person_limit = per_person
        self._overall = asyncio.Semaphore(overall)
        self._per_person: dict[str, asyncio.Semaphore] = {}
        self._idle_s = idle_s
        self._lease = store.work_sessions.lease(replica, lease_s)
        self._loaded: dict[str, Loaded] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._people: dict[str, str] = {}  # whose work each task runs
        self._again: set[str] = set()
        self._held: set[str] = set()  # work waiting for its person's account, told once
        self._erasing: set[str] = set()  # people whose work starts nowhere here for now
        self._stopping = False

    def wake(self, work_session_id: str, person: str) -> None:
        """Runs the session's next steps soon (again, if it is running now)."""
        if self._stopping or person in self._erasing:
            return  # stored already; found again at the next start, or erased
        if work_session_id in self._tasks:
            self._again.add(work_session_id)
            return
        self._people[work_session_id] = person
        self._tasks[work_session_id] = asyncio.create_task(self._drain(work_session_id, person))

    @contextlib.asynccontextmanager
    async def stopped_for(self, person: str) -> AsyncIterator[None]:
        """Stops the person's work here for the block (their data is being erased): their
        running steps are cancelled, each handing its lease back as it ends, and none starts
        until the block ends. Then nothing of theirs is kept here."""
        self._erasing.add(person)
        try:
            theirs = [id_ for id_, whose in self._people.items() if whose == person]
            await cancel_all([self._tasks[id_] for id_ in theirs if id_ in self._tasks])
            yield
        finally:
            self._erasing.discard(person)
            self._forget(person)

    def _forget(self, person: str) -> None:
        loaded = [id_ for id_, kept in self._loaded.items() if kept.work_session.person == person]
        for work_session_id in loaded:
            del self._loaded[work_session_id]
            self._again.discard(work_session_id)
            self._held.discard(work_session_id)
        self._per_person.pop(person, None)

    async def sweep_forever(self, every_s: float) -> None:
        """Finds work nobody is running (unfinished at a start, or left by a stopped replica)."""
        while True:
            try:
                for work_session_id, person in await self._store.work_sessions.runnable():
                    self.wake(work_session_id, person)
            except Exception:
                log.exception("the sweep for unfinished work failed")
            await asyncio.sleep(every_s)

    async def unload_idle_forever(self) -> None:
        every_s = max(0.1, min(self._idle_s / 4, 5.0))
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.unload_idle()
            except Exception:
                log.exception("unloading idle work sessions failed")

    async def unload_idle(self) -> None:
        await self._drop_erased()
        moment = time.monotonic()
        for work_session_id, loaded in list(self._loaded.items()):
            if work_session_id in self._tasks or moment - loaded.last_turn < self._idle_s:
                continue
            del self._loaded[work_session_id]
            with acting_for(loaded.work_session.person):
                await self._store.work_sessions.mark_unloaded(work_session_id, self._replica)
            log.info("work session unloaded", extra={"topic": work_session_id})

    async def _drop_erased(self) -> None:
        """Lets go of idle copies whose work sessions are no longer stored: their person's data
        was erased, perhaps by another replica."""
        idle: dict[str, list[str]] = {}
        for work_session_id, loaded in self._loaded.items():
            if work_session_id not in self._tasks:
                idle.setdefault(loaded.work_session.person, []).append(work_session_id)
        for person, ids in idle.items():
            with acting_for(person):
                stored = await self._store.work_sessions.stored(person, ids)
            for work_session_id in set(ids) - stored:
                if work_session_id not in self._tasks:
                    self._loaded.pop(work_session_id, None)

    async def stop(self, grace_s: float) -> None:
        """Lets steps under way end for up to `grace_s`; the rest resume at the next start."""
        self._stopping = True
        running = list(self._tasks.values())
        await end_within(running, grace_s)
        for work_session_id, loaded in list(self._loaded.items()):
            with acting_for(loaded.work_session.person):
                await self._store.work_sessions.mark_unloaded(work_session_id, self._replica)
        self._loaded.clear()

    async def _drain(self, work_session_id: str, person: str) -> None:
        try:
            slot = self._per_person.setdefault(person, asyncio.Semaphore(self._per_person_limit))
            with acting_for(person):  # a sweep's work is the person's too
                async with slot, self._overall:
                    while not self._stopping:
                        self._again.discard(work_session_id)
                        async with self._lease.holding(work_session_id) as held:
                            if not held:
                                return  # another replica runs it, and sees what is new
                            await self._run(work_session_id)
                            self._held.discard(work_session_id)
                        if work_session_id not in self._again:
                            return
        except WorkSessionGone:
            log.info("work session erased while it ran", extra={"topic": work_session_id})
        except PersonGone:
            # Their erase, under way, removes the work session with the rest.
            log.info("work ended: its person was deleted", extra={"topic": work_session_id})
        except CallsHeld as held:
            # Kept as it is: the sweep takes it up again once the person's account allows.
            level = logging.DEBUG if work_session_id in self._held else logging.INFO
            log.log(level, "work held", extra={"topic": work_session_id, "hold": held.hold.value})
            self._held.add(work_session_id)
        except Exception:
            log.exception(
                "work step failed; the sweep tries again", extra={"topic": work_session_id}
            )
        finally:
            del self._tasks[work_session_id]
            del self._people[work_session_id]

    async def _run(self, work_session_id: str) -> None:
        loaded = await self._load(work_session_id)
        try:
            while not self._stopping and await self._agent.advance(loaded.work_session):
                loaded.last_turn = time.monotonic()
        except BaseException:
            # The copy may be ahead of what was stored; the next turn loads the stored state.
            self._loaded.pop(work_session_id, None)
            raise
        loaded.last_turn = time.monotonic()

    async def _load(self, work_session_id: str) -> Loaded:
        stored = self._store.work_sessions
        loaded = self._loaded.get(work_session_id)
        if loaded and loaded.work_session.version == await stored.version_of(work_session_id):
            return loaded
        work_session = await stored.load(work_session_id, self._replica)
        details = {"topic": work_session_id, "messages": len(work_session.messages)}
        log.info("work session loaded", extra=details)
        loaded = Loaded(work_session, time.monotonic())
        self._loaded[work_session_id] = loaded
        return loaded
