"""People's accounts with the models, on the session service's own tables (SQLite, and PostgreSQL
as the service's role under row-level security): who pays for each person, their sealed key,
what their calls cost, their budget on the operator's key, and what to tell them once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from session.account_phrases import AFTER_REFUSAL, KEY_REFUSED, NEAR
from session.accounts import AccountRules, Accounts, AccountView, KeyCheck, KeyNotKept
from session.erasure import Standing
from session.tables import model_usage, person_keys
from tests.support import messages_api as api_support
from tests.support.messages_api import MessagesAPI
from tests.support.session_db import session_settings
from tests.support.trips import trips_of
from violet import database
from violet.database import Database
from violet.identity import acting_for
from violet.keyring import ApiKey, Keyring, Sealed, new_entry, parse_keyring, resolve_keyring
from violet.models.credentials import CallsHeld, Credential, Hold, Payer
from violet.models.errors import ModelUnavailable
from violet.models.factory import make_model_client
from violet.models.offline import OfflineModelClient
from violet.models.personal import PayingLedger, PersonalModelClient
from violet.models.usage import UsageBatches, UsageRow

ANN, BOB = "ann", "bob"
ANN_KEY = ApiKey("sk-ant-api03-Zq9xW8vU7tS6rR5qP4oN3mL2kJ1i-WXYZ")
BOB_KEY = ApiKey("sk-ant-api03-Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9-ABCD")
NEW_KEY = ApiKey("sk-ant-api03-Nn1Nn2Nn3Nn4Nn5Nn6Nn7Nn8Nn9-NEWK")
NOW = datetime(2026, 11, 14, 10, 30, tzinfo=UTC)
TODAY = NOW.date()
MONTH_START = TODAY.replace(day=1)
LAST_MONTH = MONTH_START - timedelta(days=1)
HAIKU = "claude-haiku-5-5"

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api

SHARED = AccountRules(operator_key=True, operator_shared=True)
NOT_SHARED = AccountRules(operator_key=True, operator_shared=False)
NO_OPERATOR_KEY = AccountRules(operator_key=False, operator_shared=False)
BUDGETED = AccountRules(
    operator_key=True, operator_shared=True, day_usd=1.0, month_usd=10.0, warn_share=0.8
)


class SetClock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Check:
    """The key check: what it answers, and what it was asked."""

    answer: str | None = None
    asked: list[tuple[ApiKey, str]] = field(default_factory=list)

    async def __call__(self, key: ApiKey, person: str) -> str | None:
        self.asked.append((key, person))
        return self.answer


@dataclass
class Place:
    """The session service's tables, migrated, and the home its local keyring lives in."""

    db: Database
    home: Path
    clock: SetClock

    def accounts(
        self,
        rules: AccountRules = SHARED,
        check: KeyCheck | None = None,
        keyring: Keyring | None = None,
    ) -> Accounts:
        return Accounts(
            self.db,
            keyring or resolve_keyring("", self.home),
            rules,
            check or Check(),
            Standing(self.db, "a secret only these accounts know"),
            self.clock,
        )


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Place]:
    with session_settings(request.param, tmp_path) as settings:
        db = database.service_database(settings, "session")
        try:
            yield Place(db, tmp_path / "home", SetClock())
        finally:
            await db.dispose()


def spent(cost_usd: float, day: date = TODAY, payer: Payer = Payer.OPERATOR) -> UsageRow:
    return UsageRow(
        day=day,
        call="reply.main",
        payer=payer.value,
        model=HAIKU,
        calls=1,
        input_tokens=100,
        output_tokens=10,
        cost_usd=cost_usd,
    )


async def stored_key(place: Place, person: str) -> Sealed:
    with acting_for(person):
        async with place.db() as db:
            row = (
                await db.execute(select(person_keys).where(person_keys.c.person == person))
            ).one()
    return Sealed(row.kek_id, row.nonce, row.sealed)


# --- who pays ---------------------------------------------------------------------------------


async def test_a_person_with_their_own_key_pays_with_it(place: Place) -> None:
    accounts = place.accounts()
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        payer, hold, sealed = await accounts.sealed_credential(ANN)
        assert (payer, hold) == (Payer.OWN, Hold.NONE)
        assert sealed is not None
        assert sealed.kek_id == accounts.current_kek
        assert await accounts.credential(ANN) == Credential(Payer.OWN, key=ANN_KEY)


async def test_a_key_the_configured_keys_cannot_open_fails_the_call_as_unavailable(
    place: Place,
) -> None:
    with acting_for(ANN):
        await place.accounts().set_key(ANN, ANN_KEY)
        elsewhere = place.accounts(keyring=parse_keyring(new_entry("other")))
        with pytest.raises(ModelUnavailable, match="could not be opened"):
            await elsewhere.credential(ANN)


@pytest.mark.parametrize(
    ("rules", "payer", "hold"),
    [
        (NO_OPERATOR_KEY, Payer.BUILT_IN, Hold.NONE),
        (NOT_SHARED, Payer.NOBODY, Hold.NO_KEY),
        (SHARED, Payer.OPERATOR, Hold.NONE),
    ],
    ids=["no operator key", "operator key not shared", "operator key shared"],
)
async def test_without_a_key_of_their_own_the_operators_rules_say_who_pays(
    place: Place, rules: AccountRules, payer: Payer, hold: Hold
) -> None:
    accounts = place.accounts(rules)
    with acting_for(ANN):
        assert await accounts.sealed_credential(ANN) == (payer, hold, None)
        assert await accounts.credential(ANN) == Credential(payer, hold)


@pytest.mark.parametrize(
    ("rules", "payer", "hold"),
    [
        (NO_OPERATOR_KEY, Payer.BUILT_IN, Hold.NONE),
        (NOT_SHARED, Payer.NOBODY, Hold.NO_KEY),
        (SHARED, Payer.OPERATOR, Hold.NONE),
    ],
    ids=["no operator key", "operator key not shared", "operator key shared"],
)
async def test_a_refused_key_is_no_longer_used(
    place: Place, rules: AccountRules, payer: Payer, hold: Hold
) -> None:
    accounts = place.accounts(rules)
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.key_refused(ANN, ANN_KEY, "401 invalid x-api-key")
        assert await accounts.sealed_credential(ANN) == (payer, hold, None)
        assert await accounts.view(ANN) == AccountView("refused", "WXYZ", 0.0)


async def test_a_removed_key_is_no_longer_used(place: Place) -> None:
    accounts = place.accounts()
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        assert await accounts.remove_key(ANN) == AccountView("none", "", 0.0)
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)


async def test_one_persons_key_pays_for_no_one_else(place: Place) -> None:
    accounts = place.accounts(NOT_SHARED)
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
    with acting_for(BOB):
        assert await accounts.sealed_credential(BOB) == (Payer.NOBODY, Hold.NO_KEY, None)
        assert await accounts.view(BOB) == AccountView("none", "", 0.0)


# --- setting a key ----------------------------------------------------------------------------


async def test_a_key_that_works_is_kept_sealed(place: Place) -> None:
    check = Check()
    accounts = place.accounts(check=check)
    with acting_for(ANN):
        assert await accounts.set_key(ANN, ANN_KEY) == AccountView("yours", "WXYZ", 0.0)
    assert check.asked == [(ANN_KEY, ANN)]
    stored = await stored_key(place, ANN)
    assert ANN_KEY.reveal().encode() not in stored.ciphertext
    assert ANN_KEY.reveal()[:-4].encode() not in stored.ciphertext
    assert ANN_KEY.reveal().encode() not in stored.nonce
    assert resolve_keyring("", place.home).open(stored, ANN) == ANN_KEY


@pytest.mark.parametrize("reason", ["refused", "unchecked"])
async def test_a_key_that_does_not_pass_its_check_is_not_kept(place: Place, reason: str) -> None:
    accounts = place.accounts(check=Check(answer=reason))
    with acting_for(ANN):
        with pytest.raises(KeyNotKept) as not_kept:
            await accounts.set_key(ANN, ANN_KEY)
        assert not_kept.value.reason == reason
        assert ANN_KEY.reveal() not in str(not_kept.value)
        assert await accounts.view(ANN) == AccountView("none", "", 0.0)
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)


async def test_a_new_key_that_does_not_pass_leaves_the_old_one_in_use(place: Place) -> None:
    check = Check()
    accounts = place.accounts(check=check)
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        check.answer = "refused"
        with pytest.raises(KeyNotKept):
            await accounts.set_key(ANN, NEW_KEY)
        assert await accounts.credential(ANN) == Credential(Payer.OWN, key=ANN_KEY)


async def test_a_new_key_replaces_a_refused_one_and_its_untold_refusal(place: Place) -> None:
    accounts = place.accounts()
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.report_refused(ANN, "WXYZ", "401")
        assert await accounts.set_key(ANN, NEW_KEY) == AccountView("yours", "NEWK", 0.0)
        assert await accounts.credential(ANN) == Credential(Payer.OWN, key=NEW_KEY)
        assert await accounts.take_notices(ANN, "en") == []


async def test_the_account_shows_what_the_persons_own_key_paid_this_month(place: Place) -> None:
    accounts = place.accounts()
    await accounts.record_usage(ANN, [spent(0.25, payer=Payer.OWN)])
    await accounts.record_usage(ANN, [spent(0.5, day=MONTH_START, payer=Payer.OWN)])
    await accounts.record_usage(ANN, [spent(4.0, day=LAST_MONTH, payer=Payer.OWN)])
    await accounts.record_usage(ANN, [spent(2.0)])  # the operator's, not theirs
    with acting_for(ANN):
        view = await accounts.set_key(ANN, ANN_KEY)
    assert (view.key, view.ending) == ("yours", "WXYZ")
    assert view.month_usd == pytest.approx(0.75)


# --- a refused key ----------------------------------------------------------------------------


async def test_a_refusal_sets_the_key_aside_only_when_its_ending_matches(place: Place) -> None:
    accounts = place.accounts()
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.report_refused(ANN, "ABCD", "401 for a key set before")
        assert (await accounts.sealed_credential(ANN))[0] is Payer.OWN
        assert await accounts.take_notices(ANN, "en") == []
        await accounts.report_refused(ANN, "WXYZ", "401")
        assert (await accounts.sealed_credential(ANN))[0] is Payer.OPERATOR


async def test_a_key_refused_on_many_calls_is_told_once(place: Place) -> None:
    accounts = place.accounts()
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.report_refused(ANN, "WXYZ", "401")
        place.clock.now += timedelta(seconds=3)
        await accounts.report_refused(ANN, "WXYZ", "401 again, from another replica")
        await accounts.key_refused(ANN, ANN_KEY, "402")
        told = await accounts.take_notices(ANN, "en")
        assert told == [f"{KEY_REFUSED['en']} {AFTER_REFUSAL[Payer.OPERATOR]['en']}"]
        assert await accounts.take_notices(ANN, "en") == []


async def test_reading_the_credential_finds_out_in_its_trip_whether_a_notice_waits(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts = place.accounts()
    trips = trips_of(place.db, monkeypatch)
    with acting_for(ANN):
        await accounts.credential(ANN)
        assert await accounts.take_notices(ANN, "en") == []
        assert trips == ["_own_rows_on"]  # nothing waits: the turn reads nothing for it

        # A refusal reported on another replica: the next credential read sees the notice.
        other_replica = place.accounts()
        await other_replica.set_key(ANN, ANN_KEY)
        await other_replica.report_refused(ANN, "WXYZ", "401")
        trips.clear()
        await accounts.credential(ANN)
        told = await accounts.take_notices(ANN, "en")
        assert told == [f"{KEY_REFUSED['en']} {AFTER_REFUSAL[Payer.OPERATOR]['en']}"]
        assert trips[:2] == ["_own_rows_on", "_take_notices_on"]


async def test_a_refusal_is_told_in_the_persons_language_with_what_happens_next(
    place: Place,
) -> None:
    accounts = place.accounts(NOT_SHARED)
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.report_refused(ANN, "WXYZ", "401")
        assert await accounts.take_notices(ANN, "pt") == [
            f"{KEY_REFUSED['pt']} {AFTER_REFUSAL[Payer.NOBODY]['pt']}"
        ]


async def test_a_refusal_of_one_persons_key_leaves_anothers_with_the_same_ending(
    place: Place,
) -> None:
    accounts = place.accounts()
    same_ending = ApiKey("sk-ant-api03-Other0Other0Other0Other0-WXYZ")
    with acting_for(BOB):
        await accounts.set_key(BOB, same_ending)
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        await accounts.report_refused(ANN, "WXYZ", "401")
    with acting_for(BOB):
        assert await accounts.credential(BOB) == Credential(Payer.OWN, key=same_ending)
        assert await accounts.take_notices(BOB, "en") == []


# --- usage ------------------------------------------------------------------------------------


async def test_usage_of_one_kind_on_one_day_adds_up(place: Place) -> None:
    accounts = place.accounts()
    await accounts.record_usage(ANN, [spent(0.25)])
    await accounts.record_usage(ANN, [spent(0.5), spent(0.125, day=LAST_MONTH)])
    await accounts.record_usage(ANN, [])
    found = await accounts.usage(ANN, LAST_MONTH)
    assert [(person, row.day, row.calls) for person, row in found] == [
        (ANN, LAST_MONTH, 1),
        (ANN, TODAY, 2),
    ]
    today = found[1][1]
    assert (today.input_tokens, today.output_tokens) == (200, 20)
    assert today.cost_usd == pytest.approx(0.75)
    assert today.key == (TODAY, "reply.main", "operator", HAIKU)


async def test_usage_is_shown_since_a_day_for_one_person_or_for_everyone(place: Place) -> None:
    accounts = place.accounts()
    await accounts.record_usage(ANN, [spent(0.25), spent(1.0, day=LAST_MONTH)])
    await accounts.record_usage(BOB, [spent(0.5, payer=Payer.OWN)])
    assert [(p, row.cost_usd) for p, row in await accounts.usage(ANN, MONTH_START)] == [(ANN, 0.25)]
    everyone = await accounts.usage(None, MONTH_START)  # the operator's view: acts for no one
    assert [(p, row.payer, row.cost_usd) for p, row in everyone] == [
        (ANN, "operator", 0.25),
        (BOB, "own", 0.5),
    ]
    assert len(await accounts.usage(None, LAST_MONTH)) == 3


# --- budgets on the operator's key ------------------------------------------------------------


async def test_a_days_budget_holds_the_calls_once_spent_and_not_the_next_day(
    place: Place,
) -> None:
    accounts = place.accounts(BUDGETED)
    with acting_for(ANN):
        await accounts.record_usage(ANN, [spent(0.5)])
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)
        await accounts.record_usage(ANN, [spent(0.5)])
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.BUDGET_DAY, None)
        place.clock.now += timedelta(days=1)
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)


async def test_a_months_budget_holds_the_calls_until_the_next_month(place: Place) -> None:
    accounts = place.accounts(BUDGETED)
    earlier = [spent(0.9, day=MONTH_START + timedelta(days=n)) for n in range(12)]
    await accounts.record_usage(ANN, earlier)  # 10.8 this month, under 1 a day
    await accounts.record_usage(ANN, [spent(50.0, day=LAST_MONTH)])
    with acting_for(ANN):
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.BUDGET_MONTH, None)
        place.clock.now = datetime(2026, 12, 1, tzinfo=UTC)
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)


async def test_what_the_persons_own_key_paid_counts_against_no_budget(place: Place) -> None:
    accounts = place.accounts(BUDGETED)
    await accounts.record_usage(ANN, [spent(20.0, payer=Payer.OWN)])
    with acting_for(ANN):
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)
        assert await accounts.take_notices(ANN, "en") == []


async def test_a_person_nearing_the_days_budget_is_told_once(place: Place) -> None:
    accounts = place.accounts(BUDGETED)
    with acting_for(ANN):
        await accounts.record_usage(ANN, [spent(0.79)])
        await accounts.sealed_credential(ANN)
        assert await accounts.take_notices(ANN, "en") == []
        await accounts.record_usage(ANN, [spent(0.01)])  # 0.8 of 1.0: the warn share
        assert (await accounts.sealed_credential(ANN))[1] is Hold.NONE
        await accounts.sealed_credential(ANN)
        assert await accounts.take_notices(ANN, "en") == [NEAR["day"]["en"]]
        await accounts.sealed_credential(ANN)
        assert await accounts.take_notices(ANN, "en") == []
        place.clock.now += timedelta(days=1)
        await accounts.record_usage(ANN, [spent(0.85, day=TODAY + timedelta(days=1))])
        await accounts.sealed_credential(ANN)
        assert await accounts.take_notices(ANN, "de") == [NEAR["day"]["de"]]


async def test_a_person_nearing_the_months_budget_is_told_once(place: Place) -> None:
    accounts = place.accounts(BUDGETED)
    earlier = [spent(0.85, day=MONTH_START + timedelta(days=n)) for n in range(10)]
    await accounts.record_usage(ANN, earlier)  # 8.5 of 10.0 this month, nothing today
    with acting_for(ANN):
        assert (await accounts.sealed_credential(ANN))[1] is Hold.NONE
        assert await accounts.take_notices(ANN, "en") == [NEAR["month"]["en"]]
        await accounts.sealed_credential(ANN)
        assert await accounts.take_notices(ANN, "en") == []


async def test_a_persons_own_budget_overrides_the_setting_and_a_negative_one_resets_it(
    place: Place,
) -> None:
    accounts = place.accounts(BUDGETED)
    await accounts.record_usage(ANN, [spent(1.5)])
    with acting_for(ANN):
        assert (await accounts.sealed_credential(ANN))[1] is Hold.BUDGET_DAY
        assert await accounts.set_budget(ANN, 2.0, -1) == (2.0, 10.0)
        assert (await accounts.sealed_credential(ANN))[1] is Hold.NONE
        assert await accounts.set_budget(ANN, -1, 1.0) == (1.0, 1.0)
        assert (await accounts.sealed_credential(ANN))[1] is Hold.BUDGET_DAY
        assert await accounts.set_budget(ANN, 0, 0) == (0.0, 0.0)  # no limit at all
        assert (await accounts.sealed_credential(ANN))[1] is Hold.NONE
        assert await accounts.set_budget(ANN, -1, -1) == (1.0, 10.0)
        assert (await accounts.sealed_credential(ANN))[1] is Hold.BUDGET_DAY
    with acting_for(BOB):
        await accounts.record_usage(BOB, [spent(1.5)])
        assert (await accounts.sealed_credential(BOB))[1] is Hold.BUDGET_DAY


async def test_without_limits_nothing_is_held(place: Place) -> None:
    accounts = place.accounts(SHARED)
    await accounts.record_usage(ANN, [spent(1000.0)])
    with acting_for(ANN):
        assert await accounts.sealed_credential(ANN) == (Payer.OPERATOR, Hold.NONE, None)


async def test_a_persons_own_key_is_never_held_by_a_budget(place: Place) -> None:
    accounts = place.accounts(BUDGETED)
    await accounts.record_usage(ANN, [spent(50.0)])
    with acting_for(ANN):
        await accounts.set_key(ANN, ANN_KEY)
        assert (await accounts.sealed_credential(ANN))[:2] == (Payer.OWN, Hold.NONE)


# --- rotating the key-encryption keys ---------------------------------------------------------


async def test_rotation_seals_every_key_again_under_a_new_current_key(place: Place) -> None:
    keyring = resolve_keyring("", place.home)
    accounts = place.accounts(keyring=keyring)
    for person, key in ((ANN, ANN_KEY), (BOB, BOB_KEY)):
        with acting_for(person):
            await accounts.set_key(person, key)
    old = keyring.current
    old_sealed = await stored_key(place, ANN)
    assert await accounts.rotate() == (2, 0)  # the operator's command: acts for no one
    assert accounts.current_kek != old
    assert keyring.ids == [accounts.current_kek, old]
    for person, key in ((ANN, ANN_KEY), (BOB, BOB_KEY)):
        stored = await stored_key(place, person)
        assert stored.kek_id == accounts.current_kek
        with acting_for(person):
            assert await accounts.credential(person) == Credential(Payer.OWN, key=key)
    assert (await stored_key(place, ANN)).ciphertext != old_sealed.ciphertext
    other_replica = place.accounts(keyring=resolve_keyring("", place.home))
    with acting_for(BOB):
        assert await other_replica.credential(BOB) == Credential(Payer.OWN, key=BOB_KEY)


async def test_rotation_with_configured_keys_reseals_what_the_old_key_sealed(
    place: Place,
) -> None:
    old_entry = new_entry("old")
    before = place.accounts(keyring=parse_keyring(old_entry))
    with acting_for(ANN):
        await before.set_key(ANN, ANN_KEY)
    after = place.accounts(keyring=parse_keyring(f"{new_entry('new')},{old_entry}"))
    assert await after.rotate() == (1, 0)
    assert (await stored_key(place, ANN)).kek_id == "new"
    assert await after.rotate() == (0, 0)
    with acting_for(ANN):
        assert await after.credential(ANN) == Credential(Payer.OWN, key=ANN_KEY)


# --- a limit across replicas ------------------------------------------------------------------


@dataclass
class Replica:
    """One service replica's model client: its own credential cache and its own usage batches
    to the session's accounts, the operator's key on the strict local Messages API."""

    client: PersonalModelClient
    usage: UsageBatches

    async def close(self) -> None:
        await self.client.aclose()
        await self.usage.aclose()  # what is left is sent


def replica(accounts: Accounts, api: MessagesAPI) -> Replica:
    usage = UsageBatches(accounts.record_usage, clock=lambda: TODAY)
    operator = make_model_client(
        api_key="operator-key",
        base_url=api.url,
        main_model="",
        fast_model="",
        ledger=PayingLedger(Payer.OPERATOR, usage),
    )
    client = PersonalModelClient(
        accounts=accounts,
        operator=operator,
        built_in=OfflineModelClient(),
        on_key=lambda key: OfflineModelClient(),
        cache_s=30.0,
        usage=usage,
    )
    return Replica(client, usage)


async def calls_until_held(client: PersonalModelClient, at_most: int = 1000) -> int:
    """Costly calls back to back, as work steps go, until the person's calls are held."""
    made = 0
    with acting_for(ANN):
        while made < at_most:
            try:
                await client.reply(
                    tier="work",
                    system="You help.",
                    messages=[{"role": "user", "content": "Look up the tide times, please."}],
                    tools=[],
                    person=ANN,
                )
            except CallsHeld:
                break
            made += 1
    return made


async def test_a_limit_holds_across_replicas_within_the_calls_under_way(
    place: Place, messages_api: MessagesAPI
) -> None:
    """Two replicas make the person's calls back to back, each with a credential it would keep
    for 30 s: the limit is passed only by the calls under way as it is reached, one a replica,
    not by 30 s of calls."""
    probe = replica(place.accounts(), messages_api)
    assert await calls_until_held(probe.client, at_most=1) == 1
    await probe.close()
    one_call = await spent_today(place)
    assert one_call > 0
    limit = 20 * one_call
    rules = AccountRules(operator_key=True, operator_shared=True, day_usd=limit + one_call)
    accounts = place.accounts(rules)
    messages_api.pace(0.02)  # a model that takes a moment, as the real one does
    replicas = [replica(accounts, messages_api) for _ in range(2)]
    made = await asyncio.gather(*(calls_until_held(r.client) for r in replicas))
    for r in replicas:
        await r.close()
    over = await spent_today(place) - (limit + one_call)
    assert sum(made) >= 19
    assert over <= 2 * one_call + 1e-9, (made, over / one_call)


async def spent_today(place: Place) -> float:
    with acting_for(ANN):
        async with place.db() as db:
            spent = await db.scalar(
                select(func.coalesce(func.sum(model_usage.c.cost_usd), 0.0)).where(
                    model_usage.c.person == ANN
                )
            )
    return float(spent or 0.0)


@pytest.mark.parametrize(
    ("rules", "own_keys"),
    [
        (AccountRules(operator_key=True, operator_shared=True), "optional"),
        (AccountRules(operator_key=False, operator_shared=True), "optional"),  # the built-in
        (AccountRules(operator_key=True, operator_shared=False), "needed"),
        (AccountRules(operator_key=True, operator_shared=False, people_bring_keys=False), "off"),
        (AccountRules(operator_key=False, operator_shared=False, people_bring_keys=False), "off"),
    ],
)
def test_what_a_key_of_their_own_is_to_people_follows_the_operators_choice(
    rules: AccountRules, own_keys: str
) -> None:
    assert rules.own_keys == own_keys
