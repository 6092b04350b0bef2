"""Each person's account with the models: their own key (sealed), who pays for their calls,
what the calls cost, their budget on the operator's key, and what to tell them once.

The session service keeps all of it; the other services ask it over `violet.v1.Accounts` with
the person's internal token, and receive a key only sealed (`violet.keyring`), to open where the
call is made. Days and months are UTC.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, bindparam, delete, exists, func, insert, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql.dml import Insert

from session.account_phrases import notice_phrase
from session.tables import (
    account_notices,
    budgets,
    erased_usage,
    model_usage,
    person_keys,
    pseudonym_keys,
)
from violet.clock import Clock, utc_now
from violet.database import (
    Database,
    Session,
    across_people,
    conflict_insert,
    is_postgres_session,
    rows_changed,
)
from violet.identity import acting_for
from violet.keyring import ApiKey, Keyring, KeyringError, Sealed
from violet.models.credentials import Credential, Hold, Payer
from violet.models.errors import ModelUnavailable
from violet.models.usage import UsageRow

if TYPE_CHECKING:  # the erasure adds usage sums as accounts do
    from session.erasure import Standing

log = logging.getLogger(__name__)

KEY_REFUSED = "key_refused"
NEAR = "near"
QUIET_S = 30.0
QUIET_PEOPLE = 100_000  # remembered at most; past it the memo starts again


@dataclass(frozen=True)
class AccountRules:
    """What the operator set: whether they have a key, share it, and the default limits."""

    operator_key: bool
    operator_shared: bool
    day_usd: float = 0.0  # 0: no limit
    month_usd: float = 0.0
    warn_share: float = 0.8
    people_bring_keys: bool = True

    @property
    def own_keys(self) -> str:
        """What the person's own key is to them: "needed" (the operator has a key but does not
        share it), "optional" (the operator's key, or without one the built-in offline model,
        serves them) or "off" (people bring no keys here)."""
        if not self.people_bring_keys:
            return "off"
        return "needed" if self.operator_key and not self.operator_shared else "optional"


@dataclass(frozen=True)
class AccountView:
    key: str  # "none", "yours" or "refused"
    ending: str
    month_usd: float  # what the person's own key paid this month


class KeyNotKept(Exception):  # noqa: N818 - an answer to the person, not a failure of Violet
    """The key was not kept: `reason` is "refused" (its account said no) or "unchecked" (the
    check could not be made just now)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the key was not kept: {reason}")
        self.reason = reason


# Checks a key with one small call; returns None when it works, else why not.
KeyCheck = Callable[[ApiKey, str], Awaitable[str | None]]


def adding(
    db: Session | Connection, table: Table, key: dict[str, object], sums: dict[str, float]
) -> Insert:
    """An insert of `sums` under `key` (the table's primary key) that adds them to the row's
    own when it is there already."""
    statement = conflict_insert(table, postgres=is_postgres_session(db)).values(**key, **sums)
    return statement.on_conflict_do_update(
        index_elements=list(key),
        set_={name: table.c[name] + value for name, value in sums.items()},
    )


@dataclass(frozen=True)
class Paying:
    """Who pays for a person's calls, and whether a limit of theirs applies (the operator pays
    within a budget: `Credential.budgeted`)."""

    payer: Payer
    hold: Hold
    sealed: Sealed | None = None
    budgeted: bool = False


class Accounts:
    def __init__(
        self,
        database: Database,
        keyring: Keyring,
        rules: AccountRules,
        check: KeyCheck,
        standing: Standing,
        clock: Clock = utc_now,
        quiet_s: float = QUIET_S,
    ) -> None:
        """`standing` says whether usage reported for a person may still name them."""
        self._database = database
        self._standing = standing
        self._keyring = keyring
        self._rules = rules
        self._check = check
        self._clock = clock
        # People found with nothing to tell, and when: asked again only after `quiet_s`, so a
        # turn reads no table for it (a notice made on another replica waits that long at most).
        # Each read of their credential finds out again, either way, in the same trip.
        self._quiet: dict[str, float] = {}
        self._quiet_s = quiet_s
        # Notices made on this replica, ever: a credential read that a notice came after
        # does not find the person quiet.
        self._notices_made = 0

    @property
    def current_kek(self) -> str:
        return self._keyring.current

    # --- who pays ---------------------------------------------------------------------------

    @property
    def own_keys(self) -> str:
        """What a key of their own is to people here (`AccountRules.own_keys`)."""
        return self._rules.own_keys

    async def sealed_credential(self, person: str) -> tuple[Payer, Hold, Sealed | None]:
        paying = await self._payer(person, await self._key_row(person))
        return paying.payer, paying.hold, paying.sealed

    async def sealed_with_pseudonym(self, person: str) -> tuple[Paying, str]:
        """Who pays for the person's calls, their key still sealed, and their pseudonym: the
        person's rows read in one trip."""
        made = self._notices_made
        own = await self._database.run(_own_rows_on, person, self._clock())
        paying = await self._payer(person, own.key_row)
        if own.untold:
            self._quiet.pop(person, None)
        elif made == self._notices_made:
            self._found_quiet(person)
        return paying, _pseudonym(person, _kept(own.pseudonym_key))

    async def credential(self, person: str) -> Credential:
        """The person's credential with their key opened, for this service's own calls. A key
        that does not open fails the call as an unavailable model does: it is answered with
        an apology and logged, not retried for ever."""
        paying, pseudonym = await self.sealed_with_pseudonym(person)
        payer, hold, sealed = paying.payer, paying.hold, paying.sealed
        if sealed is None:
            return Credential(payer, hold, pseudonym=pseudonym, budgeted=paying.budgeted)
        try:
            return Credential(payer, hold, self._keyring.open(sealed, person), pseudonym, sealed)
        except KeyringError as error:
            raise ModelUnavailable(f"the person's key could not be opened: {error}") from None

    async def _payer(self, person: str, key_row: Row[Any] | None) -> Paying:
        if key_row is not None and key_row.refused_at is None:
            sealed = Sealed(key_row.kek_id, key_row.nonce, key_row.sealed)
            return Paying(Payer.OWN, Hold.NONE, sealed)
        if not self._rules.operator_key:
            return Paying(Payer.BUILT_IN, Hold.NONE)
        if not self._rules.operator_shared:
            return Paying(Payer.NOBODY, Hold.NO_KEY)
        hold, limited = await self._budget_hold(person)
        return Paying(Payer.OPERATOR, hold, budgeted=limited)

    async def pseudonym(self, person: str) -> str:
        """What names the person in traces and to the API: a digest of the name under a key of
        their own, made on first need. Deleted with the person, the key takes with it any way
        to tell whom the digest named."""
        secret = await self._database.run(_pseudonym_key_on, person, self._clock())
        return _pseudonym(person, _kept(secret))

    async def key_refused(self, person: str, key: ApiKey, reason: str) -> None:
        await self.report_refused(person, key.ending, reason)

    async def report_refused(self, person: str, ending: str, reason: str) -> None:
        """Sets the person's key aside, if it is still the one that ends in `ending`, and
        keeps a notice to tell them once."""
        now = self._clock()
        async with self._database.begin() as db:
            refused = await db.execute(
                update(person_keys)
                .where(person_keys.c.person == person)
                .where(person_keys.c.ending == ending)
                .where(person_keys.c.refused_at.is_(None))
                .values(refused_at=now)
            )
            if rows_changed(refused):
                await self._add_notice(db, person, f"{KEY_REFUSED}:{now.isoformat()}")
                log.warning("a person's own key was refused: %s", reason)

    # --- the person's key -------------------------------------------------------------------

    async def set_key(self, person: str, key: ApiKey) -> AccountView:
        problem = await self._check(key, person)
        if problem is not None:
            raise KeyNotKept(problem)
        sealed = self._keyring.seal(key, person)
        values = {
            "kek_id": sealed.kek_id,
            "nonce": sealed.nonce,
            "sealed": sealed.ciphertext,
            "ending": key.ending,
            "set_at": self._clock(),
            "refused_at": None,
        }
        async with self._database.begin() as db:
            await db.execute(delete(person_keys).where(person_keys.c.person == person))
            await db.execute(insert(person_keys).values(person=person, **values))
            # A refusal of the old key not yet told is no news once a new key works.
            await db.execute(
                delete(account_notices)
                .where(account_notices.c.person == person)
                .where(account_notices.c.notice.like(f"{KEY_REFUSED}:%"))
                .where(account_notices.c.told_at.is_(None))
            )
        return await self.view(person)

    async def remove_key(self, person: str) -> AccountView:
        async with self._database.begin() as db:
            await db.execute(delete(person_keys).where(person_keys.c.person == person))
        return await self.view(person)

    async def view(self, person: str) -> AccountView:
        row = await self._key_row(person)
        month = await self._spent(person, Payer.OWN, self._month_start())
        if row is None:
            return AccountView("none", "", month)
        return AccountView("refused" if row.refused_at else "yours", row.ending, month)

    async def rotate(self) -> tuple[int, int]:
        """Seals every key not sealed under the current key-encryption key again; returns how
        many were, and how many another replica's rotation had done meanwhile. A local stack's
        keyring gets a new current key first; a deployment's has it put first in its setting."""
        self._keyring.add_key()
        async with self._database() as db:
            stale = await across_people(
                db,
                "session_keys_to_rotate",
                select(person_keys.c.person).where(person_keys.c.kek_id != self._keyring.current),
                current_kek=self._keyring.current,
            )
        rotated = 0
        for (person,) in stale:
            with acting_for(person):
                rotated += await self._reseal(person)
        return rotated, len(stale) - rotated

    async def _reseal(self, person: str) -> int:
        async with self._database.begin() as db:
            row = (
                await db.execute(
                    select(person_keys).where(person_keys.c.person == person).with_for_update()
                )
            ).first()
            if row is None or not self._keyring.needs_rotation(
                Sealed(row.kek_id, row.nonce, row.sealed)
            ):
                return 0
            key = self._keyring.open(Sealed(row.kek_id, row.nonce, row.sealed), person)
            sealed = self._keyring.seal(key, person)
            await db.execute(
                update(person_keys)
                .where(person_keys.c.person == person)
                .values(kek_id=sealed.kek_id, nonce=sealed.nonce, sealed=sealed.ciphertext)
            )
            return 1

    # --- usage and budgets ------------------------------------------------------------------

    async def record_usage(self, person: str, rows: Sequence[UsageRow]) -> None:
        """Adds the rows to the person's usage; for a person being removed, or removed since
        (calls that were in flight as they went, reported late), to the sums that name nobody,
        so that no row of theirs comes back after their removal."""
        if not rows:
            return
        with acting_for(person):  # also from the batches' own task, which acts for nobody
            await self._database.run(self._record_on, person, rows)

    def _record_on(self, connection: Connection, person: str, rows: Sequence[UsageRow]) -> None:
        removed = self._standing.removed_on(connection, person)
        for row in rows:
            sums = {
                "calls": row.calls,
                "input_tokens": row.input_tokens,
                "cache_write_tokens": row.cache_write_tokens,
                "cache_read_tokens": row.cache_read_tokens,
                "output_tokens": row.output_tokens,
                "cost_usd": row.cost_usd,
            }
            key = {"day": row.day, "call": row.call, "payer": row.payer, "model": row.model}
            if removed:
                connection.execute(adding(connection, erased_usage, key, sums))
            else:
                connection.execute(adding(connection, model_usage, {"person": person, **key}, sums))

    async def usage(self, person: str | None, since: date) -> list[tuple[str, UsageRow]]:
        """Usage by person and row since `since`, for the operator: one person, or everyone."""
        if person:
            with acting_for(person):
                async with self._database() as db:
                    found = list(
                        await db.execute(
                            select(model_usage)
                            .where(model_usage.c.person == person)
                            .where(model_usage.c.day >= since)
                        )
                    )
        else:
            async with self._database() as db:
                found = await across_people(
                    db,
                    "session_usage_since",
                    select(model_usage).where(model_usage.c.day >= since),
                    since=since,
                )
        rows = [(row.person, _usage_row(row)) for row in found]
        return sorted(rows, key=lambda pair: (pair[0], pair[1].day, pair[1].call, pair[1].payer))

    async def set_budget(
        self, person: str, day_usd: float, month_usd: float
    ) -> tuple[float, float]:
        """The person's own limits (negative: the setting's again; 0: none); returns those
        now in force."""
        values = {
            "day_usd": None if day_usd < 0 else day_usd,
            "month_usd": None if month_usd < 0 else month_usd,
        }
        async with self._database.begin() as db:
            await db.execute(delete(budgets).where(budgets.c.person == person))
            await db.execute(insert(budgets).values(person=person, **values))
        return await self._limits(person)

    async def _limits(self, person: str) -> tuple[float, float]:
        async with self._database() as db:
            row = (await db.execute(select(budgets).where(budgets.c.person == person))).first()
        day = row.day_usd if row is not None and row.day_usd is not None else self._rules.day_usd
        month = self._rules.month_usd
        if row is not None and row.month_usd is not None:
            month = row.month_usd
        return day, month

    async def _budget_hold(self, person: str) -> tuple[Hold, bool]:
        """The hold the person's spend on the operator's key calls for, and whether any limit
        applies to it at all."""
        day_limit, month_limit = await self._limits(person)
        if not day_limit and not month_limit:
            return Hold.NONE, False
        today = self._clock().date()
        periods = (
            ("day", Hold.BUDGET_DAY, day_limit, today, today.isoformat()),
            ("month", Hold.BUDGET_MONTH, month_limit, self._month_start(), today.strftime("%Y-%m")),
        )
        for name, hold, limit, since, when in periods:
            if not limit:
                continue
            spent = await self._spent(person, Payer.OPERATOR, since)
            if spent >= limit:
                return hold, True
            if spent >= self._rules.warn_share * limit:
                async with self._database.begin() as db:
                    await self._add_notice(db, person, f"{NEAR}:{name}:{when}")
        return Hold.NONE, True

    async def _spent(self, person: str, payer: Payer, since: date) -> float:
        async with self._database() as db:
            spent = await db.scalar(
                select(func.coalesce(func.sum(model_usage.c.cost_usd), 0.0))
                .where(model_usage.c.person == person)
                .where(model_usage.c.payer == payer.value)
                .where(model_usage.c.day >= since)
            )
        return float(spent or 0.0)

    def _month_start(self) -> date:
        return self._clock().date().replace(day=1)

    # --- telling the person -----------------------------------------------------------------

    async def take_notices(self, person: str, language: str) -> list[str]:
        """What to tell the person once, in their language, marked told as it is taken."""
        quiet = self._quiet.get(person)
        if quiet is not None and time.monotonic() - quiet < self._quiet_s:
            return []
        waiting = await self._database.run(_take_notices_on, person, self._clock())
        if not waiting:
            self._found_quiet(person)
            return []
        payer, _, _ = await self.sealed_credential(person)
        return [notice_phrase(notice, payer, language) for notice in waiting]

    def _found_quiet(self, person: str) -> None:
        if len(self._quiet) >= QUIET_PEOPLE:
            self._quiet.clear()
        self._quiet[person] = time.monotonic()

    async def _add_notice(self, db: Session, person: str, notice: str) -> None:
        self._notices_made += 1
        self._quiet.pop(person, None)
        await db.execute(
            conflict_insert(account_notices, postgres=is_postgres_session(db))
            .values(person=person, notice=notice, created_at=self._clock(), told_at=None)
            .on_conflict_do_nothing(index_elements=["person", "notice"])
        )

    async def _key_row(self, person: str) -> Row[Any] | None:
        return (await self._database.execute(_KEY_ROW, {"person": person})).first()


_KEY_ROW = select(person_keys).where(person_keys.c.person == bindparam("person"))
_PSEUDONYM_KEY = select(pseudonym_keys.c.secret).where(
    pseudonym_keys.c.person == bindparam("person")
)
# A person's notices not yet told.
_UNTOLD_OF = (account_notices.c.person == bindparam("person"), account_notices.c.told_at.is_(None))
_UNTOLD = select(exists().where(*_UNTOLD_OF))


@dataclass(frozen=True)
class _OwnRows:
    key_row: Row[Any] | None
    pseudonym_key: bytes | None
    untold: bool  # whether a notice waits to be told


def _own_rows_on(connection: Connection, person: str, now: datetime) -> _OwnRows:
    """The person's key row, if any, their pseudonym key (made on first need) and whether a
    notice waits for them."""
    key_row = connection.execute(_KEY_ROW, {"person": person}).first()
    pseudonym_key = _pseudonym_key_on(connection, person, now)
    return _OwnRows(key_row, pseudonym_key, bool(connection.scalar(_UNTOLD, {"person": person})))


def _pseudonym_key_on(connection: Connection, person: str, now: datetime) -> bytes | None:
    """The person's pseudonym key, made if they have none (one made meanwhile elsewhere is
    theirs); None only when it went again before it could be read."""
    parameters = {"person": person}
    secret = connection.scalar(_PSEUDONYM_KEY, parameters)
    if secret is not None:
        return bytes(secret)
    connection.execute(
        conflict_insert(pseudonym_keys, postgres=is_postgres_session(connection))
        .values(person=person, secret=secrets.token_bytes(32), created_at=now)
        .on_conflict_do_nothing(index_elements=[pseudonym_keys.c.person])
    )
    secret = connection.scalar(_PSEUDONYM_KEY, parameters)
    return None if secret is None else bytes(secret)


def _kept(secret: bytes | None) -> bytes:
    if secret is None:
        raise ModelUnavailable("the person's pseudonym key could not be kept")
    return secret


def _take_notices_on(connection: Connection, person: str, now: datetime) -> list[str]:
    """The person's notices not yet told, oldest first, marked told at `now`."""
    waiting = list(
        connection.scalars(
            select(account_notices.c.notice)
            .where(*_UNTOLD_OF)
            .order_by(account_notices.c.created_at),
            {"person": person},
        )
    )
    if waiting:
        connection.execute(
            update(account_notices)
            .where(account_notices.c.person == person, account_notices.c.notice.in_(waiting))
            .values(told_at=now)
        )
    return waiting


def _pseudonym(person: str, secret: bytes) -> str:
    return hmac.new(secret, person.encode(), hashlib.sha256).hexdigest()[:32]


def _usage_row(row) -> UsageRow:  # type: ignore[no-untyped-def]
    day = row.day if isinstance(row.day, date) else date.fromisoformat(str(row.day))
    if isinstance(day, datetime):
        day = day.date()
    return UsageRow(
        day=day,
        call=row.call,
        payer=row.payer,
        model=row.model,
        calls=int(row.calls),
        input_tokens=int(row.input_tokens),
        cache_write_tokens=int(row.cache_write_tokens),
        cache_read_tokens=int(row.cache_read_tokens),
        output_tokens=int(row.output_tokens),
        cost_usd=float(row.cost_usd),
    )
