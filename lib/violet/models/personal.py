"""Every call of a person on the account that pays for that person (`violet.models.credentials`).

`PersonalModelClient` is a `ModelClient` whose calls each look up who pays for the person named
in the call: a client on the person's own key (kept in a bounded pool, one per key, and dropped
when the key changes), the operator's client, or the built-in model. One person's 429s are
retried inside that person's call, on that person's client: they slow no one else.

A call the person's own key gets refused on (`KeyRefused`) is reported once to the session
service, which stops using the key and tells the person; the call is then made again on whoever
pays now, so the person's words are still answered exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from violet.fallbacks import fallback
from violet.keyring import ApiKey
from violet.models.accounting import LEDGER, UsageLedger, UsageTotals, calling_as
from violet.models.base import ModelClient, Reply, System, Tier, Tool, ToolChoice, Usage
from violet.models.credentials import CallsHeld, Credential, CredentialCache, Hold, Payer
from violet.models.errors import KeyRefused
from violet.models.messages import JsonObject, ModelMessage

log = logging.getLogger(__name__)

T = TypeVar("T")
# Clients on people's own keys kept open at once; the least recently used closes first.
POOL_SIZE = 64
# A key's client unused this long is closed: a key stays in memory only while it is in use.
POOL_IDLE_S = 600.0


class UsageSink(Protocol):
    def add(self, person: str, call: str, payer: Payer, usage: Usage) -> None:
        """One call's usage, for the person's totals by day, kind of call and payer."""
        ...

    async def settle(self, person: str) -> None:
        """Sends the person's usage kept here now, so that their spend as read next counts it."""
        ...


class PayingLedger(UsageLedger):
    """The process's ledger, plus each call's usage sent on to `sink` with who paid for it.
    Calls on the built-in model cost nothing and are not sent: keeping them would cost each
    turn a write for no money (about 5 ms of the session's CPU, measured by `violet bench`)."""

    def __init__(self, payer: Payer, sink: UsageSink, parent: UsageLedger = LEDGER) -> None:
        super().__init__()
        self._payer, self._sink, self._parent = payer, sink, parent

    def record(
        self, person: str, call: str, usage: Usage | None, latency_s: float, ok: bool
    ) -> None:
        self._parent.record(person, call, usage, latency_s, ok)
        if usage is not None and self._payer is not Payer.BUILT_IN:
            self._sink.add(person, call, self._payer, usage)

    def totals(self, person: str, call: str | None = None) -> UsageTotals:
        return self._parent.totals(person, call)

    def people(self) -> list[str]:
        return self._parent.people()


class KeyAccounts(Protocol):
    """What the session service keeps of people's keys, as a model client needs it."""

    async def credential(self, person: str) -> Credential: ...

    async def key_refused(self, person: str, key: ApiKey, reason: str) -> None: ...


class PersonalModelClient:
    """A `ModelClient` that makes each call on the account paying for its person."""

    def __init__(
        self,
        *,
        accounts: KeyAccounts,
        operator: ModelClient | None,
        built_in: ModelClient,
        on_key: Callable[[ApiKey], ModelClient],
        cache_s: float,
        usage: UsageSink | None = None,
        pool_size: int = POOL_SIZE,
        idle_s: float = POOL_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._accounts = accounts
        self._credentials = CredentialCache(accounts.credential, cache_s)
        self._usage = usage
        # Keys refused here lately: an offer still naming one is not taken.
        self._refused_at: dict[ApiKey, float] = {}
        self._operator = operator
        self._built_in = built_in
        self._on_key = on_key
        self._pool: OrderedDict[ApiKey, ModelClient] = OrderedDict()
        self._key_of: dict[str, ApiKey] = {}  # each person's key at their last call here
        self._pool_size = pool_size
        self._idle_s = idle_s
        self._clock = clock
        self._last_used: dict[ApiKey, float] = {}
        self._closing: set[asyncio.Task[None]] = set()
        # Calls under way per client: a client leaving the pool closes when its last ends.
        self._busy: Counter[int] = Counter()
        self._retired: dict[int, ModelClient] = {}
        self.ledger = built_in.ledger

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
        def call(client: ModelClient) -> Awaitable[Reply]:
            return client.reply(
                tier=tier,
                system=system,
                messages=messages,
                tools=tools,
                person=person,
                tool_choice=tool_choice,
            )

        return await self._on_account(person, call, costly=True)

    async def structured(
        self, *, name: str, description: str, schema: JsonObject, prompt: str, person: str
    ) -> JsonObject:
        def call(client: ModelClient) -> Awaitable[JsonObject]:
            return client.structured(
                name=name, description=description, schema=schema, prompt=prompt, person=person
            )

        return await self._on_account(person, call, costly=False)

    def known_credential(self, person: str) -> tuple[Credential, float] | None:
        """The person's credential as this client last read it, and its age in seconds, while
        it counts; None otherwise (nothing is read for it)."""
        return self._credentials.known(person)

    def offer_credential(self, person: str, credential: Credential, age_s: float) -> bool:
        """Takes the person's credential as another service read it `age_s` ago, so that
        this client need not ask for it: unless a newer one is kept, or its key was refused
        here lately (the offer may have been read before the refusal was). Whether it was
        taken."""
        refused_at = self._refused_at.get(credential.key) if credential.key else None
        if refused_at is not None and self._clock() - refused_at < self._credentials.ttl_s:
            return False
        return self._credentials.offer(person, credential, age_s)

    async def aclose(self) -> None:
        clients = [*self._pool.values(), *self._retired.values(), self._built_in]
        self._retired.clear()
        if self._operator is not None:
            clients.append(self._operator)
        self._pool.clear()
        await asyncio.gather(*(client.aclose() for client in clients), *self._closing)

    async def _on_account(
        self, person: str, call: Callable[[ModelClient], Awaitable[T]], *, costly: bool
    ) -> T:
        credential = await self._current(person)
        if costly and credential.budgeted:
            credential = await self._as_spent(person)
        try:
            with calling_as(credential.pseudonym):
                return await self._using(self._client(credential, costly), call)
        except KeyRefused as refused:
            if credential.key is None:
                raise  # the operator's key: an operator's problem, told as any failure
            await self._refused(person, credential.key, str(refused))
        credential = await self._current(person)
        with calling_as(credential.pseudonym):
            return await self._using(self._client(credential, costly), call)

    async def _using(self, client: ModelClient, call: Callable[[ModelClient], Awaitable[T]]) -> T:
        self._busy[id(client)] += 1
        try:
            return await call(client)
        finally:
            self._busy[id(client)] -= 1
            if not self._busy[id(client)]:
                del self._busy[id(client)]
                retired = self._retired.pop(id(client), None)
                if retired is not None:
                    self._drop(retired)

    async def _as_spent(self, person: str) -> Credential:
        """The credential of a person the operator pays for within a limit, its hold decided
        from the spend as it is now: this replica's finished calls sent first, so a limit is
        passed only by the calls under way as it is reached (one each, on every replica)."""
        if self._usage is not None:
            await self._usage.settle(person)
        return await self._current(person, fresh=True)

    async def _current(self, person: str, fresh: bool = False) -> Credential:
        """The person's credential; a client on a key they no longer use is closed."""
        if fresh:
            credential = await self._credentials.fresh(person)
        else:
            credential = await self._credentials.of(person)
        previous = self._key_of.get(person)
        if previous is not None and previous != credential.key:
            self._close_pooled(previous)
        if credential.key is None:
            self._key_of.pop(person, None)
        else:
            self._key_of[person] = credential.key
        return credential

    def _client(self, credential: Credential, costly: bool) -> ModelClient:
        if costly and credential.hold is not Hold.NONE:
            raise CallsHeld(credential.hold)
        if credential.key is not None:
            return self._pooled(credential.key)
        if credential.payer is Payer.OPERATOR and self._operator is not None:
            return self._operator
        if credential.payer is Payer.OPERATOR:
            fallback("operator_key_missing", "the operator pays, but this replica has no key")
        return self._built_in

    def _pooled(self, key: ApiKey) -> ModelClient:
        now = self._clock()
        client = self._pool.get(key)
        if client is None:
            client = self._pool[key] = self._on_key(key)
        self._pool.move_to_end(key)
        self._last_used[key] = now
        # Least recently used first: past the bound, or idle too long, a client is closed.
        for oldest in list(self._pool):
            if len(self._pool) <= self._pool_size and now - self._last_used[oldest] < self._idle_s:
                break
            self._close_pooled(oldest)
        return client

    def _drop(self, client: ModelClient) -> None:
        task = asyncio.create_task(client.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _refused(self, person: str, key: ApiKey, reason: str) -> None:
        fallback("own_key_refused", f"{reason}; the call goes on as the account now says")
        await self._accounts.key_refused(person, key, reason)
        now = self._clock()
        lately = self._credentials.ttl_s
        self._refused_at = {k: at for k, at in self._refused_at.items() if now - at < lately}
        self._refused_at[key] = now
        self._credentials.forget(person)
        self._close_pooled(key)

    def _close_pooled(self, key: ApiKey) -> None:
        self._last_used.pop(key, None)
        client = self._pool.pop(key, None)
        if client is not None:
            self._retire(client)

    def _retire(self, client: ModelClient) -> None:
        """Closes the client now, or when the calls under way on it end."""
        if self._busy[id(client)]:
            self._retired[id(client)] = client
        else:
            self._drop(client)

    def forget(self, person: str) -> None:
        """Ask again for the person's credential at their next call (their key changed here)."""
        self._credentials.forget(person)
