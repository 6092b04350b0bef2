"""Reminders end to end, through the phone protocol: a person in Auckland and one in Los Angeles
set reminders for their own local times, a recurring one and a scheduled look-up, list them and
cancel one; the whole stack is killed (SIGKILL) before the first is due and comes back, with two
session replicas, after it. Each occurrence is told once: the missed ones at once and saying they
are late, the next ones at their time; the person with no device connected is notified.

The session's clock is moved ahead at the restart (`VIOLET_CLOCK_AHEAD_S`), so that ten minutes
of the people's time pass in a few seconds of the test's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.support import push_service
from tests.support.device import Device
from tests.support.push_service import LocalPushService, turned_on
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from tests.support.web import LocalWeb

AUCKLAND, LOS_ANGELES = "Pacific/Auckland", "America/Los_Angeles"
# Minutes after the base minute: what is missed while the stack is down, and what comes after.
MISSED, ON_TIME = 2, 10
# Where the people's clock stands once the stack is back: 20 s before the on-time reminders.
BACK_AT = timedelta(minutes=ON_TIME) - timedelta(seconds=20)
TOLD_WAIT_S = 60.0
# Longer than a look for due reminders and a telling: what a second telling would take.
QUIET_S = 4.0


@pytest.fixture(scope="module")
def web() -> Iterator[LocalWeb]:
    web = LocalWeb().start()
    web.add_page("/porto-tides", "Tide times for Porto", "High tide in Porto is at 10:42 today.")
    yield web
    web.stop()


push = push_service.push  # the fixture


def clock(base: datetime, minutes: int, zone: str) -> str:
    return (base + timedelta(minutes=minutes)).astimezone(ZoneInfo(zone)).strftime("%H:%M")


def told(frames: list[dict[str, Any]], words: str) -> list[dict[str, Any]]:
    """Violet's messages of her own (no reply to a say) holding `words`."""
    return [
        frame
        for frame in frames
        if frame["type"] == "message"
        and frame["from"] == "violet"
        and "reply_to" not in frame
        and words in frame["text"]
    ]


async def history(stack: Stack, person: str, zone: str) -> list[dict[str, Any]]:
    phone, welcome = await Device.open(stack.live_url, stack.token(person), tz=zone)
    frames = [await phone.next() for _ in range(welcome["seq"])]
    await phone.close()
    return frames


@pytest.mark.parametrize(("database", "model"), [("postgres", "offline"), ("sqlite", "anthropic")])
async def test_reminders_fire_once_at_the_persons_time_across_a_crash(
    tmp_path_factory: pytest.TempPathFactory,
    web: LocalWeb,
    push: LocalPushService,
    database: str,
    model: str,
) -> None:
    env = {
        "VIOLET_SEARCH_URL": web.search_url,
        "VIOLET_FETCH_BLOCK_PRIVATE": "false",
        "VIOLET_REMINDER_POLL_S": "0.5",
        "VIOLET_PUSH_GROUP_S": "1",
    }
    home = tmp_path_factory.mktemp(f"violet-reminders-{database}")
    with running_stack(home, database, model, env=env) as stack:
        ana, bo = f"ana-{uuid.uuid4().hex[:6]}", f"bo-{uuid.uuid4().hex[:6]}"
        await turned_on(stack, bo, push.subscription(bo))
        base = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)

        phone, _ = await Device.open(stack.live_url, stack.token(ana), tz=AUCKLAND)
        sam = clock(base, MISSED, AUCKLAND)
        said = (await phone.ask(f"Remind me at {sam} to pick up Sam"))["text"]
        assert sam in said and "pick up Sam" in said, said
        pills = clock(base, ON_TIME, AUCKLAND)
        said = (await phone.ask(f"remind me every day at {pills} to take my pills"))["text"]
        assert f"every day at {pills}" in said and "take my pills" in said, said
        said = (await phone.ask("remind me on Friday at 9 to water the plants"))["text"]
        assert "09:00" in said and "water the plants" in said, said
        listed = (await phone.ask("What reminders do I have?"))["text"]
        for words in ("pick up Sam", "take my pills", "water the plants"):
            assert words in listed, listed
        said = (await phone.ask("cancel the plants reminder"))["text"]
        assert "water the plants" in said, said
        listed = (await phone.ask("what reminders do I have?"))["text"]
        assert "water the plants" not in listed and "pick up Sam" in listed, listed
        said = (await phone.ask("remind me sometime to call the bank"))["text"]
        assert "When should I remind you?" in said, said
        # Times that make no reminder get a plain answer, and nothing is stored.
        said = (await phone.ask("remind me on February 30 at 9 to pay the rent"))["text"]
        assert "does not exist on the calendar" in said, said
        said = (await phone.ask("remind me every 5 minutes to drink water"))["text"]
        assert "at most every 15 minutes" in said, said

        laptop, _ = await Device.open(stack.live_url, stack.token(bo), tz=LOS_ANGELES)
        mum = clock(base, ON_TIME, LOS_ANGELES)
        said = (await laptop.ask(f"remind me to call Mum at {mum}"))["text"]
        assert mum in said and "call Mum" in said, said
        tides = clock(base, MISSED, LOS_ANGELES)
        request = f"Every day at {tides}, look up the tide times for Porto"
        said = (await laptop.ask(request))["text"]
        assert f"every day at {tides}" in said and "tide times for Porto" in said, said
        await laptop.close()  # Bo has no device connected from here on
        await phone.close()

        assert datetime.now(UTC) < base + timedelta(minutes=MISSED), "set too slowly to test"
        stack.kill()
        ahead = (base + BACK_AT - datetime.now(UTC)).total_seconds()
        back = {"VIOLET_CLOCK_AHEAD_S": f"{ahead:.3f}"}
        stack.start(env=back)
        stack.start_replica("session", "b", env=back)

        phone, _ = await Device.open(stack.live_url, stack.token(ana), tz=AUCKLAND)
        late = await phone.until(lambda f: told([f], "pick up Sam"), TOLD_WAIT_S)
        assert "late" in late["text"] and sam in late["text"], late
        on_time = await phone.until(lambda f: told([f], "take my pills"), TOLD_WAIT_S)
        assert "late" not in on_time["text"] and pills in on_time["text"], on_time
        await phone.close()

        # Bo, away: notified of the reminder and of the look-up's result (together, when told
        # within a moment of each other: a notice covers the messages from its seq to the one
        # its tag names). Read before any device of his connects, which would stop a notice.
        def told_to_bo() -> list[int]:
            rows = stack.rows(
                "session",
                "SELECT m.seq, m.text FROM messages m JOIN conversations c "
                "ON c.id = m.conversation_id WHERE c.person = :p AND m.author = 'violet' "
                "AND m.reply_to IS NULL",
                p=bo,
            )
            seqs = [row.seq for row in rows if "call Mum" in row.text or "10:42" in row.text]
            return seqs if len(seqs) >= 2 else []

        def covered() -> set[int]:
            return {
                seq
                for received in push.received(bo)
                for seq in range(
                    received.notice["seq"],
                    int(received.notice["tag"].removeprefix("violet-")) + 1,
                )
            }

        told_seqs = await eventually(
            told_to_bo, "Bo's reminder and look-up told", timeout_s=TOLD_WAIT_S
        )
        await eventually(
            lambda: set(told_seqs) <= covered(), "Bo notified of both", timeout_s=TOLD_WAIT_S
        )
        await asyncio.sleep(QUIET_S)

        seen = await history(stack, ana, AUCKLAND)
        assert len(told(seen, "pick up Sam")) == 1 and len(told(seen, "take my pills")) == 1
        assert told(seen, "water the plants") == []
        assert told(seen, "pay the rent") == [] and told(seen, "drink water") == []
        seen = await history(stack, bo, LOS_ANGELES)
        [reminded] = told(seen, "call Mum")
        [result] = told(seen, "10:42")
        assert {reminded["seq"], result["seq"]} == set(told_seqs)
        # Nothing left to do (captures into memory may still be on their way on a busy machine).
        await eventually(lambda: stack.unfinished() == [], "nothing left", timeout_s=TOLD_WAIT_S)
