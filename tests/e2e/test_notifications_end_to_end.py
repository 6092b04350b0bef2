"""Notifications end to end, through the phone protocol and a local push service that decrypts
each push (RFC 8291) and checks its VAPID signature (RFC 8292): a browser turns them on, the
person closes the page, work finishes, and exactly one notification arrives; none while a device
is connected; a push service's "gone" removes the subscription."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import push_service
from tests.support.device import Device
from tests.support.push_service import LocalPushService, push_frame, turned_on
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from violet.identity import issue_token

RESULT_WAIT_S = 60.0
# Longer than the grouping delay and a send: what a notification that should not come would take.
QUIET_S = 4.0
NOT_HERE = "Violet can't send notifications to this browser. Nothing was changed."


push = push_service.push  # the fixture


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("violet-notifications")
    # The local push service listens on loopback over http, as pages in the fetch tests do.
    settings = {"VIOLET_FETCH_BLOCK_PRIVATE": "false", "VIOLET_PUSH_GROUP_S": "1"}
    with running_stack(home, "postgres", env=settings) as started:
        yield started


async def asked_and_left(stack: Stack, person: str, request: str) -> None:
    """The person asks for some work and closes the page as soon as it is taken."""
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    said = await phone.say(request)
    await phone.until(lambda f: f["type"] == "ack" and f["id"] == said)
    await phone.socket.close()


async def history(stack: Stack, person: str) -> list[dict[str, Any]]:
    phone, welcome = await Device.open(stack.live_url, stack.token(person))
    frames = [await phone.next() for _ in range(welcome["seq"])]
    await phone.socket.close()
    return frames


async def test_work_finished_while_the_page_is_closed_is_notified_once(
    stack: Stack, push: LocalPushService
) -> None:
    person = "notified-" + uuid.uuid4().hex[:6]
    browser = push.subscription(person)
    await turned_on(stack, person, browser)

    await asked_and_left(stack, person, "write a note about the school picnic on Saturday")
    [received] = await eventually(
        lambda: push.received(person), "a notification", timeout_s=RESULT_WAIT_S
    )
    assert received.notice["title"] == "Violet"
    assert received.notice["body"] == "Violet finished something for you."
    await asyncio.sleep(QUIET_S)
    assert len(push.received(person)) == 1

    # Tapping it opens the conversation at the message it is about: Violet's result.
    told = {frame["seq"]: frame for frame in await history(stack, person)}
    result = told[received.notice["seq"]]
    assert result["from"] == "violet" and "reply_to" not in result
    assert received.notice["tag"] == f"violet-{received.notice['seq']}"


async def test_no_notification_while_a_device_is_connected(
    stack: Stack, push: LocalPushService
) -> None:
    person = "connected-" + uuid.uuid4().hex[:6]
    browser = push.subscription(person)
    await turned_on(stack, person, browser)

    phone, _ = await Device.open(stack.live_url, stack.token(person))
    await phone.say("write a list of what to pack for the beach")
    await phone.until(
        lambda f: f["type"] == "message" and f["from"] == "violet" and "reply_to" not in f,
        timeout=RESULT_WAIT_S,
    )
    await asyncio.sleep(QUIET_S)
    assert push.received(person) == []
    await phone.socket.close()


async def test_a_subscription_the_push_service_calls_gone_is_removed(
    stack: Stack, push: LocalPushService
) -> None:
    person = "gone-" + uuid.uuid4().hex[:6]
    browser = push.subscription(person)
    device_id = await turned_on(stack, person, browser)
    push.gone(browser["endpoint"])

    await asked_and_left(stack, person, "write a note about the dentist on Monday")
    # No device connects before the push is tried: one that follows gets the result instead.
    await eventually(
        lambda: push.answered_gone(browser["endpoint"]), "a push tried", timeout_s=RESULT_WAIT_S
    )

    async def turned_off() -> dict[str, Any] | None:
        phone, _ = await Device.open(stack.live_url, stack.token(person))
        state = await push_frame(phone, {"type": "push.get", "device": device_id})
        await phone.socket.close()
        return state if state["on"] is False else None

    await eventually(turned_off, "the subscription removed", timeout_s=RESULT_WAIT_S, every_s=0.5)
    assert push.received(person) == []


async def test_an_address_that_is_not_a_push_service_is_refused_in_plain_words(
    stack: Stack,
) -> None:
    person = "refused-" + uuid.uuid4().hex[:6]
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    fake = {"endpoint": "ftp://127.0.0.1/x", "p256dh": "AAAA", "auth": "AAAA"}
    refused = await push_frame(phone, {"type": "push.on", "device": "d1", **fake})
    assert refused["type"] == "error" and refused["code"] == "bad_frame"
    assert refused["text"] == NOT_HERE
    state = await push_frame(phone, {"type": "push.get", "device": "d1"})
    assert state["on"] is False
    await phone.socket.close()


async def test_a_device_signed_out_elsewhere_is_refused_on_every_gateway_and_notified_no_more(
    stack: Stack, push: LocalPushService
) -> None:
    person = "lost-phone-" + uuid.uuid4().hex[:6]
    gateway_b = stack.start_replica("gateway", "b")
    url_b = f"ws://{stack.address(gateway_b)}/v1/live"
    try:
        laptop, _ = await Device.open(stack.live_url, stack.token(person))
        lost = issue_token(person, stack.secret, ttl_s=3600)  # another sign-in: another device
        phone, _ = await Device.open(url_b, lost)
        browser = push.subscription(person)
        turning_on = {"type": "push.on", "device": uuid.uuid4().hex, "previews": False, **browser}
        assert (await push_frame(phone, turning_on))["on"] is True

        await laptop.send({"type": "devices.list"})
        listed = (await laptop.until(lambda f: f["type"] == "devices"))["devices"]
        assert sorted(device["this"] for device in listed) == [False, True]
        (other,) = [device for device in listed if not device["this"]]
        await laptop.send({"type": "devices.signout", "device": other["device"]})

        # On the other gateway the lost phone is told at once, and its socket closes.
        async with asyncio.timeout(1.0):
            refused = await phone.until(lambda f: f["type"] == "error")
        assert refused["code"] == "unauthorized"
        left = (await laptop.until(lambda f: f["type"] == "devices"))["devices"]
        assert [device["this"] for device in left] == [True]
        for url in (stack.live_url, url_b):
            again = await Device.connect(url)
            await again.send({"type": "hello", "token": lost, "since": 0})
            assert (await again.next())["code"] == "unauthorized"
        subscriptions = stack.rows(
            "session", "SELECT 1 FROM push_subscriptions WHERE person = :p", p=person
        )
        assert subscriptions == []
        await laptop.socket.close()
    finally:
        stack.stop(gateway_b)
