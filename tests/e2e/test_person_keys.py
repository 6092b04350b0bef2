"""Each person's calls on that person's own Anthropic key, end to end: three people (two with a
key of their own, one on the operator's) on real services over PostgreSQL, two replicas of the
session and gateway, the real SDK against the local Messages API. Every request of a person, of
every kind, carries that person's key; a removed key stops being used on both replicas within
the cache time; a refused key is told once; a person at their budget is told so and their work
waits, then goes on after a raise; and no key is anywhere but where it is sealed."""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
import threading
from collections import defaultdict
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest

from gateway import phrases
from tests.integration.test_phone_protocol import assert_frames_leak_nothing
from tests.support.device import Device
from tests.support.messages_api import MessagesAPIProcess, structured_name
from tests.support.messages_api import key_of as api_key_of
from tests.support.postgres import fresh_schema
from tests.support.stack import Stack
from tests.support.waiting import eventually
from tests.support.web import LocalWeb
from violet.identity import issue_operator_token
from violet.models.tools import WORK_TOOLS
from violet.v1 import accounts_pb2, accounts_pb2_grpc

CACHE_S = 1.0  # each replica asks again for a person's key after this long
RESULT_TIMEOUT_S = 90.0
WORK_TOOL_NAMES = {tool.name for tool in WORK_TOOLS}


def new_key(label: str) -> str:
    return f"sk-ant-api03-{label}-{secrets.token_urlsafe(48)}"


@dataclass
class World:
    stack: Stack
    api: MessagesAPIProcess
    web: LocalWeb
    database_url: str
    keys: dict[str, str]  # "ann", "bob", "operator"
    devices: list[Device] = field(default_factory=list)  # this test's
    frames: list[dict[str, Any]] = field(default_factory=list)  # every frame devices got

    def live_url(self, gateway: str = "gateway") -> str:
        return f"ws://{self.stack.address(gateway)}/v1/live"

    async def device(self, person: str, gateway: str = "gateway") -> Device:
        device, _ = await Device.open(self.live_url(gateway), self.stack.token(person))
        self.devices.append(device)
        return device

    def violet(self, *arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "violet_cli.main", *arguments],
            input=stdin,
            env=self.stack.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def requests_of(self, person: str) -> list[dict[str, Any]]:
        who = self.stack.pseudonym(person)
        return [
            r
            for r in self.api.requests()
            if r["path"] == "/v1/messages"
            and (r["body"].get("metadata") or {}).get("user_id") == who
        ]


def results(frame: dict[str, Any]) -> bool:
    """Whether a frame is a result of background work: Violet's, answering no say."""
    return frame["type"] == "message" and frame["from"] == "violet" and "reply_to" not in frame


def kind_of(body: dict[str, Any]) -> str:
    named = structured_name(body)
    if named:
        return named
    offered = {tool["name"] for tool in body.get("tools") or []}
    return "work" if offered & WORK_TOOL_NAMES else "main"


def key_of(request: dict[str, Any]) -> str:
    return api_key_of(request["headers"]) or ""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    keys = {"ann": new_key("ann"), "bob": new_key("bob"), "operator": new_key("operator")}
    web = LocalWeb().start()
    with fresh_schema() as database_url, MessagesAPIProcess() as api:
        home = tmp_path_factory.mktemp("keys")
        env = {
            "VIOLET_DATABASE_URL": database_url,
            "ANTHROPIC_API_KEY": keys["operator"],
            "ANTHROPIC_BASE_URL": api.url,
            "VIOLET_KEY_CACHE_S": str(CACHE_S),
            "VIOLET_WINDOW": "20",
            "VIOLET_TRACE_FILE": str(home / "trace.jsonl"),
            "VIOLET_SEARCH_URL": web.search_url,
            "VIOLET_FETCH_BLOCK_PRIVATE": "false",
            "VIOLET_WORK_SWEEP_S": "1",
            "VIOLET_SAYS_PER_MINUTE": "100000",
            "VIOLET_SAY_BURST": "1000",
        }
        stack = Stack(home, extra_env=env, model_api=api)
        try:
            stack.start()
            session_b = stack.start_replica("session", "b")
            stack.start_replica("gateway", "b", {"VIOLET_SESSION_ADDR": stack.address(session_b)})
            yield World(stack, api, web, database_url, keys)
        finally:
            stack.stop()
            web.stop()


@pytest.fixture(autouse=True)
async def closing(world: World) -> AsyncIterator[None]:
    """Closes the test's devices after it, keeping what they were sent for the last scan."""
    yield
    for device in world.devices:
        assert_frames_leak_nothing(device.seen)
        world.frames += device.seen
        await device.close()
    world.devices.clear()


async def talk(device: Device, *texts: str) -> list[dict[str, Any]]:
    return [await device.ask(text) for text in texts]


async def set_key(device: Device, key: str) -> dict[str, Any]:
    await device.send({"type": "key.set", "key": key})
    return await device.until(lambda f: f["type"] == "account", timeout=60)


async def test_every_call_of_each_person_goes_on_that_persons_key(world: World) -> None:
    ann, bob, cat = [await world.device(name) for name in ("ann", "bob", "cat")]
    shown = await set_key(ann, world.keys["ann"])
    assert (shown["key"], shown["ending"]) == ("yours", world.keys["ann"][-4:])
    assert world.keys["ann"] not in json.dumps(shown)
    # Bob's key is set by the operator, read from standard input.
    done = world.violet("person", "key", "set", "bob", stdin=world.keys["bob"] + "\n")
    assert done.returncode == 0, done.stderr
    assert world.keys["bob"][-4:] in done.stdout and world.keys["bob"] not in done.stdout

    tides = world.web.add_page("/tides", "Tide tables", "High tide is at 6 in the morning.")
    for device in (ann, bob, cat):
        await talk(device, "hello there", "my favourite colour is green")
        await talk(device, f"look up {tides}")
        # The topic's card reaches the router before its result: the next request is picked.
        await device.until(results, RESULT_TIMEOUT_S)
        await talk(device, f"look up {tides} for tomorrow too")
        await device.until(results, RESULT_TIMEOUT_S)
        # Past the window, so the conversation folds.
        await talk(device, *(f"here is thought number {n}" for n in range(8)))

    def kinds(person: str) -> set[str]:
        return {kind_of(r["body"]) for r in world.requests_of(person)}

    for person in ("ann", "bob", "cat"):
        await eventually(
            lambda p=person: {"main", "work", "origin", "fold", "pick"} <= kinds(p),
            f"every kind of call made for {person}",
            timeout_s=60,
        )
    for person, key in (("ann", "ann"), ("bob", "bob"), ("cat", "operator")):
        used = {key_of(r) for r in world.requests_of(person)}
        assert used == {world.keys[key]}, f"{person}'s calls went on {len(used)} keys"


async def test_a_removed_key_stops_being_used_on_both_replicas(world: World) -> None:
    on_a = await world.device("ann")
    on_b = await world.device("ann", gateway="gateway-b")
    await on_b.send({"type": "key.remove"})
    removed = await on_b.until(lambda f: f["type"] == "account")
    assert removed["key"] == "none" and removed["ending"] == ""
    await asyncio.sleep(CACHE_S + 0.5)
    before = len(world.requests_of("ann"))
    await on_a.ask("are you still there")
    await on_b.ask("and from the other one")
    after = world.requests_of("ann")[before:]
    assert after, "Ann's turns made no calls"
    assert {key_of(r) for r in after} == {world.keys["operator"]}
    # The next key she sets serves at once, on the other replica too.
    await set_key(on_a, world.keys["ann"])
    await asyncio.sleep(CACHE_S + 0.5)
    before = len(world.requests_of("ann"))
    await on_b.ask("and now")
    assert {key_of(r) for r in world.requests_of("ann")[before:]} == {world.keys["ann"]}


@pytest.mark.expects_fallbacks
async def test_a_refused_key_is_told_once_and_the_say_answered_once(world: World) -> None:
    world.api.refuse_key(world.keys["bob"], 401)
    bob = await world.device("bob")
    first = await bob.say("what should I cook tonight")
    answer = await bob.answer_to(first)
    assert "Your Anthropic key was refused" in answer["text"]
    assert "Violet's own account" in answer["text"]
    await asyncio.sleep(1.0)
    answers = [f for f in bob.seen if f["type"] == "message" and f.get("reply_to") == first]
    assert len(answers) == 1
    again = await bob.ask("and for dessert")
    assert "refused" not in again["text"]
    await bob.send({"type": "account.show"})
    shown = await bob.until(lambda f: f["type"] == "account")
    assert (shown["key"], shown["ending"]) == ("refused", world.keys["bob"][-4:])
    # From then on, the operator's key serves him, and his key is not tried again.
    last = world.requests_of("bob")[-3:]
    assert {key_of(r) for r in last} == {world.keys["operator"]}


async def test_past_five_keys_an_hour_a_person_is_told_to_wait_and_no_key_is_tried(
    world: World,
) -> None:
    dee = await world.device("dee")
    tried = [new_key(f"guess{n}") for n in range(6)]
    for key in tried[:5]:
        world.api.refuse_key(key, 401)
        assert (await set_key(dee, key))["type"] == "account"
    await dee.send({"type": "key.set", "key": tried[5]})
    refusal = await dee.until(lambda f: f["type"] == "error")
    assert refusal == {
        "type": "error",
        "code": "rate_limited",
        "text": phrases.KEY_SETS_TOO_MANY["en"],
    }
    assert all(key_of(r) != tried[5] for r in world.api.requests())


async def test_a_key_said_in_the_conversation_is_kept_only_as_its_ending(world: World) -> None:
    cat = await world.device("cat")
    pasted = new_key("pasted")
    said = await cat.say(f"my key is {pasted} is that ok")
    await cat.answer_to(said)
    echoed = [f for f in cat.seen if f["type"] == "message" and f["from"] == "you"]
    assert echoed and pasted not in echoed[-1]["text"]
    assert pasted[-4:] in echoed[-1]["text"]
    page = await cat.memory_page(1)
    assert all(pasted not in item["text"] for item in page)
    assert all(pasted not in json.dumps(r["body"]) for r in world.api.requests())


async def test_a_person_at_their_budget_is_told_and_their_work_resumes_after_a_raise(
    world: World,
) -> None:
    dan = await world.device("dan")
    # Dan's work reads a page that answers only when let: meanwhile his day gets spent.
    gate = threading.Event()
    page = world.web.add_page("/slow", "Ferry times", "The ferry leaves at noon.", gate=gate)
    await dan.ask(f"look up {page}")
    await eventually(
        lambda: "/slow" in world.web.requests, "the work to fetch the page", timeout_s=60
    )
    tiny = world.violet("person", "budget", "dan", "--day", "0.000001")
    assert tiny.returncode == 0, tiny.stderr
    await asyncio.sleep(CACHE_S + 1.5)  # every replica's cache renewed
    gate.set()
    held = await dan.ask("olá, tudo bem com você hoje?")
    assert "limite de hoje" in held["text"]
    await asyncio.sleep(3.0)
    told = [f for f in dan.seen if f["type"] == "message" and results(f)]
    assert not told, "work went on past the budget"
    raised = world.violet("person", "budget", "dan", "--day", "0")
    assert raised.returncode == 0, raised.stderr
    result = await dan.until(results, RESULT_TIMEOUT_S)
    assert "noon" in result["text"].lower() or "ferry" in result["text"].lower()


async def test_keys_rotated_under_a_new_key_encryption_key_still_serve(world: World) -> None:
    before = kek_ids(world.database_url)
    done = world.violet("keys", "rotate")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["rotated"] == len(before) >= 1 and report["current"] not in before.values()
    assert set(kek_ids(world.database_url).values()) == {report["current"]}
    await asyncio.sleep(CACHE_S + 0.5)
    ann = await world.device("ann")
    seen = len(world.requests_of("ann"))
    await ann.ask("tell me something nice")
    await ann.ask(f"look up {world.web.add_page('/sun', 'Sunrise', 'The sun rises at 7.')}")
    await ann.until(results, RESULT_TIMEOUT_S)
    assert {key_of(r) for r in world.requests_of("ann")[seen:]} == {world.keys["ann"]}


def kek_ids(url: str) -> dict[str, str]:
    """Who has a key sealed, and under which key-encryption key (read as the tables' owner)."""
    with psycopg.connect(url) as connection:
        return dict(connection.execute("SELECT person, kek_id FROM person_keys").fetchall())


async def test_only_an_operator_token_reaches_the_operators_calls(world: World) -> None:
    request = accounts_pb2.PersonKeyRequest(person="eve", key=new_key("eve"))
    async with grpc.aio.insecure_channel(world.stack.address("session")) as channel:
        operator = accounts_pb2_grpc.OperatorStub(channel)
        # A gateway or worker taken over holds the stack's secret: an operator token made
        # from it is refused too.
        from_stack_secret = issue_operator_token(world.stack.secret)
        tokens = (
            world.stack.internal_token("eve"),
            world.stack.token("eve"),
            from_stack_secret,
            "",
        )
        for token in tokens:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await operator.SetPersonKey(request, metadata=bearer(token), timeout=10)
            assert refused.value.code() in (
                grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.UNAUTHENTICATED,
            )
        # A person's own calls cannot name anyone else: the token says whose key it is.
        accounts = accounts_pb2_grpc.AccountsStub(channel)
        shown = await accounts.Show(
            accounts_pb2.ShowRequest(), metadata=bearer(world.stack.internal_token("eve"))
        )
    assert shown.key == "none"
    assert "eve" not in kek_ids(world.database_url)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


def test_usage_is_kept_per_person_with_its_cost(world: World) -> None:
    done = world.violet("usage")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    people = report["people"]
    assert {"ann", "bob", "cat", "dan"} <= set(people)
    assert people["ann"]["by_payer"]["own"] > 0
    assert (
        people["cat"]["by_payer"].get("own", 0) == 0 and people["cat"]["by_payer"]["operator"] > 0
    )
    every_service = {"reply.main", "reply.work", "structured.origin", "structured.fold"}
    assert every_service | {"structured.pick"} <= set(people["cat"]["by_call"])
    one = world.violet("usage", "--person", "ann", "--since", "2000-01-01")
    assert set(json.loads(one.stdout.strip().splitlines()[-1])["people"]) == {"ann"}


async def test_no_key_is_anywhere_but_sealed(world: World) -> None:
    secrets_ = [world.keys["ann"], world.keys["bob"]]
    places = {"frames": json.dumps(world.frames, ensure_ascii=False)}
    for log in sorted((world.stack.home / "logs").glob("*.log")):
        places[log.name] = log.read_text(errors="replace")
    places["trace"] = (world.stack.home / "trace.jsonl").read_text()
    places["tables"] = dump_tables(world.database_url)
    for where, text in places.items():
        for key in secrets_:
            assert key not in text, f"a key in {where}"
            assert key[:24] not in text, f"the start of a key in {where}"


def dump_tables(url: str) -> str:
    """Every row of every table of the stack's schema, as text."""
    dumped: dict[str, list[str]] = defaultdict(list)
    with psycopg.connect(url) as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        for (table,) in tables:
            for row in connection.execute(f'SELECT * FROM "{table}"'):
                dumped[table].append(" ".join(_as_text(value) for value in row))
    return "\n".join(f"{t}: {line}" for t, lines in dumped.items() for line in lines)


def _as_text(value: object) -> str:
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("latin-1")
    return str(value)


async def test_without_an_operator_key_only_people_with_their_own_use_the_models(
    tmp_path: Path,
) -> None:
    own = new_key("fay")
    with MessagesAPIProcess() as api:
        stack = Stack(tmp_path, extra_env={"ANTHROPIC_BASE_URL": api.url}, model_api=api)
        try:
            stack.start()
            fay, gus = [
                (await Device.open(stack.live_url, stack.token(name)))[0] for name in ("fay", "gus")
            ]
            assert (await set_key(fay, own))["key"] == "yours"
            await fay.ask("hello there")
            await gus.ask("hello there")
            by_person = defaultdict(set)
            for request in api.requests():
                who = (request["body"].get("metadata") or {}).get("user_id")
                by_person[who].add(key_of(request))
            assert by_person[stack.pseudonym("fay")] == {own}
            assert stack.pseudonym("gus") not in by_person  # the built-in model answered him
            for device in (fay, gus):
                assert_frames_leak_nothing(device.seen)
                await device.close()
        finally:
            stack.stop()
