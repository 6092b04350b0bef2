"""Deletion is final under every race: people are deleted while their calls to the model are in
flight in every service (the main call in the session, extraction in memory, the pick in the
router, a step of work in the worker), on the strict local Messages API, which records usage,
several times over while others talk. Afterwards no row of any service, no vector file, no work
folder and no line of `violet usage` names them, and the people who stay keep everything."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.test_person_data_end_to_end import (
    Person,
    everything_stored,
    files_holding,
    violet,
)
from tests.e2e.test_person_keys import kind_of
from tests.e2e.test_work_end_to_end import FAST_SAYS
from tests.support.device import Device
from tests.support.stack import Stack, running_stack
from tests.support.web import LocalWeb

# What each round waits to see in flight before deleting: the session's main call and the
# worker's step, memory's origin call (after the answer), the router's pick (a second request
# with a topic to choose from).
ROUNDS = ({"main", "work"}, {"origin"}, {"pick"})
PACE_S = 1.5  # each answer of the API waits this long, so calls are in flight when deleting
SETTLE_S = 120.0


def says_of(person: Person, web: LocalWeb) -> list[str]:
    url = web.add_page(
        f"/{person.lighthouse}",
        f"The {person.lighthouse} lighthouse",
        f"The {person.lighthouse} lighthouse opens at nine.",
    )
    return [
        f"My sister is called {person.sister}.",
        f"look up {url}",
        f"I live near the {person.lighthouse} lighthouse and my email is {person.address}.",
        f"look up {url}?when=evening",  # the router picks between this and the first
    ]


async def talk(stack: Stack, person: Person, web: LocalWeb) -> Device:
    """Opens a device and says everything at once, waiting for no answer."""
    phone, _ = await Device.open(stack.live_url, stack.token(person.name))
    for say in says_of(person, web):
        await phone.send({"type": "say", "text": say, "id": f"m-{time.monotonic_ns()}"})
    return phone


def in_flight(stack: Stack, who: str) -> Counter[str]:
    """The person's requests the API is answering now, by kind of call."""
    assert stack.model_api is not None
    return Counter(
        kind_of(r["body"])
        for r in stack.model_api.requests()
        if r["path"] == "/v1/messages"
        and r["status"] == 0
        and (r["body"].get("metadata") or {}).get("user_id") == who
    )


async def until_in_flight(stack: Stack, person: Person, kinds: set[str]) -> Counter[str]:
    """Waits (a while at most) until the person's calls of `kinds` are all in flight together;
    what is in flight when it stops waiting."""
    deadline = time.monotonic() + 30
    seen: Counter[str] = Counter()
    while time.monotonic() < deadline:
        who = stack.pseudonym(person.name)
        seen = in_flight(stack, who) if who else Counter()
        if kinds <= set(seen):
            break
        await asyncio.sleep(0.05)
    return seen


async def settled(stack: Stack) -> None:
    deadline = time.monotonic() + SETTLE_S
    while stack.unfinished():
        assert time.monotonic() < deadline, stack.unfinished()
        await asyncio.sleep(0.5)


@pytest.mark.parametrize("database", ["sqlite", "postgres"])
async def test_people_deleted_with_calls_in_flight_leave_nothing(
    tmp_path: Path, database: str
) -> None:
    web = LocalWeb().start()
    env = {**FAST_SAYS, "VIOLET_FETCH_BLOCK_PRIVATE": "false"}
    stays = Person("bob")
    gone: list[tuple[Person, str]] = []
    caught: Counter[str] = Counter()
    try:
        with running_stack(tmp_path / "home", database, "anthropic", env) as stack:
            assert stack.model_api is not None
            bob = await talk(stack, stays, web)
            await bob.until(lambda f: f.get("from") == "violet")
            await bob.close()
            stack.model_api.pace(PACE_S)
            for wanted in ROUNDS:
                person = Person("ann")
                phone = await talk(stack, person, web)
                # Others talk all along: the load the deletion runs under.
                await (await talk(stack, stays, web)).close()
                caught += await until_in_flight(stack, person, wanted)
                who = stack.pseudonym(person.name)
                assert who, "the person was never named to the API"
                deleted = await asyncio.to_thread(
                    violet, stack, "person", "delete", person.name, "--yes"
                )
                assert deleted.returncode == 0, deleted.stderr
                gone.append((person, who))
                await phone.close()
            stack.model_api.pace(0)
            await settled(stack)
            await asyncio.sleep(3)  # usage is sent on in batches, once a second
            await check_nothing_names(stack, gone, stays)
            assert stack.model_api.rejections() == []
    finally:
        web.stop()
    # The deletions raced calls under way in several services (over the rounds). The router's
    # pick and memory's origin call come and go quickly: a loaded machine may miss one of them.
    assert {"main", "work"} <= set(caught) and len(set(caught)) >= 3, caught


async def check_nothing_names(stack: Stack, gone: list[tuple[Person, str]], stays: Person) -> None:
    stored = everything_stored(stack)
    for person, who in gone:
        words = (*person.words, who)
        assert not [word for word in words if word in stored], person.name
        assert not files_holding(stack.home, words), person.name
    assert stays.name in stored and stays.sister in stored
    usage = violet(stack, "usage")
    assert usage.returncode == 0, usage.stderr
    for person, _ in gone:
        assert person.name not in usage.stdout
    report = json.loads(usage.stdout.strip().splitlines()[-1])
    assert stays.name in json.dumps(report)
