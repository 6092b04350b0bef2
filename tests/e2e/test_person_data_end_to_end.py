"""A person's data is theirs, end to end: one person talks to Violet until something of theirs is
in every service and store (transcript, memory and its vectors, told records, routing cards,
work, an approval, a document), the operator takes their archive and then deletes them, and
afterwards no row, vector file, work folder, log line or span holds their name or their words,
while a second person's data is untouched. Again with the session killed (SIGKILL) in the middle of
the deletion: started again, it finishes it."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path

import jsonschema
import pytest
import websockets
from sqlalchemy import create_engine, inspect, text

from tests.e2e.test_work_end_to_end import FAST_SAYS, later
from tests.support.device import Device
from tests.support.stack import SERVICES, Stack, running_stack
from tests.support.web import LocalWeb

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
RESULT_TIMEOUT_S = 60.0


def violet(stack: Stack, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "violet_cli.main", *arguments],
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=300,
    )


class Person:
    """Someone whose words are theirs alone: a name and a few words nobody else says."""

    def __init__(self, first: str) -> None:
        tag = uuid.uuid4().hex[:8]
        self.name = f"{first}-{tag}"
        self.sister = f"Quokka{tag}"
        self.lighthouse = f"Zebulon{tag}"
        self.address = f"{first}-{tag}@example.org"

    @property
    def words(self) -> tuple[str, ...]:
        return (self.name, self.sister, self.lighthouse, self.address)


async def fill(stack: Stack, web: LocalWeb, person: Person) -> Device:
    """Something of the person in every service: memory, a page told, a note, an approval."""
    phone, _ = await Device.open(stack.live_url, stack.token(person.name))
    await phone.ask(f"My sister is called {person.sister}.")
    url = web.add_page(
        f"/{person.lighthouse}",
        f"The {person.lighthouse} lighthouse",
        f"The {person.lighthouse} lighthouse opens at nine.",
    )
    await phone.ask(f"look up {url}")
    await later(phone, f"The {person.lighthouse} lighthouse")
    await phone.ask(f"write a note lighthouse: the {person.lighthouse} lighthouse opens at nine")
    await later(phone, "you'll find it under Documents")
    await phone.ask(f"send an email to {person.address} saying hi")
    await later(phone, f"send an email to {person.address}")
    await phone.ask("no")
    await later(phone, "didn't send the email")
    await phone.memory_page(1, RESULT_TIMEOUT_S)
    return phone


def everything_stored(stack: Stack) -> str:
    """Every row of every table of every service, as text."""
    urls = {stack.database_url(service) for service in SERVICES if service != "gateway"}
    found = []
    for url in urls:
        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with engine.connect() as db:
                for table in inspect(engine).get_table_names():
                    rows = db.execute(text(f'SELECT * FROM "{table}"')).all()
                    found += [f"{table}: {row}" for row in rows]
        finally:
            engine.dispose()
    return "\n".join(found)


def files_holding(home: Path, words: tuple[str, ...]) -> list[str]:
    """Files under the stack's home (vector stores, work folders, logs) holding any of the
    words, as bytes anywhere in them."""
    wanted = [word.encode() for word in words]
    holding = []
    for path in home.rglob("*"):
        if path.is_file() and path.suffix not in (".db", ".db-wal", ".db-shm"):
            data = path.read_bytes()
            holding += [f"{path.relative_to(home)}: {w!r}" for w in wanted if w in data]
    return holding


def written(path: str) -> bool:
    return Path(path).stat().st_size > 0


def check_archive(path: Path, person: Person, other: Person) -> None:
    archive = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
    data = json.loads(archive.read("data.json"))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    said = " ".join(message["text"] for message in data["conversation"])
    assert person.sister in said and person.address in said
    assert any(person.sister in item["text"] for item in data["remembered"])
    assert any(source.get("page") for told in data["told"] for source in told["sources"])
    note = next(d for d in data["documents"] if not d["deleted"])
    assert person.lighthouse.encode() in archive.read(note["file"])
    assert data["work"] and data["approvals"][0]["answer"] == "no"
    assert data["devices"]
    everything = b"".join(archive.read(name) for name in archive.namelist())
    assert not any(word.encode() in everything for word in other.words)
    for internal in (b"ask_work_session", b"c_", b"work_sessions", b"tool_use"):
        assert internal not in archive.read("data.json")


async def refused(stack: Stack, token: str) -> bool:
    """Whether a hello with the token is refused as signed out."""
    try:
        await Device.open(stack.live_url, token)
    except (websockets.ConnectionClosed, AssertionError, KeyError):
        return True
    return False


async def check_gone(stack: Stack, person: Person, other: Person) -> None:
    stored = everything_stored(stack)
    assert not [word for word in person.words if word in stored]
    assert all(word in stored for word in (other.name, other.sister, other.lighthouse))
    assert not files_holding(stack.home, person.words)
    assert files_holding(stack.home, (other.lighthouse,))


async def check_afterwards(stack: Stack, person: Person, other: Person, old: str) -> None:
    assert await refused(stack, old)
    await asyncio.sleep(1.1)  # a token issued in a later second than the deletion
    fresh, welcome = await Device.open(stack.live_url, stack.token(person.name))
    assert welcome["seq"] == 0
    await fresh.send({"type": "memory.list"})
    page = await fresh.until(lambda f: f["type"] == "memory")
    assert page["items"] == [] and page["told"] == []
    await fresh.close()
    # The other person goes on as before.
    phone, _ = await Device.open(stack.live_url, stack.token(other.name))
    items = await phone.memory_page(1, RESULT_TIMEOUT_S)
    assert any(other.sister in item["text"] for item in items)
    await phone.close()


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
async def test_a_person_is_exported_then_deleted_everywhere(tmp_path: Path, database: str) -> None:
    web = LocalWeb().start()
    # Spans go to a file in the stack's home, which is searched with the rest.
    traces = str(tmp_path / "home" / "logs" / "spans.jsonl")
    env = {**FAST_SAYS, "VIOLET_FETCH_BLOCK_PRIVATE": "false", "VIOLET_TRACE_FILE": traces}
    ann, bob = Person("ann"), Person("bob")
    try:
        with running_stack(tmp_path / "home", database, env=env) as stack:
            for person in (ann, bob):
                await (await fill(stack, web, person)).close()
            old_token = stack.token(ann.name)
            archive = tmp_path / "ann.zip"
            exported = violet(stack, "person", "export", ann.name, "--out", str(archive))
            assert exported.returncode == 0, exported.stderr
            check_archive(archive, ann, bob)
            archive.unlink()

            deleted = violet(stack, "person", "delete", ann.name, "--yes")
            assert deleted.returncode == 0, deleted.stderr
            assert "deleted everywhere" in deleted.stdout
            await check_gone(stack, ann, bob)
            assert written(traces)  # the spans were searched too
            await check_afterwards(stack, ann, bob, old_token)
    finally:
        web.stop()


async def test_a_deletion_killed_halfway_is_finished_after_a_restart(tmp_path: Path) -> None:
    web = LocalWeb().start()
    faults = tmp_path / "faults"
    env = {
        **FAST_SAYS,
        "VIOLET_FETCH_BLOCK_PRIVATE": "false",
        "VIOLET_FAULT_FILE": str(faults),
        "VIOLET_SWEEP_S": "0.5",
        # The removal's lease, left by the killed replica, runs out soon after the restart.
        "VIOLET_LOCK_LEASE_S": "3",
    }
    ann, bob = Person("ann"), Person("bob")
    try:
        with running_stack(tmp_path / "home", "sqlite", env=env) as stack:
            for person in (ann, bob):
                await (await fill(stack, web, person)).close()
            old_token = stack.token(ann.name)
            faults.write_text("session.erasure_services_erased")
            deleted = violet(stack, "person", "delete", ann.name, "--yes")
            assert deleted.returncode != 0
            assert stack.processes["session"].wait(30) != 0  # it killed itself halfway
            stack.processes.pop("session")
            faults.write_text("")
            stack.start("session")
            await _until_gone(stack, ann)
            await check_gone(stack, ann, bob)
            await check_afterwards(stack, ann, bob, old_token)
    finally:
        web.stop()


async def _until_gone(stack: Stack, person: Person, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while person.name in everything_stored(stack):
        assert time.monotonic() < deadline, f"{person.name} still stored"
        await asyncio.sleep(0.5)
