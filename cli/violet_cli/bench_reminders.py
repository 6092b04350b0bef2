"""`violet bench --only reminders`: what pending reminders cost the session, and how soon a due
one is told.

A local stack (offline, SQLite) is given 10,000 pending reminders (100 people with 100 each, due
next year), laid straight into the session's tables as the set_reminder tool would leave them.
The session's CPU is read over a quiet minute before and after; then some of the reminders are
made due over half a minute while their people are connected, and each one's delay is the time
from its due instant to its message arriving on the person's websocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import websockets
from sqlalchemy import create_engine, insert, update

from violet import database
from violet_cli.bench import Distribution, LocalStack, local_stack, machine
from violet_cli.bench_cpu import CpuUse, cpu_between, read_cpu

PEOPLE = 100
EACH = 100
QUIET_S = 60.0
# Reminders made due while their people are connected, over this span.
DUE_PEOPLE = 20
DUE_EACH = 5
DUE_OVER_S = 30.0
# Before the first is due: the phones are connected and settled.
DUE_AFTER_S = 5.0
TOLD_WAIT_S = 60.0
ZONE = "UTC"


@dataclass(frozen=True)
class ReminderFigures:
    pending: int
    idle_without: CpuUse
    idle_with: CpuUse
    delays: Distribution
    told: int
    due: int

    def session_ms_per_minute(self, cpu: CpuUse) -> float:
        return cpu.core_share()["session"] * 60_000


def _laid_down(stack: LocalStack, people: int, each: int) -> dict[str, list[str]]:
    """Conversations and pending reminders written into the session's tables; each person's
    reminder ids."""
    engine = create_engine(database.service_url(stack.settings, "session"))
    from session.tables import conversations, reminders

    now = datetime.now(UTC)
    later = now + timedelta(days=365)
    kept: dict[str, list[str]] = {}
    with engine.begin() as connection:
        for number in range(people):
            person, conversation = f"bench-reminded-{number}", "c_" + secrets.token_hex(8)
            connection.execute(
                insert(conversations).values(
                    id=conversation, person=person, created_at=now, last_seq=0, summary=""
                )
            )
            rows = [
                {
                    "id": "r_" + secrets.token_hex(4),
                    "conversation_id": conversation,
                    "text": f"reminder {index} of {person}",
                    "work": False,
                    "zone": ZONE,
                    "starts": later.strftime("%Y-%m-%dT%H:%M"),
                    "repeat": "",
                    "next_at": later.replace(second=0, microsecond=0),
                    "created_at": now,
                }
                for index in range(each)
            ]
            connection.execute(insert(reminders), rows)
            kept[person] = [str(row["id"]) for row in rows]
    engine.dispose()
    return kept


def _made_due(
    stack: LocalStack, chosen: dict[str, list[str]], first: datetime
) -> dict[str, datetime]:
    """The chosen reminders due one after another from `first`, over `DUE_OVER_S`; each
    one's text and due instant."""
    engine = create_engine(database.service_url(stack.settings, "session"))
    from session.tables import reminders

    ids = [reminder for person in sorted(chosen) for reminder in chosen[person]]
    step = DUE_OVER_S / max(len(ids) - 1, 1)
    due: dict[str, datetime] = {}
    with engine.begin() as connection:
        for index, reminder in enumerate(ids):
            at = first + timedelta(seconds=index * step)
            connection.execute(
                update(reminders)
                .where(reminders.c.id == reminder)
                .values(next_at=at, starts=at.strftime("%Y-%m-%dT%H:%M"))
            )
            text = (
                connection.execute(reminders.select().where(reminders.c.id == reminder)).one().text
            )
            due[text] = at
    engine.dispose()
    return due


async def _told(stack: LocalStack, people: list[str], due: dict[str, datetime]) -> list[float]:
    """Each due reminder's delay (ms) from its due instant to its message on the websocket."""
    arrived: dict[str, float] = {}
    everything = asyncio.Event()

    async def follow(person: str) -> None:
        async with websockets.connect(stack.live_url, max_size=None) as socket:
            await socket.send(
                json.dumps({"type": "hello", "token": stack.token(person), "since": 0})
            )
            with contextlib.suppress(asyncio.CancelledError, websockets.ConnectionClosed):
                async for raw in socket:
                    frame = json.loads(raw)
                    if frame.get("type") != "message" or frame.get("from") != "violet":
                        continue
                    for text in due:
                        if text in frame["text"] and text not in arrived:
                            arrived[text] = time.time()
                    if len(arrived) == len(due):
                        everything.set()

    followers = [asyncio.create_task(follow(person)) for person in people]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(everything.wait(), DUE_AFTER_S + DUE_OVER_S + TOLD_WAIT_S)
    for task in followers:
        task.cancel()
    await asyncio.gather(*followers, return_exceptions=True)
    return [(arrived[text] - at.timestamp()) * 1000 for text, at in due.items() if text in arrived]


async def _quiet(stack: LocalStack, seconds: float) -> CpuUse:
    before = read_cpu(stack.pids)
    await asyncio.sleep(seconds)
    return cpu_between(before, read_cpu(stack.pids))


def measure_reminders() -> ReminderFigures:
    with local_stack({"VIOLET_REMINDER_POLL_S": "1"}) as stack:
        idle_without = asyncio.run(_quiet(stack, QUIET_S))
        kept = _laid_down(stack, PEOPLE, EACH)
        idle_with = asyncio.run(_quiet(stack, QUIET_S))
        chosen = {person: kept[person][:DUE_EACH] for person in sorted(kept)[:DUE_PEOPLE]}
        first = datetime.now(UTC) + timedelta(seconds=DUE_AFTER_S)
        due = _made_due(stack, chosen, first)
        delays = asyncio.run(_told(stack, sorted(chosen), due))
    return ReminderFigures(
        PEOPLE * EACH, idle_without, idle_with, Distribution(delays), len(delays), len(due)
    )


def render_reminders(found: ReminderFigures) -> str:
    without = found.session_ms_per_minute(found.idle_without)
    with_them = found.session_ms_per_minute(found.idle_with)
    delays = found.delays
    return f"""## Reminders: {found.pending:,} pending

Measured on {datetime.now(UTC):%Y-%m-%d}, on {machine()}. A local stack (offline, SQLite, the
session looking for due reminders every second) is given {found.pending:,} pending reminders
({PEOPLE} people, {EACH} each, due next year), written into the session's tables. The session's
CPU over a quiet minute, before and after: {without:.0f} ms and {with_them:.0f} ms of CPU per
minute. Then {found.due} of them ({DUE_EACH} for each of {DUE_PEOPLE} connected people) come due
one after another over {DUE_OVER_S:.0f} s; from each one's due instant to its message on the
person's websocket: p50 {delays.percentile(50):.0f} ms, p99 {delays.percentile(99):.0f} ms
({found.told} of {found.due} told).
"""
