"""Notifications from the session: what Violet tells while none of the person's devices follows
goes to each browser that turned them on, through a local push service that decrypts each one
and checks its VAPID signature; grouped, sent again after a failure, shown once, and never to a
person who is connected."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from session.conversations import Conversation
from session.notify.notifier import Notifier
from session.notify.outbox import Outbox, Pending
from session.notify.presence import Presence
from session.notify.subscriptions import MAX_DEVICES, Subscription, Subscriptions
from session.notify.wording import notice
from session.store import ConversationStore
from session.tables import push_outbox
from tests.support import push_service
from tests.support.fakes import session_tables
from tests.support.push_service import LocalPushService
from violet.database import Database
from violet.push import PushAddress, VapidKeys, WebPusher

GROUP_S = 5.0


class Clock:
    def __init__(self) -> None:
        self.now = datetime.fromisoformat("2026-12-04T09:00:00+00:00")

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Rig:
    db: Database
    store: ConversationStore
    conversation: Conversation
    outbox: Outbox
    subscriptions: Subscriptions
    presence: Presence
    notifier: Notifier
    push: LocalPushService
    clock: Clock

    async def subscribe(self, device: str, previews: bool = False) -> dict[str, str]:
        browser = self.push.subscription(device)
        address = PushAddress("webpush", browser["endpoint"], browser["p256dh"], browser["auth"])
        await self.subscriptions.keep("ana", Subscription(device, address, previews))
        return browser

    async def tell(self, text: str, kind: str = "result") -> int:
        """Violet tells an update, as the runner does; the message's seq."""
        self.outbox.written.clear()
        keeping = self.outbox.told("ana", kind)
        told = await self.store.transcript.append_told(
            self.conversation, 0, text, "model", then=keeping
        )
        await asyncio.sleep(0)
        assert not self.outbox.written.is_set(), "the sender was woken before the commit"
        self.outbox.wake(keeping)
        return told.seq

    @contextlib.asynccontextmanager
    async def following(self) -> AsyncIterator[None]:
        """A device of Ana's follows the conversation for the block, as a stream does."""
        async with self.presence.following("ana") as follower:
            await self.db.run(follower.arrive_on)
            yield

    async def pending(self) -> list[int]:
        async with self.db() as db:
            return list((await db.scalars(select(push_outbox.c.seq))).all())

    async def after_group(self) -> int:
        self.clock.advance(GROUP_S)
        return await self.notifier.send_due()


push = push_service.push  # the fixture


@pytest.fixture
async def rig(tmp_path: Path, push: LocalPushService) -> AsyncIterator[Rig]:
    clock = Clock()
    async with session_tables(tmp_path) as db:
        store = ConversationStore.open(db, notify=False)
        conversation = await store.conversations.conversation_of("ana")
        outbox = Outbox(db, GROUP_S, clock)
        subscriptions = Subscriptions(db, clock)
        presence = Presence(db, clock)
        pusher = WebPusher(VapidKeys.generate(), "mailto:ops@example.org", block_private=False)

        async def english(_: str) -> str:
            return "en"

        notifier = Notifier(
            db, outbox, subscriptions, presence, {"webpush": pusher}, english, "replica-1"
        )
        try:
            yield Rig(
                db, store, conversation, outbox, subscriptions, presence, notifier, push, clock
            )
        finally:
            await pusher.aclose()


async def test_a_result_told_while_no_device_follows_is_notified_once_in_plain_words(
    rig: Rig,
) -> None:
    await rig.subscribe("phone-1")
    seq = await rig.tell("The flights to Lisbon are in your documents.")
    assert await rig.pending() == [seq]
    assert rig.outbox.written.is_set()
    # Not before the group has had time to form.
    assert await rig.notifier.send_due() == 0
    assert await rig.after_group() == 1
    [received] = rig.push.received("phone-1")
    assert received.notice == {
        "title": "Violet",
        "body": "Violet finished something for you.",
        "seq": seq,
        "tag": f"violet-{seq}",
    }
    assert await rig.pending() == []
    assert await rig.after_group() == 0
    assert len(rig.push.received("phone-1")) == 1


async def test_nothing_is_kept_to_notify_for_a_person_whose_devices_take_none(rig: Rig) -> None:
    await rig.tell("Nobody here takes notifications.")
    assert await rig.pending() == []
    assert not rig.outbox.written.is_set()
    assert await rig.after_group() == 0


async def test_no_notification_goes_while_a_device_follows_all_along(rig: Rig) -> None:
    await rig.subscribe("phone-2")
    async with rig.following():
        await rig.tell("The page is open and shows this.")
        assert await rig.after_group() == 1  # dropped: the page shows it
    assert rig.push.received("phone-2") == []
    assert await rig.pending() == []


async def test_a_page_closed_just_after_the_telling_is_still_notified(rig: Rig) -> None:
    await rig.subscribe("phone-6")
    async with rig.following():
        # Its stream has not ended yet: the page closed a moment ago, as the result came.
        seq = await rig.tell("Your note about the picnic is ready.")
    assert await rig.after_group() == 1
    [received] = rig.push.received("phone-6")
    assert received.notice["seq"] == seq
    assert await rig.pending() == []


async def test_a_device_that_connects_before_the_group_goes_makes_it_unneeded(rig: Rig) -> None:
    await rig.subscribe("phone-3")
    await rig.tell("Your shopping list is ready.")
    async with rig.following():
        assert await rig.after_group() == 1
    assert rig.push.received("phone-3") == []
    assert await rig.pending() == []


async def test_results_close_together_make_one_notification_and_previews_show_the_newest(
    rig: Rig,
) -> None:
    await rig.subscribe("phone-4", previews=True)
    await rig.subscribe("tablet-4")
    first = await rig.tell("The shopping list is saved.")
    await rig.tell("Should I send the email to the school now?", kind="approval")
    newest = await rig.tell("I found three piano teachers near you.")
    assert await rig.after_group() == 1
    [previewed] = rig.push.received("phone-4")
    [plain] = rig.push.received("tablet-4")
    assert previewed.notice["body"] == "I found three piano teachers near you. (and 2 more)"
    assert plain.notice["body"] == "Violet has 3 new messages for you."
    for received in (previewed, plain):
        assert received.notice["seq"] == first
        assert received.notice["tag"] == f"violet-{newest}"


async def test_a_subscription_the_push_service_calls_gone_is_removed(rig: Rig) -> None:
    gone = await rig.subscribe("old-phone")
    await rig.subscribe("new-phone")
    rig.push.gone(gone["endpoint"])
    await rig.tell("Your reminder is set.", kind="check_in")
    assert await rig.after_group() == 1
    assert [s.device for s in await rig.subscriptions.of("ana")] == ["new-phone"]
    assert rig.push.received("new-phone")[0].notice["body"] == "Violet has a question for you."
    assert await rig.pending() == []


async def test_a_push_service_in_trouble_gets_the_same_notification_again_later(rig: Rig) -> None:
    browser = await rig.subscribe("phone-5")
    rig.push.fail_next(browser["endpoint"], 503)
    seq = await rig.tell("The recipe is in your documents.")
    assert await rig.after_group() == 1
    assert rig.push.received("phone-5") == []
    assert await rig.pending() == [seq]
    assert await rig.notifier.send_due() == 0  # the retry waits its turn
    rig.clock.advance(60)
    assert await rig.notifier.send_due() == 1
    [received] = rig.push.received("phone-5")
    assert received.notice["tag"] == f"violet-{seq}"
    assert await rig.pending() == []


async def test_a_person_keeps_at_most_ten_devices_the_oldest_change_goes_first(rig: Rig) -> None:
    for number in range(MAX_DEVICES + 1):
        rig.clock.advance(1)
        await rig.subscribe(f"device-{number:02d}")
    kept = [s.device for s in await rig.subscriptions.of("ana")]
    assert len(kept) == MAX_DEVICES
    assert "device-00" not in kept
    assert "device-10" in kept


async def test_followers_count_until_their_presence_runs_out(rig: Rig) -> None:
    async with rig.following():
        assert await rig.presence.here("ana")
        assert not await rig.presence.here("bo")
        rig.clock.advance(200)  # a replica that stopped without leaving
        assert not await rig.presence.here("ana")
    assert not await rig.presence.here("ana")


@pytest.mark.parametrize(
    ("language", "one", "several"),
    [
        ("pt", "A Violet precisa do seu OK para continuar.", "A Violet tem 2 mensagens novas"),
        ("de", "Violet braucht Ihr OK, um weiterzumachen.", "Violet hat 2 neue Nachrichten"),
        ("xx", "Violet needs your OK before she goes on.", "Violet has 2 new messages"),
    ],
)
def test_a_notification_speaks_the_persons_language(language: str, one: str, several: str) -> None:
    approval = Pending(id=1, seq=7, kind="approval", attempts=0)
    result = Pending(id=2, seq=9, kind="result", attempts=0)
    assert notice([approval], language, False, {}).body == one
    assert notice([approval, result], language, False, {}).body.startswith(several)
    # Without previews, what Violet said never shows, whatever the texts hold.
    private = notice([result], language, False, {9: "Your bank PIN is 4321"})
    assert "4321" not in private.body
