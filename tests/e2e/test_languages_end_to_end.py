"""Violet's fixed words in the person's language, end to end, for three languages written in
other scripts (Russian, Arabic, Chinese): over the phone protocol, on the strict local Messages
API, a person writing in each sees the line that says Violet is thinking, an apology when the
model fails, a refusal when it declines, and a notification of finished work, all in their
language."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from session.activity import THINKING
from session.notify.wording import ONE
from session.turn import APOLOGY, DECLINED
from tests.support import push_service
from tests.support.device import Device
from tests.support.push_service import LocalPushService, turned_on
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually
from tests.support.web import LocalWeb

# What each person writes: a greeting, then two more things to say.
WRITES = {
    "ru": ("Привет! Как у тебя дела сегодня?", "Расскажи мне что-нибудь интересное", "Спасибо"),
    "ar": ("مرحبا، كيف حالك اليوم؟", "أخبرني شيئا جميلا من فضلك", "شكرا لك على المساعدة"),
    "zh": ("你好，今天过得怎么样？", "请给我讲一个有趣的故事", "谢谢你的帮助"),
}
# A thinking model, slower than the moment after which the activity line shows.
SLOW_S = 2.5
RESULT_WAIT_S = 90.0


@pytest.fixture(scope="module")
def web() -> Iterator[LocalWeb]:
    web = LocalWeb().start()
    web.add_page("/tides", "Tide times", "High tide is at 10:42 today.")
    yield web
    web.stop()


push = push_service.push  # the fixture


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, web: LocalWeb, push: LocalPushService
) -> Iterator[Stack]:
    env = {"VIOLET_SEARCH_URL": web.search_url, "VIOLET_FETCH_BLOCK_PRIVATE": "false"}
    home = tmp_path_factory.mktemp("violet-languages")
    with running_stack(home, "sqlite", "anthropic", env=env) as started:
        yield started


async def settled(stack: Stack) -> None:
    """Nothing under way: no model call of another kind takes the next scripted answer."""
    await eventually(lambda: stack.unfinished() == [], "the stack settled", timeout_s=30.0)


async def answer(stack: Stack, phone: Device, text: str, scripted: dict[str, Any]) -> str:
    await settled(stack)
    assert stack.model_api is not None
    stack.model_api.push(scripted)
    return str((await phone.ask(text))["text"])


# The apology and the refusal are failures survived on purpose.
@pytest.mark.expects_fallbacks
@pytest.mark.parametrize("language", sorted(WRITES))
async def test_a_person_sees_violets_fixed_words_in_their_own_script(
    stack: Stack, push: LocalPushService, language: str
) -> None:
    person = f"{language}-{uuid.uuid4().hex[:6]}"
    greeting, asking, thanks = WRITES[language]
    await turned_on(stack, person, push.subscription(person))
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    await phone.ask(greeting)

    # Slow to answer: the activity line says she is thinking, in their language.
    await answer(stack, phone, asking, {"text": "…", "stall_s": SLOW_S})
    lines = [f["text"] for f in phone.seen if f["type"] == "activity" and f["text"]]
    assert lines and set(lines) == {THINKING[language]}, lines

    failed = {"error": {"status": 400, "type": "invalid_request_error"}}
    assert await answer(stack, phone, asking, failed) == APOLOGY[language]
    assert await answer(stack, phone, asking, {"refusal": "cyber"}) == DECLINED[language]

    # Work finished while the page is closed: the notification is in their language.
    work = {"tool_use": {"name": "start_work", "input": {"request": "look up the tide times"}}}
    await answer(stack, phone, thanks, work)
    await phone.close()
    [notified] = await eventually(
        lambda: push.received(person), "a notification", timeout_s=RESULT_WAIT_S
    )
    assert notified.notice["body"] == ONE["result"][language]
