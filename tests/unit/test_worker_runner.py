"""Running work sessions: bounded per person and overall, one replica at a time per session, and
unloaded when idle with their state kept."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.support.waiting import eventually
from violet import database
from worker.runner import WorkRunner
from worker.store import WorkStore
from worker.store.work_sessions import WorkSession
from worker.tables import work_sessions

STEP_S = 0.15


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    url = make_url(f"sqlite:///{tmp_path / 'worker.db'}")
    database.migrate(url, "worker.migrations", "alembic_version_worker")
    engine = database.open_engine(url)
    yield database.sessionmaker(engine)
    await engine.dispose()


@pytest.fixture
def store(db: async_sessionmaker[AsyncSession]) -> WorkStore:
    return WorkStore(db)


@dataclass
class SlowAgent:
    """Takes one slow step per session, counting how many run at once."""

    people: dict[str, str] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    running: Counter[str] = field(default_factory=Counter)
    most: Counter[str] = field(default_factory=Counter)

    async def advance(self, work_session: WorkSession) -> bool:
        if work_session.id in self.done:
            return False
        for key in ("all", work_session.person, work_session.id):
            self.running[key] += 1
            self.most[key] = max(self.most[key], self.running[key])
        await asyncio.sleep(STEP_S)
        for key in ("all", work_session.person, work_session.id):
            self.running[key] -= 1
        self.done.add(work_session.id)
        return True


def runner_for(
    store: WorkStore, agent: SlowAgent, replica: str = "a", **limits: float
) -> WorkRunner:
    settings = {"per_person": 2, "overall": 3, "idle_s": 300.0, "lease_s": 5.0, **limits}
    return WorkRunner(store=store, agent=agent, replica=replica, **settings)  # type: ignore[arg-type]


async def new_work(store: WorkStore, person: str) -> str:
    return await store.requests.start(person, "", "work", title="work")


async def row(db: async_sessionmaker[AsyncSession], topic: str):  # type: ignore[no-untyped-def]
    async with db() as read:
        return (await read.execute(select(work_sessions).where(work_sessions.c.id == topic))).one()


async def test_work_runs_at_most_a_few_at_once_per_person_and_overall(store: WorkStore) -> None:
    agent = SlowAgent()
    runner = runner_for(store, agent)
    topics = [(await new_work(store, person), person) for person in ("p1", "p2", "p3") * 3]
    for topic, person in topics:
        runner.wake(topic, person)
    await eventually(lambda: len(agent.done) == len(topics), "every work done")
    assert agent.most["all"] == 3
    assert max(agent.most[p] for p in ("p1", "p2", "p3")) <= 2
    await runner.stop(1)


async def test_one_person_cannot_take_every_slot(store: WorkStore) -> None:
    agent = SlowAgent()
    runner = runner_for(store, agent)
    busy = [await new_work(store, "busy") for _ in range(5)]
    for topic in busy:
        runner.wake(topic, "busy")
    other = await new_work(store, "other")
    runner.wake(other, "other")
    await eventually(lambda: other in agent.done, "the other person's work done")
    assert len(agent.done) <= 3  # the other person's work did not wait for all of theirs
    await eventually(lambda: len(agent.done) == 6, "all six works done")
    assert agent.most["busy"] == 2
    await runner.stop(1)


async def test_two_replicas_never_run_the_same_session_at_once(store: WorkStore) -> None:
    agent = SlowAgent()
    first, second = runner_for(store, agent, "a"), runner_for(store, agent, "b")
    topic = await new_work(store, "p1")
    first.wake(topic, "p1")
    second.wake(topic, "p1")
    await eventually(lambda: topic in agent.done, "the work done")
    await asyncio.gather(first.stop(1), second.stop(1))  # returns once every step has ended
    assert agent.most[topic] == 1


async def test_an_idle_session_is_unloaded_and_loaded_again_for_its_next_turn(
    store: WorkStore,
    db: async_sessionmaker[AsyncSession],
) -> None:
    agent = SlowAgent()
    runner = runner_for(store, agent, idle_s=0.3)
    topic = await new_work(store, "p1")
    runner.wake(topic, "p1")
    await eventually(lambda: topic in agent.done, "the work done")
    await asyncio.sleep(0.05)
    await runner.unload_idle()
    assert (await row(db, topic)).loaded_by == "a"

    await asyncio.sleep(0.35)
    await runner.unload_idle()
    unloaded = await row(db, topic)
    assert unloaded.loaded_by is None and unloaded.unloaded_at is not None

    agent.done.discard(topic)
    runner.wake(topic, "p1")
    await eventually(lambda: topic in agent.done, "the work done")
    assert (await row(db, topic)).loads == 2
    await runner.stop(1)


async def test_the_sweep_finds_work_nobody_runs(store: WorkStore) -> None:
    agent = SlowAgent()
    runner = runner_for(store, agent)
    topic = await new_work(store, "p1")
    sweep = asyncio.create_task(runner.sweep_forever(0.05))
    try:
        await eventually(lambda: topic in agent.done, "the work done")
    finally:
        sweep.cancel()
        await runner.stop(1)
