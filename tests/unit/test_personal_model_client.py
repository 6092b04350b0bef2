"""Each call on the account that pays for its person: the person's own key, the operator's, the
built-in model, or none (held); a refused own key is reported once and the call made again on
whoever pays now; clients on people's keys are pooled, bounded, and closed when their key goes.
And the credential cache behind it: asked again after its time, once for concurrent askers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from violet import fallbacks
from violet.keyring import ApiKey
from violet.models import Reply, Usage, UsageLedger
from violet.models.accounting import current_pseudonym
from violet.models.base import ModelClient, System, Tier, Tool, ToolChoice, reply_from_blocks
from violet.models.credentials import CallsHeld, Credential, CredentialCache, Hold, Payer
from violet.models.errors import KeyRefused
from violet.models.messages import JsonObject, ModelMessage
from violet.models.personal import PayingLedger, PersonalModelClient

ANN_KEY = ApiKey("sk-ant-api03-ann-aaaaaaaaaaaaaaaaaaaa-AAAA")
BOB_KEY = ApiKey("sk-ant-api03-bob-bbbbbbbbbbbbbbbbbbbb-BBBB")
NEW_KEY = ApiKey("sk-ant-api03-new-nnnnnnnnnnnnnnnnnnnn-NNNN")
ANSWERED = "answered"


@dataclass
class FakeClient:
    """A model client that answers with its own name, or refuses its key when told to."""

    name: str
    ledger: UsageLedger = field(default_factory=UsageLedger)
    refuses_key: bool = False
    calls: list[str] = field(default_factory=list)
    # What each reply's person was called by, outside Violet.
    pseudonyms: list[str] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    async def reply(
        self,
        *,
        tier: Tier,
        system: System,
        messages: list[ModelMessage],
        tools: Sequence[Tool],
        person: str,
        tool_choice: ToolChoice = "auto",
    ) -> Reply:
        self.calls.append(f"reply:{person}")
        self.pseudonyms.append(current_pseudonym())
        if self.refuses_key:
            raise KeyRefused("the account refused the key (401)", status_code=401)
        text = f"{self.name} {ANSWERED}"
        return reply_from_blocks(
            [{"type": "text", "text": text}], "end_turn", Usage("fake", 1, 1, 0.0)
        )

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        self.calls.append(f"{name}:{person}")
        if self.refuses_key:
            raise KeyRefused("the account refused the key (401)", status_code=401)
        return {"by": self.name}

    async def aclose(self) -> None:
        self.closed.set()


@dataclass
class FakeAccounts:
    """The session service's side: each person's credential, and the refusals reported; a
    refused key is set aside, after which `after_refusal` pays."""

    credentials: dict[str, Credential]
    after_refusal: Credential = Credential(Payer.OPERATOR)
    asked: list[str] = field(default_factory=list)
    refused: list[tuple[str, ApiKey, str]] = field(default_factory=list)

    async def credential(self, person: str) -> Credential:
        self.asked.append(person)
        return self.credentials[person]

    async def key_refused(self, person: str, key: ApiKey, reason: str) -> None:
        self.refused.append((person, key, reason))
        self.credentials[person] = self.after_refusal


@dataclass
class Clients:
    """The clients a `PersonalModelClient` was given or made, to check which one answered."""

    operator: FakeClient = field(default_factory=lambda: FakeClient("operator"))
    built_in: FakeClient = field(default_factory=lambda: FakeClient("built-in"))
    on_keys: list[tuple[ApiKey, FakeClient]] = field(default_factory=list)
    refusing: set[ApiKey] = field(default_factory=set)

    def on_key(self, key: ApiKey) -> ModelClient:
        client = FakeClient(f"own {key.ending}", refuses_key=key in self.refusing)
        self.on_keys.append((key, client))
        return client

    def made_for(self, key: ApiKey) -> list[FakeClient]:
        return [client for made, client in self.on_keys if made == key]


def personal(
    accounts: FakeAccounts, clients: Clients, *, operator: bool = True, pool_size: int = 8
) -> PersonalModelClient:
    return PersonalModelClient(
        accounts=accounts,
        operator=clients.operator if operator else None,
        built_in=clients.built_in,
        on_key=clients.on_key,
        cache_s=60.0,
        pool_size=pool_size,
    )


async def reply_of(client: PersonalModelClient, person: str) -> str:
    answer = await client.reply(
        tier="main",
        system="You are helpful.",
        messages=[{"role": "user", "content": "hello"}],
        tools=[],
        person=person,
    )
    return answer.text


async def structured_of(client: PersonalModelClient, person: str) -> str:
    answer = await client.structured(
        name="fold", description="a summary", schema={"type": "object"}, prompt="p", person=person
    )
    return str(answer["by"])


def fired(before: dict[str, int]) -> dict[str, int]:
    return dict(fallbacks.counts() - before)


# --- who pays ---------------------------------------------------------------------------------


async def test_a_person_with_their_own_key_is_served_on_a_client_of_that_key() -> None:
    clients = Clients()
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    client = personal(accounts, clients)
    assert await reply_of(client, "ann") == f"own AAAA {ANSWERED}"
    assert await structured_of(client, "ann") == "own AAAA"
    assert [key for key, _ in clients.on_keys] == [ANN_KEY]  # made once, then pooled
    assert clients.operator.calls == clients.built_in.calls == []
    assert accounts.asked == ["ann"]  # the credential is cached between calls


async def test_each_person_is_served_on_their_own_key() -> None:
    clients = Clients()
    accounts = FakeAccounts(
        {"ann": Credential(Payer.OWN, key=ANN_KEY), "bob": Credential(Payer.OWN, key=BOB_KEY)}
    )
    client = personal(accounts, clients)
    assert await reply_of(client, "bob") == f"own BBBB {ANSWERED}"
    assert await reply_of(client, "ann") == f"own AAAA {ANSWERED}"
    assert clients.made_for(BOB_KEY)[0].calls == ["reply:bob"]
    assert clients.made_for(ANN_KEY)[0].calls == ["reply:ann"]


async def test_a_person_the_operator_pays_for_is_served_on_the_operators_client() -> None:
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.OPERATOR)}), clients)
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    assert await structured_of(client, "ann") == "operator"
    assert clients.on_keys == []
    assert clients.built_in.calls == []


async def test_with_no_key_anywhere_the_built_in_model_answers() -> None:
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.BUILT_IN)}), clients, operator=False)
    assert await reply_of(client, "ann") == f"built-in {ANSWERED}"
    assert await structured_of(client, "ann") == "built-in"


async def test_when_nobody_pays_answers_are_held_but_the_structured_calls_go_on_built_in() -> None:
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.NOBODY, Hold.NO_KEY)}), clients)
    with pytest.raises(CallsHeld) as held:
        await reply_of(client, "ann")
    assert held.value.hold is Hold.NO_KEY
    assert await structured_of(client, "ann") == "built-in"
    assert clients.operator.calls == []
    assert clients.built_in.calls == ["fold:ann"]


@pytest.mark.parametrize("hold", [Hold.BUDGET_DAY, Hold.BUDGET_MONTH])
async def test_a_budget_hold_stops_answers_and_not_the_structured_calls(hold: Hold) -> None:
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.OPERATOR, hold)}), clients)
    with pytest.raises(CallsHeld) as held:
        await reply_of(client, "ann")
    assert held.value.hold is hold
    assert hold.value in str(held.value)
    assert await structured_of(client, "ann") == "operator"
    assert clients.operator.calls == ["fold:ann"]


@pytest.mark.expects_fallbacks
async def test_the_operator_paying_on_a_replica_without_its_key_falls_back_to_built_in() -> None:
    before = fallbacks.counts()
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.OPERATOR)}), clients, operator=False)
    assert await reply_of(client, "ann") == f"built-in {ANSWERED}"
    assert fired(before) == {"operator_key_missing": 1}


async def test_the_ledger_is_the_built_in_models() -> None:
    clients = Clients()
    client = personal(FakeAccounts({}), clients)
    assert client.ledger is clients.built_in.ledger


# --- a refused key --------------------------------------------------------------------------


@pytest.mark.expects_fallbacks
async def test_a_refused_own_key_is_reported_once_and_the_call_made_on_who_pays_now() -> None:
    before = fallbacks.counts()
    clients = Clients(refusing={ANN_KEY})
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    client = personal(accounts, clients)
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    assert [(person, key) for person, key, _ in accounts.refused] == [("ann", ANN_KEY)]
    assert "401" in accounts.refused[0][2]
    assert accounts.asked == ["ann", "ann"]  # the cached credential was forgotten
    refused_client = clients.made_for(ANN_KEY)[0]
    assert refused_client.calls == ["reply:ann"]
    assert clients.operator.calls == ["reply:ann"]
    await asyncio.wait_for(refused_client.closed.wait(), 1)
    assert fired(before) == {"own_key_refused": 1}
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    assert len(accounts.refused) == 1
    assert fired(before) == {"own_key_refused": 1}


@pytest.mark.expects_fallbacks
async def test_a_structured_call_on_a_refused_key_goes_on_built_in_when_none_pays() -> None:
    before = fallbacks.counts()
    clients = Clients(refusing={ANN_KEY})
    accounts = FakeAccounts(
        {"ann": Credential(Payer.OWN, key=ANN_KEY)},
        after_refusal=Credential(Payer.NOBODY, Hold.NO_KEY),
    )
    client = personal(accounts, clients)
    assert await structured_of(client, "ann") == "built-in"
    assert len(accounts.refused) == 1
    with pytest.raises(CallsHeld):
        await reply_of(client, "ann")
    assert fired(before) == {"own_key_refused": 1}


@pytest.mark.expects_fallbacks
async def test_an_answer_on_a_refused_key_is_held_when_nobody_pays_after_it() -> None:
    clients = Clients(refusing={ANN_KEY})
    accounts = FakeAccounts(
        {"ann": Credential(Payer.OWN, key=ANN_KEY)},
        after_refusal=Credential(Payer.NOBODY, Hold.NO_KEY),
    )
    with pytest.raises(CallsHeld) as held:
        await reply_of(personal(accounts, clients), "ann")
    assert held.value.hold is Hold.NO_KEY
    assert len(accounts.refused) == 1


async def test_a_refusal_of_the_operators_key_is_the_operators_problem_and_not_retried() -> None:
    before = fallbacks.counts()
    clients = Clients()
    clients.operator.refuses_key = True
    accounts = FakeAccounts({"ann": Credential(Payer.OPERATOR)})
    with pytest.raises(KeyRefused):
        await reply_of(personal(accounts, clients), "ann")
    assert accounts.refused == []
    assert clients.operator.calls == ["reply:ann"]
    assert fired(before) == {}


# --- the pool of clients on people's keys -----------------------------------------------------


async def test_the_pool_is_bounded_and_closes_its_least_recently_used_client() -> None:
    clients = Clients()
    accounts = FakeAccounts(
        {
            "ann": Credential(Payer.OWN, key=ANN_KEY),
            "bob": Credential(Payer.OWN, key=BOB_KEY),
            "cy": Credential(Payer.OWN, key=NEW_KEY),
        }
    )
    client = personal(accounts, clients, pool_size=2)
    await reply_of(client, "ann")
    await reply_of(client, "bob")
    await reply_of(client, "ann")  # bob's is now the least recently used
    await reply_of(client, "cy")
    await asyncio.wait_for(clients.made_for(BOB_KEY)[0].closed.wait(), 1)
    assert not clients.made_for(ANN_KEY)[0].closed.is_set()
    assert not clients.made_for(NEW_KEY)[0].closed.is_set()
    assert await reply_of(client, "bob") == f"own BBBB {ANSWERED}"
    assert len(clients.made_for(BOB_KEY)) == 2  # made again when needed again


async def test_a_person_whose_key_changed_gets_a_new_client_and_the_old_one_closed() -> None:
    clients = Clients()
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    client = personal(accounts, clients)
    await reply_of(client, "ann")
    accounts.credentials["ann"] = Credential(Payer.OWN, key=NEW_KEY)
    client.forget("ann")
    assert await reply_of(client, "ann") == f"own NNNN {ANSWERED}"
    await asyncio.wait_for(clients.made_for(ANN_KEY)[0].closed.wait(), 1)
    assert not clients.made_for(NEW_KEY)[0].closed.is_set()


async def test_a_person_who_removed_their_key_gets_its_client_closed() -> None:
    clients = Clients()
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    client = personal(accounts, clients)
    await reply_of(client, "ann")
    accounts.credentials["ann"] = Credential(Payer.OPERATOR)
    client.forget("ann")
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    await asyncio.wait_for(clients.made_for(ANN_KEY)[0].closed.wait(), 1)


async def test_closing_closes_every_client() -> None:
    clients = Clients()
    client = personal(FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)}), clients)
    await reply_of(client, "ann")
    await client.aclose()
    for closed in (clients.operator, clients.built_in, clients.made_for(ANN_KEY)[0]):
        assert closed.closed.is_set()


# --- the credential cache ---------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_credential_is_asked_again_only_after_its_time() -> None:
    clock = Clock()
    accounts = FakeAccounts({"ann": Credential(Payer.OPERATOR)})
    cache = CredentialCache(accounts.credential, ttl_s=30.0, clock=clock)
    assert await cache.of("ann") == Credential(Payer.OPERATOR)
    accounts.credentials["ann"] = Credential(Payer.OWN, key=ANN_KEY)
    clock.now += 29.9
    assert await cache.of("ann") == Credential(Payer.OPERATOR)
    clock.now += 0.1
    assert await cache.of("ann") == Credential(Payer.OWN, key=ANN_KEY)
    assert accounts.asked == ["ann", "ann"]


async def test_a_forgotten_credential_is_asked_again_at_once() -> None:
    accounts = FakeAccounts({"ann": Credential(Payer.OPERATOR), "bob": Credential(Payer.BUILT_IN)})
    cache = CredentialCache(accounts.credential, ttl_s=30.0, clock=Clock())
    await cache.of("ann")
    await cache.of("bob")
    cache.forget("ann")
    cache.forget("nobody-known")
    await cache.of("ann")
    await cache.of("bob")
    assert accounts.asked == ["ann", "bob", "ann"]


async def test_concurrent_askers_for_one_person_make_one_fetch() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    asked: list[str] = []

    async def slow_fetch(person: str) -> Credential:
        asked.append(person)
        started.set()
        await release.wait()
        return Credential(Payer.OPERATOR)

    cache = CredentialCache(slow_fetch, ttl_s=30.0, clock=Clock())
    askers = [asyncio.create_task(cache.of("ann")) for _ in range(5)]
    other = asyncio.create_task(cache.of("bob"))
    await asyncio.wait_for(started.wait(), 1)
    release.set()
    found = await asyncio.wait_for(asyncio.gather(*askers, other), 1)
    assert found == [Credential(Payer.OPERATOR)] * 6
    assert sorted(asked) == ["ann", "bob"]


async def test_a_credential_read_elsewhere_counts_from_that_read() -> None:
    # Handed over 20 s after the session read it, it spares the asking for the 10 s left.
    clock = Clock()
    accounts = FakeAccounts({"ann": Credential(Payer.BUILT_IN)})
    cache = CredentialCache(accounts.credential, ttl_s=30.0, clock=clock)
    assert cache.known("ann") is None
    assert cache.offer("ann", Credential(Payer.OPERATOR), age_s=20.0)
    assert cache.known("ann") == (Credential(Payer.OPERATOR), 20.0)
    clock.now += 9.9
    assert await cache.of("ann") == Credential(Payer.OPERATOR)
    assert accounts.asked == []
    clock.now += 0.1
    assert cache.known("ann") is None
    assert await cache.of("ann") == Credential(Payer.BUILT_IN)
    assert accounts.asked == ["ann"]


async def test_an_older_or_spent_credential_read_elsewhere_is_not_taken() -> None:
    clock = Clock()
    accounts = FakeAccounts({"ann": Credential(Payer.OPERATOR)})
    cache = CredentialCache(accounts.credential, ttl_s=30.0, clock=clock)
    assert not cache.offer("bob", Credential(Payer.BUILT_IN), age_s=30.0)
    assert cache.known("bob") is None
    await cache.of("ann")
    clock.now += 5.0
    assert not cache.offer("ann", Credential(Payer.BUILT_IN), age_s=6.0)  # read before ours
    assert cache.known("ann") == (Credential(Payer.OPERATOR), 5.0)
    assert cache.offer("ann", Credential(Payer.BUILT_IN), age_s=1.0)
    assert cache.known("ann") == (Credential(Payer.BUILT_IN), 1.0)


@pytest.mark.expects_fallbacks
async def test_a_key_refused_here_is_not_taken_back_from_a_credential_read_before() -> None:
    # The session may still hold the refused key for a while; what it hands over then is not
    # taken, and the calls go on as the session says once it set the key aside.
    clients = Clients(refusing={ANN_KEY})
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    client = personal(accounts, clients)
    assert client.offer_credential("ann", Credential(Payer.OWN, key=ANN_KEY), age_s=0.0)
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    assert accounts.asked == ["ann"]  # once, after the refusal
    assert not client.offer_credential("ann", Credential(Payer.OWN, key=ANN_KEY), age_s=0.0)
    known = client.known_credential("ann")
    assert known is not None and known[0] == Credential(Payer.OPERATOR)
    assert client.offer_credential("ann", Credential(Payer.OWN, key=NEW_KEY), age_s=0.0)
    assert await reply_of(client, "ann") == f"own NNNN {ANSWERED}"


def test_an_own_key_comes_with_payer_own_and_only_then() -> None:
    with pytest.raises(ValueError):
        Credential(Payer.OWN)
    with pytest.raises(ValueError):
        Credential(Payer.OPERATOR, key=ANN_KEY)
    assert Credential(Payer.OWN, key=ANN_KEY).key == ANN_KEY


async def test_a_client_leaving_the_pool_closes_only_when_its_calls_end() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @dataclass
    class Slow(FakeClient):
        async def structured(self, **asked: Any) -> JsonObject:  # type: ignore[override]
            started.set()
            await release.wait()
            return await super().structured(**asked)

    slow = Slow("own AAAA")
    accounts = FakeAccounts({"ann": Credential(Payer.OWN, key=ANN_KEY)})
    clients = Clients()
    client = PersonalModelClient(
        accounts=accounts,
        operator=clients.operator,
        built_in=clients.built_in,
        on_key=lambda key: slow,
        cache_s=60.0,
    )
    under_way = asyncio.create_task(
        client.structured(name="n", description="d", schema={}, prompt="p", person="ann")
    )
    await started.wait()
    accounts.credentials["ann"] = Credential(Payer.OPERATOR)
    client.forget("ann")
    assert await reply_of(client, "ann") == f"operator {ANSWERED}"
    await asyncio.sleep(0.01)
    assert not slow.closed.is_set()  # its call is still under way
    release.set()
    assert await under_way == {"by": "own AAAA"}
    await asyncio.wait_for(slow.closed.wait(), 1)


async def test_a_client_left_unused_is_closed_at_the_next_call() -> None:
    now = [0.0]
    clients = Clients()
    accounts = FakeAccounts(
        {"ann": Credential(Payer.OWN, key=ANN_KEY), "bob": Credential(Payer.OWN, key=BOB_KEY)}
    )
    client = PersonalModelClient(
        accounts=accounts,
        operator=clients.operator,
        built_in=clients.built_in,
        on_key=clients.on_key,
        cache_s=0.0,
        idle_s=60.0,
        clock=lambda: now[0],
    )
    await reply_of(client, "ann")
    now[0] = 61.0
    await reply_of(client, "bob")
    await asyncio.wait_for(clients.made_for(ANN_KEY)[0].closed.wait(), 1)
    assert not clients.made_for(BOB_KEY)[0].closed.is_set()


def test_usage_is_sent_on_with_its_payer_but_the_built_in_models_is_not() -> None:
    sent: list[tuple[str, str, Payer]] = []

    class Sink:
        def add(self, person: str, call: str, payer: Payer, usage: Usage) -> None:
            sent.append((person, call, payer))

    parent = UsageLedger()
    for payer in (Payer.OWN, Payer.OPERATOR, Payer.BUILT_IN):
        PayingLedger(payer, Sink(), parent).record(
            "ann", "reply.main", Usage("m", 10, 2, 0.1), 0.1, ok=True
        )
    assert sent == [("ann", "reply.main", Payer.OWN), ("ann", "reply.main", Payer.OPERATOR)]
    assert parent.totals("ann").calls == 3  # the process's own totals count every call


async def test_each_call_names_its_person_by_the_pseudonym_of_their_credential() -> None:
    accounts = FakeAccounts(
        {
            "ann": Credential(Payer.OPERATOR, pseudonym="p-ann"),
            "bob": Credential(Payer.OWN, key=BOB_KEY, pseudonym="p-bob"),
        }
    )
    clients = Clients()
    client = personal(accounts, clients)
    await reply_of(client, "ann")
    await reply_of(client, "bob")
    assert clients.operator.pseudonyms == ["p-ann"]
    assert clients.made_for(BOB_KEY)[0].pseudonyms == ["p-bob"]
    assert current_pseudonym() == ""  # the name ends with the call
