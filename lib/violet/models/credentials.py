"""Whose account pays for a person's model calls, as the session service decides it.

- `own`: the person set their own Anthropic key; every call of theirs uses it, never a budget.
- `operator`: the operator's key (`ANTHROPIC_API_KEY`), when the operator shares it
  (`VIOLET_OPERATOR_KEY_SHARED`); the person's budget may hold the costly calls.
- `built_in`: no operator key at all and none of the person's: the offline model.
- `nobody`: the operator keeps their key to themselves and the person has none yet.

A hold stops the costly calls (answers and background work) and nothing else: the small
structured calls that keep the conversation and memory in order (fold, pick, origin check) go
on, on the built-in model when nobody pays, so nothing the person said is lost.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum

from violet.keyring import ApiKey, Sealed


class Payer(StrEnum):
    OWN = "own"
    OPERATOR = "operator"
    BUILT_IN = "built_in"
    NOBODY = "nobody"


class Hold(StrEnum):
    NONE = ""
    BUDGET_DAY = "budget_day"
    BUDGET_MONTH = "budget_month"
    NO_KEY = "no_key"


@dataclass(frozen=True)
class Credential:
    payer: Payer
    hold: Hold = Hold.NONE
    key: ApiKey | None = None  # the person's own key, opened; only with `Payer.OWN`
    # What names the person outside Violet and in traces (the session's `Accounts.pseudonym`);
    # not part of who pays.
    pseudonym: str = field(default="", compare=False)
    # The key as stored, for handing the credential to another service; never the opened key.
    sealed: Sealed | None = field(default=None, compare=False, repr=False)
    # The operator pays within a limit of the person's: before each costly call the hold is
    # asked anew (`PersonalModelClient`), so a limit is kept across replicas within the calls
    # already under way, not within a cached minute of them.
    budgeted: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if (self.payer is Payer.OWN) != (self.key is not None):
            raise ValueError("a person's own key comes with payer `own`, and only then")


class CallsHeld(Exception):  # noqa: N818 - a state the caller acts on, not a failure
    """The person's costly calls are held (`hold` says why): a budget reached, or no key to
    pay with. Not a `ModelError`: nothing failed, and the work waits rather than gives up."""

    def __init__(self, hold: Hold) -> None:
        super().__init__(f"the person's model calls are held: {hold.value}")
        self.hold = hold


Fetch = Callable[[str], Awaitable[Credential]]


class CredentialCache:
    """Each person's credential, asked again after `ttl_s`: a key set, removed or refused on any
    replica is seen here within that time (a minute at most, by the settings' bounds)."""

    def __init__(
        self, fetch: Fetch, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._fetch = fetch
        self._ttl_s = ttl_s
        self._clock = clock
        self._known: dict[str, tuple[float, Credential]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def of(self, person: str) -> Credential:
        kept = self.known(person)
        if kept is not None:
            return kept[0]
        return await self._read(person, unless_kept=True)

    @property
    def ttl_s(self) -> float:
        return self._ttl_s

    async def fresh(self, person: str) -> Credential:
        """The person's credential read now, whatever is kept, and kept from now."""
        return await self._read(person, unless_kept=False)

    async def _read(self, person: str, unless_kept: bool) -> Credential:
        """Reads the person's credential, one read at a time per person; with `unless_kept`,
        one that a read finished meanwhile is taken instead."""
        async with self._locks.setdefault(person, asyncio.Lock()):
            kept = self.known(person) if unless_kept else None
            if kept is not None:
                return kept[0]
            credential = await self._fetch(person)
            self._known[person] = (self._clock(), credential)
            return credential

    def known(self, person: str) -> tuple[Credential, float] | None:
        """The person's credential and how many seconds ago it was read, while it counts; no
        fetch."""
        known = self._known.get(person)
        if known is None:
            return None
        age_s = self._clock() - known[0]
        return (known[1], age_s) if age_s < self._ttl_s else None

    def offer(self, person: str, credential: Credential, age_s: float) -> bool:
        """Takes a credential read `age_s` ago elsewhere (by the service that decides it),
        unless what is kept is newer: it counts until `ttl_s` after that read, as a fetched
        one would. Whether it was taken."""
        read_at = self._clock() - max(0.0, age_s)
        known = self._known.get(person)
        if self._clock() - read_at >= self._ttl_s or (known and known[0] >= read_at):
            return False
        self._known[person] = (read_at, credential)
        return True

    def forget(self, person: str) -> None:
        self._known.pop(person, None)
