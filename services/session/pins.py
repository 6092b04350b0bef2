"""Pinned items: open promises, approvals waiting and work in progress.

They travel with every main call, whatever the window holds, until kept, answered or done, in a
block of fixed size (`PINNED_ITEMS` items, `PINNED_CHARS` characters) whatever the model does:
approvals first, then promises, then work, the newest of each kind first. Every fold reviews the
open promises; a promise still open after `OVERDUE_AFTER_FOLDS` folds, or one that no longer
fits the block, is overdue: Violet asks the person about it (see `session.fold`), and only then does
it leave the block. No pin is ever deleted; a closed one keeps its row.

CHECK_IN addresses the person as `violet.language` says; the promise stays in plain double
quotes in every language.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from session.tables import pins
from violet.clock import Clock, utc_now
from violet.database import Database, Session, rows_changed
from violet.language import ENGLISH, phrase
from violet.models.tools import PINNED_HEADING, approval_line, headed, promise_line

Kind = Literal["promise", "approval", "work"]
PREFIX: dict[str, str] = {"promise": "p_", "approval": "a_", "work": "w_"}

PINNED_ITEMS = 8
PINNED_CHARS = 1_500
ITEM_CHARS = 200  # an item's words in the block; the full text stays in its row
# Folds come about every window/4 turns, so four folds are about one window of turns: with the
# default window of 30, some 30 turns (60 messages) after the promise was made.
OVERDUE_AFTER_FOLDS = 4
_PRIORITY: dict[str, int] = {"approval": 0, "promise": 1, "work": 2}


@dataclass(frozen=True)
class Pin:
    id: str
    kind: Kind
    text: str
    created_at: datetime
    ref: str | None = None


_OPEN = (
    select(pins)
    .where(pins.c.conversation_id == bindparam("conversation"), pins.c.closed_at.is_(None))
    .order_by(pins.c.created_at)
)
_OPEN_OF_KIND = _OPEN.where(pins.c.kind == bindparam("kind"))


def open_on(connection: Connection, conversation_id: str, kind: Kind | None = None) -> list[Pin]:
    """The conversation's open pins (of one kind, or all), oldest first."""
    keys = {"conversation": conversation_id}
    query = _OPEN if kind is None else _OPEN_OF_KIND
    rows = connection.execute(query, keys if kind is None else {**keys, "kind": kind})
    return [Pin(row.id, row.kind, row.text, row.created_at, row.ref) for row in rows]


class Pins:
    def __init__(self, database: Database, clock: Clock = utc_now) -> None:
        self._database = database
        self._clock = clock

    async def open(self, conversation_id: str, kind: Kind | None = None) -> list[Pin]:
        return await self._database.run(open_on, conversation_id, kind)

    async def add(
        self,
        conversation_id: str,
        kind: Kind,
        text: str,
        ref: str | None = None,
        also: Callable[[Session, Pin], Awaitable[None]] | None = None,
    ) -> Pin:
        """Adds a pin; `also` runs in the same transaction, given the new pin."""
        pin = Pin(
            PREFIX[kind] + secrets.token_hex(4), kind, " ".join(text.split()), self._clock(), ref
        )
        async with self._database() as tx, tx.begin():
            await tx.execute(
                insert(pins).values(
                    id=pin.id,
                    conversation_id=conversation_id,
                    kind=kind,
                    text=pin.text,
                    ref=ref,
                    created_at=pin.created_at,
                )
            )
            if also is not None:
                await also(tx, pin)
        return pin

    async def close(
        self,
        conversation_id: str,
        pin_ids: Iterable[str],
        also: Callable[[Session], Awaitable[None]] | None = None,
    ) -> int:
        """Closes the named pins of this conversation; ids of others are ignored. `also` runs
        in the same transaction when a pin was closed."""
        ids = list(pin_ids)
        if not ids:
            return 0
        async with self._database() as tx, tx.begin():
            result = await tx.execute(
                update(pins)
                .where(pins.c.conversation_id == conversation_id)
                .where(pins.c.id.in_(ids))
                .where(pins.c.closed_at.is_(None))
                .values(closed_at=self._clock())
            )
            closed = rows_changed(result)
            if closed and also is not None:
                await also(tx)
            return closed

    async def close_ref(self, conversation_id: str, kind: Kind, ref: str) -> int:
        async with self._database() as tx, tx.begin():
            result = await tx.execute(
                update(pins)
                .where(pins.c.conversation_id == conversation_id)
                .where(pins.c.kind == kind)
                .where(pins.c.ref == ref)
                .where(pins.c.closed_at.is_(None))
                .values(closed_at=self._clock())
            )
            return rows_changed(result)


def pinned(open_pins: Sequence[Pin]) -> list[Pin]:
    """The open items a main call carries, within the block's budget, oldest first."""
    chosen: set[str] = set()
    used = len(PINNED_HEADING)
    newest_first = list(reversed(open_pins))
    for pin in sorted(newest_first, key=lambda pin: _PRIORITY[pin.kind]):
        size = len(_line(pin)) + 1
        if len(chosen) == PINNED_ITEMS or used + size > PINNED_CHARS:
            continue
        chosen.add(pin.id)
        used += size
    return [pin for pin in open_pins if pin.id in chosen]


def overdue(open_pins: Sequence[Pin], folds: Sequence[datetime]) -> list[Pin]:
    """Open promises that waited too long: still open after `OVERDUE_AFTER_FOLDS` of the
    `folds` (when each happened), or left out of the pinned block for want of room."""
    shown = {pin.id for pin in pinned(open_pins)}

    def folds_since(pin: Pin) -> int:
        return sum(1 for at in folds if at > pin.created_at)

    return [
        pin
        for pin in open_pins
        if pin.kind == "promise"
        and (pin.id not in shown or folds_since(pin) >= OVERDUE_AFTER_FOLDS)
    ]


CHECK_IN = {
    "en": 'I still owe you this from earlier: "{promise}". Would you still like me to do it?',
    "pt": 'Ainda estou devendo isto de antes: "{promise}". Você ainda quer que eu faça?',
    "es": 'Aún te debo esto de antes: "{promise}". ¿Todavía quieres que lo haga?',
    "fr": 'Je vous dois encore ceci : "{promise}". Voulez-vous toujours que je le fasse ?',
    "de": 'Das schulde ich Ihnen noch: "{promise}". Soll ich es noch erledigen?',
    "it": 'Ti devo ancora questa cosa di prima: "{promise}". Vuoi ancora che la faccia?',
    "nl": 'Dit moet ik nog voor je doen: "{promise}". Wil je nog steeds dat ik het doe?',
    "pl": 'Wciąż jestem ci to winna: "{promise}". Czy nadal chcesz, żebym to zrobiła?',
    "tr": 'Daha önce söz verdiğim bir şey hâlâ bekliyor: "{promise}". Hâlâ yapmamı ister misiniz?',
    "id": 'Ada janji saya yang belum saya tepati: "{promise}". Apakah Anda masih ingin saya '
    "mengerjakannya?",
    "vi": 'Mình vẫn còn nợ bạn việc này từ trước: "{promise}". Bạn còn muốn mình làm không?',
    "ru": 'Я всё ещё должна вам вот это: "{promise}". Вы по-прежнему хотите, чтобы я это сделала?',
    "ar": 'ما زلتُ مدينةً لك بهذا الوعد: "{promise}". هل ما زال يهمّك أن أقوم به؟',
    "hi": 'पहले का यह काम मुझ पर अब भी बाकी है: "{promise}"। क्या मैं इसे अब भी करूँ?',
    "zh": '我之前答应你的这件事还没做："{promise}"。你还希望我去做吗？',
    "ja": '以前お約束したことが、まだ済んでいません："{promise}"。今でもご希望ですか？',
    "ko": '전에 약속드린 일이 아직 남아 있어요: "{promise}". 지금도 해 드릴까요?',
}


def check_in(pin: Pin, language: str = ENGLISH) -> str:
    """What Violet asks the person about an overdue promise, rather than let it go unsaid."""
    return phrase(CHECK_IN, language).format(promise=" ".join(pin.text.split()))


def render(shown: Sequence[Pin]) -> str:
    """The pinned section of the system prompt; empty when nothing is open."""
    if not shown:
        return ""
    return headed(PINNED_HEADING, (_line(pin) for pin in shown))


def _line(pin: Pin) -> str:
    text = " ".join(pin.text.split())
    if len(text) > ITEM_CHARS:
        text = text[: ITEM_CHARS - 1].rstrip() + "…"
    if pin.kind == "promise":
        return promise_line(pin.id, text)
    if pin.kind == "approval":
        return approval_line(pin.id, text)
    return f"- work in progress: {text}"
