"""The gateway's web page in a real headless browser: sign in (with a code, or through the
identity provider), chat, the memory page, the documents, the page of the person's own
Anthropic key, and their data: downloaded whole, or deleted."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.sync.client import connect

from gateway.app import PAGE_DIR
from gateway.phrases import KEYS_NOT_HERE
from tests.support.ci import unavailable
from tests.support.messages_api import MessagesAPIProcess
from tests.support.oidc import AUDIENCE, DOMAIN, LocalIssuer
from tests.support.stack import SERVICES, running_stack
from tests.support.waiting import eventually_blocking
from violet.identity import issue_token
from violet.models.offline_phrases import ASKED, FRIENDLY

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE_SIZE = (390, 844)
WAIT_S = 20.0
FACT_WAIT_S = 30.0
RESULT_WAIT_S = 60.0
# The one key the local Messages API takes from a person; any other it refuses.
GOOD_KEY = "sk-ant-a-person-s-own-key-Wx7z"


def _missing() -> str:
    """Why the browser test cannot run here, or "" when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed (pip install selenium)"
    absent = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if absent:
        return f"{' and '.join(absent)} missing (apt-get install chromium chromium-driver)"
    return ""


@contextlib.contextmanager
def chromium(language: str = "en-US") -> Iterator[Any]:
    """A headless Chromium the size of a phone, with a profile of its own (thrown away after),
    asking for pages in `language`; the test is skipped, or fails on CI, where there is none."""
    reason = _missing()
    if reason:
        unavailable(f"no headless browser: {reason}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="violet-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={PHONE_SIZE[0]},{PHONE_SIZE[1]}",
        f"--lang={language}",
    ):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


def wait_for(driver: Any, condition: Callable[[], Any], timeout: float = WAIT_S) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # An element found may be gone when read (a message waiting to be sent is replaced by the
    # one Violet stored): then the condition is asked again.
    wait = WebDriverWait(
        driver, timeout, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException]
    )
    return wait.until(lambda _: condition())


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def texts(driver: Any, selector: str) -> list[str]:
    return [element.text for element in css(driver, selector)]


def sign_in(driver: Any, token: str) -> None:
    code = wait_for(
        driver, lambda: next(iter(e for e in css(driver, "#code") if e.is_displayed()), None)
    )
    code.send_keys(token)
    css(driver, "#sign-in-form button[type=submit]")[0].click()
    wait_for(driver, lambda: css(driver, "#say-text")[0].is_displayed())


def say(driver: Any, text: str) -> str:
    """Types a message and presses Enter; returns Violet's answer as the page shows it."""
    from selenium.webdriver.common.keys import Keys

    answers = len(css(driver, ".messages .from-violet"))
    css(driver, "#say-text")[0].send_keys(text, Keys.ENTER)
    wait_for(driver, lambda: text in " ".join(texts(driver, ".messages .from-you .text")))
    wait_for(driver, lambda: len(css(driver, ".messages .from-violet")) > answers)
    return texts(driver, ".messages .from-violet .text")[-1]


def remembered(driver: Any, word: str, timeout: float = FACT_WAIT_S) -> list[Any]:
    """Re-opens the memory page until a memory holds `word` (facts are made in the background)."""

    def listed() -> list[Any]:
        rows = [row for row in css(driver, ".memories li") if word in row.text]
        if not rows:
            css(driver, "#show-memory")[0].click()  # lists the memory afresh for the next look
        return rows

    return eventually_blocking(listed, f"a memory holding {word!r}", timeout_s=timeout, every_s=0.5)


def test_the_page_is_served_with_a_policy_that_allows_only_itself_and_its_websocket(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        page = httpx.get(stack.http_url + "/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert f"ws://{stack.address('gateway')}" in policy
        for asset, kind in (("/app.js", "text/javascript"), ("/style.css", "text/css")):
            answer = httpx.get(stack.http_url + asset)
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(kind)
        assert "http" not in page.text.replace(stack.http_url, "")  # nothing from elsewhere


def test_a_person_chats_and_forgets_a_fact_in_the_browser(browser: Any, tmp_path: Path) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        browser.get(stack.http_url + "/")
        sign_in(browser, stack.token("ada"))

        answer = say(browser, "my cat is called Miso")
        assert answer and css(browser, "#say-text")[0].get_attribute("value") == ""

        [fact] = remembered(browser, "Miso")
        assert "You said this" in fact.text
        fact.find_element("css selector", "button").click()
        wait_for(browser, lambda: "Miso" not in " ".join(texts(browser, ".memories li")))
        assert "Miso" in css(browser, "#undo-text")[0].text

        css(browser, "#undo-button")[0].click()
        wait_for(browser, lambda: "Miso" in " ".join(texts(browser, ".memories li")))

        css(browser, "#forget-all")[0].click()
        css(browser, "#confirm-yes")[0].click()
        wait_for(browser, lambda: css(browser, ".memories li") == [])
        assert "Nothing remembered yet" in css(browser, "#memory-note")[0].text

        # Arabic is shown right to left, answered in Arabic; English beside it stays left to right.
        css(browser, "#show-chat")[0].click()
        answer = say(browser, "مرحبا، كيف حالك اليوم؟")
        assert answer in ASKED["ar"] + FRIENDLY["ar"], answer
        direction = "return getComputedStyle(arguments[0]).direction"
        *_, theirs, hers = css(browser, ".messages li .text")
        assert browser.execute_script(direction, theirs) == "rtl"
        assert browser.execute_script(direction, hers) == "rtl"
        first = css(browser, ".messages .from-you .text")[0]
        assert browser.execute_script(direction, first) == "ltr"

        # The code is kept: a reload opens the whole history without signing in again.
        browser.refresh()
        wait_for(browser, lambda: len(css(browser, ".messages li")) >= 2)
        assert "my cat is called Miso" in texts(browser, ".messages .from-you .text")

        # A code that is not valid is asked for again, and not kept.
        browser.execute_script("localStorage.setItem('violet.token', 'not-a-real-code')")
        browser.refresh()
        wait_for(browser, lambda: css(browser, "#code")[0].is_displayed())
        assert css(browser, "#sign-in-problem")[0].text
        assert browser.execute_script("return localStorage.getItem('violet.token')") is None


def document_row(driver: Any, title: str) -> Any:
    return next(iter(row for row in css(driver, "#document-list li") if title in row.text), None)


def test_a_person_opens_saves_deletes_and_brings_back_a_document_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        browser.get(stack.http_url + "/")
        sign_in(browser, stack.token("ada"))
        say(browser, "write a note about ferry times: leaves at 9:40")
        told = wait_for(
            browser,
            lambda: next(
                (t for t in texts(browser, ".messages .from-violet .text") if "Documents" in t),
                None,
            ),
            RESULT_WAIT_S,
        )
        assert "Ferry times" in told  # the result says where to find it

        css(browser, "#show-documents")[0].click()
        row = wait_for(browser, lambda: document_row(browser, "Ferry times"))
        assert "Changed" in row.text
        row.find_element("css selector", "button").click()  # Open
        wait_for(browser, lambda: "leaves at 9:40" in css(browser, "#document-text")[0].text)
        assert css(browser, "#document-title")[0].text == "Ferry times"
        assert not css(browser, "#document-list")[0].is_displayed()

        downloads = tmp_path / "downloads"
        browser.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        css(browser, "#document-download")[0].click()
        # The file is there before all of it is written: wait for its words.
        saved = wait_for(
            browser,
            lambda: next(
                (path for path in downloads.glob("*.md") if "9:40" in path.read_text()), None
            ),
        )
        assert saved.name.startswith("note-") and "leaves at 9:40" in saved.read_text()
        assert len(list(downloads.glob("*.md"))) == 1

        css(browser, "#document-delete")[0].click()
        wait_for(browser, lambda: not css(browser, "#document-view")[0].is_displayed())
        wait_for(browser, lambda: document_row(browser, "Ferry times") is None)
        assert "Ferry times" in css(browser, "#document-undo-text")[0].text
        css(browser, "#document-undo-button")[0].click()
        wait_for(browser, lambda: document_row(browser, "Ferry times"))
        assert not css(browser, "#document-undo")[0].is_displayed()

        # What Violet told is its own part of the memory page, each forgettable with an undo.
        css(browser, "#show-memory")[0].click()

        def told_texts() -> list[str]:  # read at once: a memory frame may redraw the list
            script = "return [...document.querySelectorAll('#told li')].map(e => e.innerText)"
            return list(browser.execute_script(script))

        def told_ferry() -> bool:
            browser.execute_script("send({type: 'memory.list'})")  # captured in the background
            return any("Ferry times" in text for text in told_texts())

        wait_for(browser, told_ferry, RESULT_WAIT_S)
        assert css(browser, "#told-part")[0].is_displayed()
        assert css(browser, "#told-title")[0].text == "What I told you"
        [row] = [row for row in css(browser, "#told li") if "Ferry times" in row.text]
        assert "Violet told you this, from" in row.text and "Documents" in row.text
        row.find_element("css selector", "button").click()
        assert "Ferry times" in css(browser, "#undo-text")[0].text
        wait_for(browser, lambda: not any("Ferry" in t for t in told_texts()))
        css(browser, "#undo-button")[0].click()
        wait_for(browser, lambda: any("Ferry" in t for t in told_texts()))


def visible(driver: Any, selector: str) -> Any:
    return next(iter(e for e in css(driver, selector) if e.is_displayed()), None)


def test_a_person_signs_in_through_the_identity_provider_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    with LocalIssuer() as issuer:
        env = {
            "VIOLET_OIDC_ISSUER": issuer.url,
            "VIOLET_OIDC_AUDIENCE": AUDIENCE,
            "VIOLET_OIDC_ALLOW": f"@{DOMAIN}",
        }
        with running_stack(tmp_path / "home", "sqlite", env=env) as stack:
            browser.get(stack.http_url + "/")
            wait_for(browser, lambda: visible(browser, "#provider-sign-in")).click()
            # The provider sends the person back; the page finishes the sign-in and chats.
            wait_for(browser, lambda: visible(browser, "#say-text"))
            assert browser.current_url == stack.http_url + "/"  # no code left in the address
            assert say(browser, "my cat is called Miso")
            token = browser.execute_script("return localStorage.getItem('violet.token')")
            assert issuer.grants == {} and token.count(".") == 2

            # Declined at the provider: asked again, with the reason, and nothing kept.
            browser.execute_script("localStorage.clear()")
            browser.refresh()
            issuer.signs_in = ""
            wait_for(browser, lambda: visible(browser, "#provider-sign-in")).click()
            wait_for(
                browser, lambda: "didn't go through" in css(browser, "#sign-in-problem")[0].text
            )
            assert visible(browser, "#provider-sign-in")

            # A local code still signs in beside the provider.
            css(browser, "#use-code")[0].click()
            sign_in(browser, stack.token("ada"))
            assert say(browser, "Hello again")


def paste_key(driver: Any, key: str) -> None:
    box = css(driver, "#key-input")[0]
    box.send_keys(key)
    css(driver, "#use-key")[0].click()
    assert box.get_attribute("value") == ""  # emptied at once, before any answer


def key_state(driver: Any) -> str:
    return css(driver, "#key-state")[0].text


def test_a_person_uses_their_own_anthropic_key_and_removes_it_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    # No key of the operator's: without their own key, people get the built-in replies, and a
    # key they paste is checked against the local Messages API.
    with (
        MessagesAPIProcess(api_key=GOOD_KEY) as api,
        running_stack(tmp_path / "home", "sqlite", env={"ANTHROPIC_BASE_URL": api.url}) as stack,
    ):
        browser.get(stack.http_url + "/")
        sign_in(browser, stack.token("ada"))

        css(browser, "#show-key")[0].click()
        wait_for(browser, lambda: "no Anthropic key" in key_state(browser))
        # Nobody needs a key here: the key part is an option, after everything else.
        assert parts_of_you(browser)[-1] == "Pay for Violet with your own Anthropic account"
        assert "You don't need this" in css(browser, "#own-key-why")[0].text
        assert "This month" not in key_state(browser)
        assert not css(browser, "#key-note")[0].is_displayed()
        assert not css(browser, "#remove-key")[0].is_enabled()

        # A key Anthropic refuses is not kept, and the page says why.
        wrong = "sk-ant-not-this-one-Qq42"
        paste_key(browser, wrong)
        wait_for(browser, lambda: "refused" in css(browser, "#key-note")[0].text)
        assert css(browser, "#key-note")[0].is_displayed()
        assert "no Anthropic key" in key_state(browser)

        paste_key(browser, GOOD_KEY)
        wait_for(browser, lambda: f"ending in {GOOD_KEY[-4:]}" in key_state(browser))
        assert "This month: $0.00" in key_state(browser)
        assert css(browser, "#key-note")[0].text == ""
        kept = browser.execute_script(
            "return JSON.stringify([location.href, {...localStorage}, {...sessionStorage}])"
        )
        for key in (GOOD_KEY, wrong):
            assert key not in browser.page_source and key not in kept
            assert all(key not in stack.log(name) for name in SERVICES)

        css(browser, "#remove-key")[0].click()
        css(browser, "#remove-no")[0].click()  # asked first: keeping it changes nothing
        assert f"ending in {GOOD_KEY[-4:]}" in key_state(browser)
        css(browser, "#remove-key")[0].click()
        css(browser, "#remove-yes")[0].click()
        wait_for(browser, lambda: "no Anthropic key" in key_state(browser))
        assert "This month" not in key_state(browser)


def parts_of_you(driver: Any) -> list[str]:
    """The titles of the "You" page's parts that show, in order."""
    titles = css(driver, "#key h3")
    return [title.text for title in titles if title.is_displayed()]


@pytest.mark.parametrize(
    ("setting", "first"),
    [
        # The operator's key serves nobody: people need their own, and are told so first.
        ({"VIOLET_OPERATOR_KEY_SHARED": "false", "ANTHROPIC_API_KEY": "sk-ant-operator"}, True),
        # People bring no keys here: there is no key part at all.
        ({"VIOLET_PEOPLE_BRING_KEYS": "false"}, False),
    ],
)
def test_the_sign_in_speaks_to_a_person_and_the_key_part_follows_the_operators_choice(
    browser: Any, tmp_path: Path, setting: dict[str, str], first: bool
) -> None:
    with running_stack(tmp_path / "home", "sqlite", env=setting) as stack:
        browser.get(stack.http_url + "/")
        help_text = wait_for(browser, lambda: visible(browser, "#code-help")).text
        assert "Ask the person who runs Violet for your sign-in code" in help_text
        assert "violet token" not in browser.find_element("css selector", "#sign-in").text
        sign_in(browser, stack.token("ada"))
        css(browser, "#show-key")[0].click()
        wait_for(browser, lambda: "Your devices" in parts_of_you(browser))
        if first:
            wait_for(browser, lambda: parts_of_you(browser)[0] == "Your Anthropic key")
            assert "add a key of your own" in css(browser, "#own-key-why")[0].text
        else:
            shown = "return document.getElementById('key-state').textContent"
            wait_for(browser, lambda: browser.execute_script(shown))  # the account frame came
            assert "Your Anthropic key" not in parts_of_you(browser)
            assert not css(browser, "#own-key")[0].is_displayed()
            # A device that sends a key anyway is told why, and nothing is kept.
            with connect(stack.live_url) as socket:
                socket.send(json.dumps({"type": "hello", "token": stack.token("ada"), "since": 0}))
                socket.send(json.dumps({"type": "key.set", "key": "sk-ant-mine-Zz99"}))
                frame = json.loads(socket.recv(timeout=WAIT_S))
                while frame["type"] != "error":
                    frame = json.loads(socket.recv(timeout=WAIT_S))
            assert frame == {"type": "error", "code": "bad_frame", "text": KEYS_NOT_HERE["en"]}
            assert stack.rows("session", "SELECT 1 FROM person_keys") == []


def page_words(language: str) -> dict[str, Any]:
    words: dict[str, Any] = json.loads((PAGE_DIR / "words" / f"{language}.json").read_text())
    return words


def test_the_page_speaks_the_browsers_language_and_arabic_reads_right_to_left(
    tmp_path: Path,
) -> None:
    arabic = page_words("ar")
    with running_stack(tmp_path / "home", "sqlite") as stack, chromium("ar") as browser:
        browser.get(stack.http_url + "/")
        help_text = wait_for(browser, lambda: visible(browser, "#code-help")).text
        assert help_text == arabic["signIn.codeHelp"]
        shown = "return [document.documentElement.lang, document.documentElement.dir]"
        assert browser.execute_script(shown) == ["ar", "rtl"]
        sign_in(browser, stack.token("ada"))
        assert (
            css(browser, "#say-text")[0].get_attribute("placeholder") == arabic["chat.placeholder"]
        )
        css(browser, "#show-key")[0].click()
        wait_for(browser, lambda: arabic["devices.title"] in parts_of_you(browser))
        assert {arabic["reminders.title"], arabic["data.title"]} <= set(parts_of_you(browser))
        this_device = wait_for(browser, lambda: texts(browser, "#devices-list li"))
        assert arabic["devices.thisOne"].replace("{device}", "").strip() in " ".join(this_device)


def hello_is_refused(live_url: str, token: str) -> int | None:
    """The close code a hello with `token` gets, after its `unauthorized` error."""
    with connect(live_url) as socket:
        socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        assert json.loads(socket.recv(timeout=WAIT_S))["code"] == "unauthorized"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            socket.recv(timeout=WAIT_S)
    return closed.value.rcvd.code if closed.value.rcvd else None


def test_a_person_downloads_their_data_and_deletes_everything_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        token = stack.token("ada")
        browser.get(stack.http_url + "/")
        sign_in(browser, token)
        say(browser, "my cat is called Miso")

        downloads = tmp_path / "downloads"
        browser.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        css(browser, "#show-key")[0].click()
        css(browser, "#download-data")[0].click()
        [saved] = wait_for(browser, lambda: list(downloads.glob("violet-archive-*.zip")))
        with zipfile.ZipFile(saved) as archive:
            assert "my cat is called Miso" in archive.read("data.json").decode()
        wait_for(browser, lambda: "saved" in css(browser, "#download-state")[0].text)

        # Asked first, with the download offered; words other than the ones asked for keep all.
        css(browser, "#delete-everything")[0].click()
        assert visible(browser, "#delete-download").text == "Download my data first"
        assert "every device" in css(browser, "#delete-confirm")[0].text
        words = css(browser, "#delete-words")[0]
        words.send_keys("delete it all")
        css(browser, "#delete-yes")[0].click()
        assert "Nothing was deleted" in css(browser, "#delete-problem")[0].text
        words.clear()
        words.send_keys("delete everything")
        css(browser, "#delete-yes")[0].click()

        wait_for(browser, lambda: visible(browser, "#sign-in"), 60)
        assert "deleted" in css(browser, "#sign-in-note")[0].text
        assert not css(browser, "#sign-in-problem")[0].text
        assert browser.execute_script("return localStorage.getItem('violet.token')") is None
        assert css(browser, ".messages li") == []
        assert hello_is_refused(stack.live_url, token) == 4401


KEPT_HERE = """
const done = arguments[arguments.length - 1];
const local = JSON.stringify(Object.assign({}, localStorage));
const opening = indexedDB.open("violet", 1);
opening.onupgradeneeded = () => opening.result.createObjectStore("unsent", { keyPath: "id" });
opening.onsuccess = async () => {
  const reading = opening.result.transaction("unsent").objectStore("unsent").getAll();
  reading.onsuccess = async () => {
    const cached = [];
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const request of await cache.keys()) {
        cached.push(await (await cache.match(request)).text());
      }
    }
    done({ local, unsent: JSON.stringify(reading.result), cached: cached.join(" ") });
  };
};
"""


def test_a_person_cancels_a_reminder_signs_out_a_lost_device_then_this_one_in_the_browser(
    browser: Any, tmp_path: Path
) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        # Two sign-ins of hers, each its own device (tokens that differ).
        lost, here = stack.token("dee"), issue_token("dee", stack.secret, ttl_s=3600)
        with connect(stack.live_url) as phone:  # the lost phone, still connected
            phone.send(json.dumps({"type": "hello", "token": lost, "since": 0}))
            assert json.loads(phone.recv(timeout=WAIT_S))["type"] == "welcome"
            browser.get(stack.http_url + "/")
            sign_in(browser, here)
            say(browser, "my locker code is 4817")
            said = say(browser, "remind me tomorrow at 8 to call the dentist")
            assert "tomorrow at 08:00" in said, said
            css(browser, "#show-key")[0].click()
            # Her reminder, in her words and time, cancelled from the page.
            wait_for(browser, lambda: texts(browser, "#reminders-list li"))
            [reminder] = texts(browser, "#reminders-list li")
            assert "call the dentist" in reminder and "tomorrow at 08:00" in reminder, reminder
            css(browser, "#reminders-list li button")[0].click()
            wait_for(browser, lambda: visible(browser, "#reminders-empty"))
            assert css(browser, "#reminders-list li") == []
            wait_for(browser, lambda: len(css(browser, "#devices-list li")) == 2)
            rows = css(browser, "#devices-list li")
            assert sum("(this device)" in row.text for row in rows) == 1
            other = next(row for row in rows if "(this device)" not in row.text)
            other.find_element("css selector", "button").click()
            wait_for(browser, lambda: len(css(browser, "#devices-list li")) == 1)
            # The lost phone (shown every message of hers till then) is told it is signed out,
            # and its socket closes, at once.
            refusal = json.loads(phone.recv(timeout=WAIT_S))
            while refusal["type"] != "error":
                refusal = json.loads(phone.recv(timeout=WAIT_S))
            assert refusal["code"] == "unauthorized"
            assert refusal["text"] == "You were signed out of this device. Sign in again to go on."
            with pytest.raises(websockets.ConnectionClosed) as closed:
                phone.recv(timeout=WAIT_S)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        assert hello_is_refused(stack.live_url, lost) == 4401

        # Offline, a message waits to be sent; signing out offers to send it first.
        browser.execute_script("window.dispatchEvent(new Event('offline'))")
        css(browser, "#show-chat")[0].click()
        from selenium.webdriver.common.keys import Keys

        css(browser, "#say-text")[0].send_keys("a message not sent yet", Keys.ENTER)
        css(browser, "#show-key")[0].click()
        css(browser, "#sign-out-here")[0].click()
        assert "1 message not sent yet" in visible(browser, "#sign-out-confirm").text
        css(browser, "#sign-out-anyway")[0].click()
        wait_for(browser, lambda: visible(browser, "#sign-in"))
        assert "signed out of this device" in css(browser, "#sign-in-note")[0].text
        kept = browser.execute_async_script(KEPT_HERE)
        assert kept["local"] == "{}" and kept["unsent"] == "[]"  # no token, no device id
        for words in (here, "dee", "4817", "a message not sent yet"):
            assert words not in kept["cached"], words  # the page's own files stay, nothing else
        wait_for(browser, lambda: hello_is_refused(stack.live_url, here) == 4401)
