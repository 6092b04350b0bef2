"""How long things are kept, end to end: a person talks long enough for the conversation to fold,
learns something, has a page looked up and told; their rows are then made 40 days old, and the
retention pass (`python -m session retain`, with 30 days for the transcript and for work) lets
go of what is older than the live window, everywhere: the transcript, what Violet told in it,
memory's copies of those turns, the router's decisions and the finished work. What the person
kept stays (the memory page's fact, the document), the conversation goes on, and another
person's data is untouched."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

from tests.e2e.test_work_end_to_end import FAST_SAYS, later
from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.web import LocalWeb

RESULT_TIMEOUT_S = 60.0
# With a window of 20, a fold comes once 20 messages are live: 12 exchanges pass it.
SMALL_TALK = 9
AGED = {
    "session": "UPDATE messages SET at = datetime(at, '-40 days') "
    "WHERE conversation_id = (SELECT id FROM conversations WHERE person = :person)",
    "worker": "UPDATE work_requests SET finished_at = datetime(finished_at, '-40 days'), "
    "created_at = datetime(created_at, '-40 days') WHERE person = :person",
    "router": "UPDATE route_decisions SET at = datetime(at, '-40 days') WHERE person = :person",
}


def rows(stack: Stack, service: str, query: str, **values: object) -> list[tuple]:
    engine = create_engine(stack.database_url(service))
    try:
        with engine.begin() as db:
            return [tuple(row) for row in db.execute(text(query), values)]
    finally:
        engine.dispose()


def age(stack: Stack, person: str) -> None:
    """Makes the person's transcript, work and routing 40 days old (SQLite's own dates)."""
    for service, statement in AGED.items():
        engine = create_engine(stack.database_url(service))
        try:
            with engine.begin() as db:
                db.execute(text(statement), {"person": person})
        finally:
            engine.dispose()


def retain(stack: Stack) -> dict[str, int]:
    keeping = {"VIOLET_KEEP_TRANSCRIPT_DAYS": "30", "VIOLET_KEEP_WORK_DAYS": "30"}
    done = subprocess.run(
        [sys.executable, "-m", "session", "retain"],
        env={**stack.env, **keeping},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


async def talk(stack: Stack, web: LocalWeb, person: str, sister: str, tower: str) -> Device:
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    await phone.ask(f"My sister is called {sister}.")
    url = web.add_page(f"/{tower}", f"The {tower} tower", f"The {tower} tower opens at nine.")
    await phone.ask(f"look up {url}")
    await later(phone, f"The {tower} tower")
    await phone.ask(f"write a note tower: the {tower} tower opens at nine")
    await later(phone, "you'll find it under Documents")
    for number in range(SMALL_TALK):
        await phone.ask(f"How are you today, number {number}?")
    await phone.memory_page(1, RESULT_TIMEOUT_S)
    return phone


async def until_folded(stack: Stack, person: str, timeout_s: float = 60.0) -> int:
    """The first seq of the live window, once a fold has moved it."""
    deadline = time.monotonic() + timeout_s
    query = (
        "SELECT max(m.carry_from_seq) FROM model_conversations AS m "
        "JOIN conversations AS c ON c.id = m.conversation_id WHERE c.person = :person"
    )
    while (live := rows(stack, "session", query, person=person)[0][0] or 1) <= 1:
        assert time.monotonic() < deadline, "the conversation never folded"
        await asyncio.sleep(0.5)
    return int(live)


async def test_the_retention_pass_lets_go_of_old_words_everywhere_and_keeps_what_was_kept(
    tmp_path: Path,
) -> None:
    web = LocalWeb().start()
    env = {**FAST_SAYS, "VIOLET_FETCH_BLOCK_PRIVATE": "false", "VIOLET_WINDOW": "20"}
    tag = uuid.uuid4().hex[:8]
    ann, bob = f"ann-{tag}", f"bob-{tag}"
    words = {ann: (f"Quokka{tag}", f"Zebulon{tag}"), bob: (f"Wombat{tag}", f"Yarrow{tag}")}
    try:
        with running_stack(tmp_path / "home", "sqlite", env=env) as stack:
            for person, (sister, tower) in words.items():
                await (await talk(stack, web, person, sister, tower)).close()
            live_from = await until_folded(stack, ann)
            age(stack, ann)

            report = retain(stack)

            assert report["people"] == 1 and report["failed"] == 0
            assert report["messages"] == live_from - 1 and report["vectors"] > 0
            await check_trimmed(stack, ann, words[ann], live_from)
            await check_kept(stack, bob, words[bob])
            again = retain(stack)
            assert (again["messages"], again["rows"], again["vectors"]) == (0, 0, 0)
    finally:
        web.stop()


async def check_trimmed(stack: Stack, person: str, said: tuple[str, str], live_from: int) -> None:
    sister, tower = said
    seqs = rows(
        stack,
        "session",
        "SELECT m.seq FROM messages AS m JOIN conversations AS c ON c.id = m.conversation_id "
        "WHERE c.person = :person ORDER BY m.seq",
        person=person,
    )
    assert seqs[0][0] == live_from
    memory = rows(
        stack, "memory", "SELECT kind, text FROM memory_items WHERE person = :p", p=person
    )
    assert [text_ for kind, text_ in memory if kind == "fact" and sister in text_]
    assert not [
        text_ for kind, text_ in memory if kind != "fact" and (sister in text_ or tower in text_)
    ]
    assert not rows(stack, "router", "SELECT id FROM route_decisions WHERE person = :p", p=person)
    assert not rows(stack, "worker", "SELECT id FROM work_requests WHERE person = :p", p=person)
    assert rows(stack, "worker", "SELECT id FROM work_sessions WHERE person = :p", p=person)
    notes = [p for p in (stack.home / "workspaces").rglob("*") if p.is_file()]
    assert [note for note in notes if tower.encode() in note.read_bytes()]
    # Back on a new device: the history begins where the transcript does, the fact is still
    # remembered, and the conversation goes on.
    phone, welcome = await Device.open(stack.live_url, stack.token(person))
    first = await phone.until(lambda f: f["type"] == "message")
    assert first["seq"] == live_from and welcome["seq"] > live_from
    items = await phone.memory_page(1, RESULT_TIMEOUT_S)
    assert any(sister in item["text"] for item in items)
    assert (await phone.ask("Are you still there?"))["text"]
    await phone.close()


async def check_kept(stack: Stack, person: str, said: tuple[str, str]) -> None:
    sister, tower = said
    seqs = rows(
        stack,
        "session",
        "SELECT min(m.seq) FROM messages AS m JOIN conversations AS c "
        "ON c.id = m.conversation_id WHERE c.person = :person",
        person=person,
    )
    assert seqs == [(1,)]
    memory = rows(
        stack, "memory", "SELECT kind, text FROM memory_items WHERE person = :p", p=person
    )
    assert [text_ for kind, text_ in memory if kind == "told" and tower in text_]
    assert rows(stack, "worker", "SELECT id FROM work_requests WHERE person = :p", p=person)
