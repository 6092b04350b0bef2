"""The worker's storage, in parts with one job each: the work sessions (each with its model
conversation and its lease), the requests, the approvals and the outbox; the steps of a turn,
each of which changes several parts in one transaction, so a worker that stops at any point
resumes from exactly where it was; the erasure of a person's rows; and the trim of their
finished work past the operator's retention.

Every query names the person or a work session found through the person. On PostgreSQL each
transaction also names the person it acts for (`violet.database`); the sweep and the outbox
learn who has something due from the owner's scan functions, which return ids and people only.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock, utc_now
from worker.store.approvals import Approvals
from worker.store.erasures import Erasures
from worker.store.outbox import Outbox
from worker.store.requests import Requests
from worker.store.steps import Steps
from worker.store.trims import Trims
from worker.store.work_sessions import WorkSessions


class WorkStore:
    def __init__(self, database: async_sessionmaker[AsyncSession], clock: Clock = utc_now) -> None:
        self.clock = clock
        self.work_sessions = WorkSessions(database, clock)
        self.requests = Requests(database, clock, self.work_sessions)
        self.approvals = Approvals(database, clock)
        self.outbox = Outbox(database, clock)
        self.erasures = Erasures(database, clock)
        self.trims = Trims(database, clock)
        self.steps = Steps(
            database, clock, self.work_sessions, self.requests, self.approvals, self.outbox
        )
