"""The web page as an app on a phone's home screen, in a real headless Chromium against a real
stack: it installs, opens with no connection from the files its helper (`sw.js`) keeps, keeps
what the person writes while Violet can't be reached and sends it once she can, and offers
Violet's notices.

How Violet is made unreachable: Chromium's network emulation (DevTools `Network.
emulateNetworkConditions`, offline) reaches the page only. It neither closes a websocket already
open nor stops the helper's own fetches, so the stack's gateway is stopped as well: nothing of
Violet answers then, which is what a phone with no connection sees. Both are undone to come back.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from gateway.app import PAGE_DIR, PAGE_FILES
from tests.e2e.test_web_page import WAIT_S, chromium, css, sign_in, texts, visible, wait_for
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually_blocking

# The name of the helper's current set of kept files (a new version of the set, a new name).
SHELL_CACHE = re.findall(r'const SHELL_CACHE = "([^"]+)"', (PAGE_DIR / "sw.js").read_text())[0]
OFFLINE_WORDS = "Violet can't be reached right now"
SETTLE_S = 30.0


@pytest.fixture(scope="module")
def page_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with running_stack(tmp_path_factory.mktemp("violet-installable"), "sqlite") as started:
        yield started


def ran(driver: Any, body: str) -> Any:
    """What the async JavaScript `body` returns in the page; its error fails the test."""
    script = (
        "const done = arguments[arguments.length - 1];"
        f"(async () => {{ {body} }})().then((v) => done({{ v }}), (e) => done({{ e: String(e) }}));"
    )
    answer = driver.execute_async_script(script)
    assert "e" not in answer, answer["e"]
    return answer.get("v")


def connected(driver: Any) -> bool:
    return bool(driver.execute_script("return typeof state !== 'undefined' && state.open"))


def open_as_app(driver: Any, stack: Stack, person: str) -> str:
    """Signs `person` in, then reloads once the helper is installed, so it is in charge of the
    page; returns their token."""
    token = stack.token(person)
    driver.set_script_timeout(WAIT_S)
    driver.get(stack.http_url + "/")
    sign_in(driver, token)
    ran(driver, "await navigator.serviceWorker.ready;")
    driver.refresh()
    wait_for(driver, lambda: connected(driver))
    assert driver.execute_script("return navigator.serviceWorker.controller.scriptURL").endswith(
        "/sw.js"
    )
    return token


def kept_paths(driver: Any) -> set[str]:
    return set(
        ran(
            driver,
            f"const cache = await caches.open('{SHELL_CACHE}');"
            "return (await cache.keys()).map((r) => new URL(r.url).pathname);",
        )
    )


def emulate_offline(driver: Any, offline: bool) -> None:
    driver.execute_cdp_cmd("Network.enable", {})
    unlimited = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": offline, **unlimited})


def test_the_page_installs_and_its_helper_keeps_only_the_page_s_own_files(
    page_stack: Stack,
) -> None:
    with chromium() as driver:
        open_as_app(driver, page_stack, "ada")

        found = driver.execute_cdp_cmd("Page.getAppManifest", {})
        assert found["errors"] == []
        assert driver.execute_cdp_cmd("Page.getInstallabilityErrors", {}) == {
            "installabilityErrors": []
        }
        manifest = json.loads(found["data"])
        violet = re.search(r"--violet: (#[0-9a-f]{6})", (PAGE_DIR / "style.css").read_text())
        page = re.search(r"--page: (#[0-9a-f]{6})", (PAGE_DIR / "style.css").read_text())
        assert violet and page
        assert {key: manifest[key] for key in ("name", "id", "start_url", "scope", "display")} == {
            "name": "Violet",
            "id": "/",
            "start_url": "/",
            "scope": "/",
            "display": "standalone",
        }
        assert manifest["short_name"] and manifest["description"]
        assert (manifest["theme_color"], manifest["background_color"]) == (violet[1], page[1])
        assert {(icon["sizes"], icon["purpose"]) for icon in manifest["icons"]} == {
            ("192x192", "any"),
            ("512x512", "any"),
            ("512x512", "maskable"),
        }
        theme = css(driver, "meta[name=theme-color]")[0].get_attribute("content")
        assert theme == violet[1]
        assert (
            css(driver, "link[rel=apple-touch-icon]")[0]
            .get_attribute("href")
            .endswith("/icons/apple-touch-icon.png")
        )

        # Only the page's own files are kept: never the archive, the sign-in or the health.
        fetched = ran(
            driver,
            "const token = localStorage.getItem('violet.token');"
            "const archive = {headers: {Authorization: `Bearer ${token}`}};"
            "const answers = [await fetch('/v1/export', archive), await fetch('/healthz'),"
            "  await fetch('/sign-in/provider')];"
            "return answers.map((answer) => answer.status);",
        )
        assert fetched == [200, 200, 404]  # no identity provider on this stack
        assert kept_paths(driver) == set(PAGE_FILES) - {"/sw.js"}

        # A new version of a file replaces the kept one on the next visit: with an older copy
        # kept, a reload still runs the server's copy and keeps it in the older one's place.
        ran(
            driver,
            f"const cache = await caches.open('{SHELL_CACHE}');"
            "await cache.put('/app.js', new Response('// an older version', "
            "{headers: {'Content-Type': 'text/javascript'}}));",
        )
        driver.refresh()
        wait_for(driver, lambda: connected(driver))
        served = httpx.get(page_stack.http_url + "/app.js").text
        wait_for(
            driver,
            lambda: ran(driver, "return await (await caches.match('/app.js')).text();") == served,
        )


def history(live_url: str, token: str) -> list[dict[str, Any]]:
    """Every message of the person's conversation, as another device of theirs is shown it."""
    with connect(live_url) as socket:
        socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        welcome = json.loads(socket.recv(timeout=WAIT_S))
        assert welcome["type"] == "welcome", welcome
        messages: list[dict[str, Any]] = []
        while (messages[-1]["seq"] if messages else 0) < welcome["seq"]:
            frame = json.loads(socket.recv(timeout=WAIT_S))
            if frame["type"] == "message":
                messages.append(frame)
        return messages


def waiting(driver: Any) -> list[str]:
    return texts(driver, ".messages .waiting")


def test_what_is_written_while_violet_can_t_be_reached_is_kept_and_sent_once(
    page_stack: Stack,
) -> None:
    from selenium.webdriver.common.keys import Keys

    words = "Is the library open on Sunday?"
    with chromium() as driver:
        token = open_as_app(driver, page_stack, "bea")
        page_stack.stop("gateway")
        emulate_offline(driver, True)
        try:
            wait_for(driver, lambda: OFFLINE_WORDS in css(driver, "#connection")[0].text)
            assert not connected(driver)

            # The page opens from what its helper kept, and says Violet can't be reached.
            driver.refresh()
            wait_for(driver, lambda: visible(driver, "#say-text"))
            wait_for(driver, lambda: OFFLINE_WORDS in css(driver, "#connection")[0].text)
            assert "kept and sent when she's back" in css(driver, "#connection")[0].text

            css(driver, "#say-text")[0].send_keys(words, Keys.ENTER)
            wait_for(driver, lambda: waiting(driver) != [])
            [shown] = waiting(driver)
            assert words in shown and "Waiting to send" in shown

            # Still there after closing and opening the page again, with no connection.
            driver.refresh()
            wait_for(driver, lambda: waiting(driver) != [])
            [shown] = waiting(driver)
            assert words in shown and "Waiting to send" in shown
            [say_id] = driver.execute_script("return [...state.unsent.keys()]")
        finally:
            page_stack.start("gateway")
            emulate_offline(driver, False)

        # Back: sent with the id it was given, stored, and answered.
        wait_for(driver, lambda: connected(driver))
        wait_for(driver, lambda: waiting(driver) == [])
        wait_for(driver, lambda: texts(driver, ".messages .from-you .text") == [words])
        wait_for(driver, lambda: len(css(driver, ".messages .from-violet")) == 1)
        assert css(driver, "#connection")[0].text == ""
        assert ran(driver, "return (await kept('readonly', (s) => s.getAll())).length;") == 0

    eventually_blocking(
        lambda: not page_stack.unfinished(), "nothing left to answer", timeout_s=SETTLE_S
    )
    messages = history(page_stack.live_url, token)
    assert [m["text"] for m in messages if m["from"] == "you"] == [words]
    assert len([m for m in messages if m.get("reply_to") == say_id]) == 1
    assert len(messages) == 2


def push_answer(live_url: str, token: str) -> dict[str, Any]:
    """What the gateway answers a push.get, from another device of the person."""
    with connect(live_url) as socket:
        socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        assert json.loads(socket.recv(timeout=WAIT_S))["type"] == "welcome"
        socket.send(json.dumps({"type": "push.get", "device": "another-browser"}))
        while True:
            frame: dict[str, Any] = json.loads(socket.recv(timeout=WAIT_S))
            if frame["type"] in ("push", "error"):
                return frame


# Stands in for the browser's notice service, which a test can't reach: an address that
# `subscribe` gives, and `unsubscribe` takes back.
FAKE_NOTICE_SERVICE = """
window.subscribed = [];
window.unsubscribed = 0;
let current = null;
PushManager.prototype.getSubscription = async () => current;
PushManager.prototype.subscribe = async (options) => {
  subscribed.push({userVisibleOnly: options.userVisibleOnly,
                   key: [...new Uint8Array(options.applicationServerKey)]});
  current = {
    options,
    toJSON: () => ({endpoint: 'https://push.example/a1', keys: {p256dh: 'BP-key', auth: 'au-th'}}),
    unsubscribe: async () => { current = null; unsubscribed += 1; return true; },
  };
  return current;
};
"""

# Keeps the push frames the page sends, instead of sending them: their answers are given by the
# test, so that what the page does with each answer is known.
KEEP_PUSH_FRAMES = """
window.pushFrames = [];
const socket = state.socket;
const sendNow = socket.send.bind(socket);
socket.send = (text) => {
  const frame = JSON.parse(text);
  if (frame.type.startsWith('push.')) pushFrames.push(frame);
  else sendNow(text);
};
"""

# The server's key, as a P-256 public key looks (65 bytes, 0x04 first): the page only hands its
# bytes to `subscribe`.
KEY_BYTES = bytes([4, *range(1, 65)])
KEY = base64.urlsafe_b64encode(KEY_BYTES).rstrip(b"=").decode()


def push_frames(driver: Any, count: int) -> list[dict[str, Any]]:
    """The push frames the page sent, once there are `count`."""
    script = f"return pushFrames.length >= {count} ? pushFrames : null"
    return list(wait_for(driver, lambda: driver.execute_script(script)))


NOTICES = (
    "const helper = await navigator.serviceWorker.ready;"
    "return (await helper.getNotifications()).map((n) => "
    "({tag: n.tag, body: n.body, data: n.data, icon: n.icon}));"
)
DELIVERY_TRIES = 3
DELIVERY_WAIT_S = 3.0


def push_to_helper(driver: Any, notice: dict[str, Any], bodies: list[str]) -> list[dict[str, Any]]:
    """Delivers `notice` to sw.js as the browser's notice service would; returns the notices
    shown once their bodies are `bodies`."""
    from selenium.common.exceptions import TimeoutException

    origin = driver.execute_script("return location.origin")
    # The one registration of a fresh profile is the first: number 0.
    delivery = {"origin": origin, "registrationId": "0", "data": json.dumps(notice)}
    seen: list[Any] = []

    def shown() -> bool:
        seen[:] = ran(driver, NOTICES)
        return sorted(n["body"] for n in seen) == sorted(bodies)

    # Now and then Chromium drops a delivery made through DevTools (about one test run in
    # five): it is made again, which the notice's tag makes harmless, as a push service's
    # retry would be.
    for _ in range(DELIVERY_TRIES):
        driver.execute_cdp_cmd("ServiceWorker.deliverPushMessage", delivery)
        try:
            wait_for(driver, shown, DELIVERY_WAIT_S)
            return seen
        except TimeoutException:
            continue
    raise AssertionError(f"notices {bodies} wanted, shown: {seen}")


def answer(driver: Any, on: bool, previews: bool, key: str = KEY) -> None:
    frame = {"type": "push", "key": key, "on": on, "previews": previews}
    driver.execute_script(f"receive({json.dumps(frame)})")


def test_violet_s_notices_are_offered_turned_on_and_off_and_shown(page_stack: Stack) -> None:
    with chromium() as driver:
        token = open_as_app(driver, page_stack, "cy")
        css(driver, "#show-key")[0].click()
        device = driver.execute_script("return localStorage.getItem('violet.device')")
        assert re.fullmatch(r"[0-9a-f-]{36}", device)

        # Offered when the gateway has a key to offer, hidden when it has none (`key` "") or
        # answers push.get with an error (a gateway before notices): never a word of it shown.
        got = push_answer(page_stack.live_url, token)
        offered = got["type"] == "push" and bool(got["key"])
        wait_for(driver, lambda: driver.execute_script("return state.tell.asked") == "")
        assert bool(visible(driver, "#tell-me")) == offered
        answer(driver, on=False, previews=False, key="")
        assert not visible(driver, "#tell-me")
        driver.execute_script(
            "state.tell.asked = 'get';"  # as askTelling() leaves it, the push.get just sent
            "receive({type: 'error', code: 'bad_frame', text: 'There is no such frame.'})"
        )
        assert not visible(driver, "#tell-me")
        assert css(driver, "#key-problem")[0].text == css(driver, "#chat-problem")[0].text == ""

        origin = {"origin": page_stack.http_url, "permissions": ["notifications"]}
        driver.execute_cdp_cmd("Browser.grantPermissions", origin)
        driver.execute_script(FAKE_NOTICE_SERVICE + KEEP_PUSH_FRAMES)
        driver.execute_script("askTelling()")  # as after each welcome
        assert push_frames(driver, 1) == [{"type": "push.get", "device": device}]
        answer(driver, on=False, previews=False)
        switch = visible(driver, "#tell-me-on")
        previews = css(driver, "#tell-me-previews")[0]
        assert switch.get_attribute("role") == "switch" and not switch.is_selected()
        assert not previews.is_enabled() and not previews.is_selected()
        assert "home screen" in css(driver, "#tell-me")[0].text

        # On: this browser's address for notices goes to Violet, lock screen previews off.
        switch.click()
        [_, turned_on] = push_frames(driver, 2)
        address = {"endpoint": "https://push.example/a1", "p256dh": "BP-key", "auth": "au-th"}
        assert turned_on == {"type": "push.on", "device": device, **address, "previews": False}
        [subscribed] = driver.execute_script("return subscribed")
        assert subscribed["userVisibleOnly"] is True
        assert bytes(subscribed["key"]) == KEY_BYTES
        answer(driver, on=True, previews=False)
        assert switch.is_selected() and previews.is_enabled() and not previews.is_selected()

        # The lock screen choice goes with the same address.
        previews.click()
        [*_, with_previews] = push_frames(driver, 3)
        assert with_previews == {**turned_on, "previews": True}
        assert len(driver.execute_script("return subscribed")) == 1
        answer(driver, on=True, previews=True)
        assert previews.is_selected()

        # Off: Violet is told, and this browser gives up its address.
        switch.click()
        [*_, turned_off] = push_frames(driver, 4)
        assert turned_off == {"type": "push.off", "device": device}
        wait_for(driver, lambda: driver.execute_script("return unsubscribed") == 1)
        answer(driver, on=False, previews=True)
        assert not switch.is_selected() and not previews.is_enabled()
        assert not previews.is_selected()

        # The helper shows what comes while the page is closed; a notice of the same tag
        # takes the place of the one shown (Violet may send one twice), another shows beside.
        driver.execute_cdp_cmd("ServiceWorker.enable", {})
        ready = {"title": "Violet", "body": "Your note is ready.", "seq": 2, "tag": "w1"}
        [shown] = push_to_helper(driver, ready, ["Your note is ready."])
        icon = f"{page_stack.http_url}/icons/icon-192.png"
        assert shown == {
            "tag": "w1",
            "body": "Your note is ready.",
            "data": {"seq": 2},
            "icon": icon,
        }
        push_to_helper(driver, {**ready, "body": "Your note is ready!"}, ["Your note is ready!"])
        found = {**ready, "body": "Found it.", "tag": "w2"}
        push_to_helper(driver, found, ["Your note is ready!", "Found it."])


def test_a_tapped_notice_opens_the_conversation_at_its_message(page_stack: Stack) -> None:
    from selenium.webdriver.common.keys import Keys

    with chromium() as driver:
        open_as_app(driver, page_stack, "dee")
        # Messages 1 to 6: each of the person's, then Violet's answer to it.
        for answers, words in enumerate(("Hello", "How are you?", "Good night"), start=1):
            css(driver, "#say-text")[0].send_keys(words, Keys.ENTER)
            wait_for(driver, lambda n=answers: len(css(driver, ".messages .from-violet")) == n)

        def marked(seq: int) -> bool:
            return "shown-again" in css(driver, f"#m{seq}")[0].get_attribute("class")

        # A notice tapped with no page open opens one at its message (sw.js: /#m<seq>).
        driver.get("about:blank")
        driver.get(page_stack.http_url + "/#m2")
        wait_for(driver, lambda: css(driver, "#m6") != [] and marked(2))
        assert driver.execute_script("return location.hash") == ""

        # With the page open, sw.js tells the page which message to show.
        css(driver, "#show-memory")[0].click()
        driver.execute_script(
            "navigator.serviceWorker.dispatchEvent("
            "new MessageEvent('message', {data: {type: 'open', seq: 4}}))"
        )
        wait_for(driver, lambda: visible(driver, "#chat") and marked(4))
        assert not marked(6)
