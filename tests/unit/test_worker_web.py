"""Pages and search: readable text, limits, and the search protocol, against a local web."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.web import LocalWeb
from violet import public_net
from worker.settings import WorkerSettings
from worker.web import Web, WebError, is_public, readable


@pytest.fixture(scope="module")
def local_web() -> Iterator[LocalWeb]:
    web = LocalWeb().start()
    yield web
    web.stop()


@pytest.fixture
async def web(local_web: LocalWeb) -> AsyncIterator[Web]:
    client = Web(timeout_s=5, max_bytes=5_000, block_private=False, search_url=local_web.search_url)
    yield client
    await client.aclose()


def test_readable_text_leaves_out_scripts_styles_and_the_head() -> None:
    title, text = readable(
        "<html><head><title> A  Title </title><style>p{}</style><script>alert(1)</script></head>"
        "<body><nav>Home</nav><p>First &amp; best.</p><div>Second<br>line</div>"
        "<noscript>enable js</noscript><svg><text>drawn</text></svg></body></html>"
    )
    assert title == "A Title"
    assert text == "Home\nFirst & best.\nSecond\nline"


def test_a_page_without_a_title_is_named_by_its_first_heading() -> None:
    assert readable("<h1>Big <b>News</b></h1><p>Text.</p>") == ("Big News", "Text.")


async def test_a_page_is_fetched_with_its_title_and_text(local_web: LocalWeb, web: Web) -> None:
    url = local_web.add_page("/hello", "Hello Page", "Hello there. Second sentence.")
    page = await web.fetch(url)
    assert page.title == "Hello Page"
    assert page.text == "Hello there. Second sentence."
    assert "not text" not in page.text


async def test_a_big_page_is_cut_at_the_size_cap(local_web: LocalWeb, web: Web) -> None:
    url = local_web.add_file("/big", "text/plain", b"word " * 10_000)
    assert len((await web.fetch(url)).text) <= 5_000


async def test_redirects_are_followed(local_web: LocalWeb, web: Web) -> None:
    target = local_web.add_page("/target", "Arrived", "You made it.")
    assert (await web.fetch(local_web.add_redirect("/moved", target))).title == "Arrived"


@pytest.mark.parametrize(
    ("path", "content_type", "status", "says"),
    [
        ("/missing-page", "text/html", 404, r"error \(404\)"),
        ("/picture", "image/png", 200, "image/png"),
    ],
)
async def test_what_cannot_be_read_is_a_plain_error(
    local_web: LocalWeb, web: Web, path: str, content_type: str, status: int, says: str
) -> None:
    url = local_web.add_file(path, content_type, b"\x89PNG", status)
    with pytest.raises(WebError, match=says):
        await web.fetch(url)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "no-scheme"])
async def test_only_web_addresses_are_fetched(web: Web, url: str) -> None:
    with pytest.raises(WebError, match="http"):
        await web.fetch(url)


@pytest.fixture
async def guarded() -> AsyncIterator[Web]:
    client = Web(timeout_s=5, max_bytes=5_000, block_private=True, search_url="")
    yield client
    await client.aclose()


def test_private_addresses_are_blocked_unless_a_test_allows_them() -> None:
    assert WorkerSettings().fetch_block_private is True
    assert WorkerSettings(fetch_block_private="false").fetch_block_private is False


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "[::1]", "0.0.0.0", "2130706433", "0x7f.1", "169.254.169.254",
     "10.0.0.1", "192.168.1.1", "[fe80::1]", "[::ffff:127.0.0.1]", "[64:ff9b::7f00:1]",
     "[2002:7f00:1::]", "100.64.0.1"],
)  # fmt: skip
async def test_pages_on_private_addresses_are_refused(
    local_web: LocalWeb, guarded: Web, host: str
) -> None:
    url = local_web.add_page("/inside", "Inside", "Private.").replace("127.0.0.1", host)
    served = len(local_web.requests)
    with pytest.raises(WebError, match="is not a public address"):
        await guarded.fetch(url)
    assert local_web.requests[served:] == []


async def test_a_redirect_to_a_private_address_is_refused(
    local_web: LocalWeb, guarded: Web, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The local web stands in for a public site; 127.0.0.2 is the private address behind it.
    monkeypatch.setattr(public_net, "is_public", lambda address: address == "127.0.0.1")
    inside = local_web.add_page("/inside", "Inside", "Private.").replace("127.0.0.1", "127.0.0.2")
    hop = local_web.add_redirect("/hop-inside", inside)
    served = len(local_web.requests)
    with pytest.raises(WebError, match="127.0.0.2 is not a public address"):
        await guarded.fetch(hop)
    assert local_web.requests[served:] == ["/hop-inside"]


@pytest.mark.parametrize(
    ("address", "public"),
    [("93.184.216.34", True), ("2606:2800:220:1::1", True), ("::ffff:8.8.8.8", True),
     ("127.0.0.1", False), ("::ffff:10.1.1.1", False), ("64:ff9b::a00:1", False),
     ("2001::1", False), ("224.0.0.1", False), ("fe80::1%eth0", False)],
)  # fmt: skip
def test_public_means_on_the_internet_whatever_the_wrapping(address: str, public: bool) -> None:
    assert is_public(address) is public


async def test_a_dead_address_is_a_plain_error(web: Web) -> None:
    with pytest.raises(WebError, match="could not be reached"):
        await web.fetch("http://127.0.0.1:9/")


async def test_search_speaks_the_json_protocol(local_web: LocalWeb, web: Web) -> None:
    local_web.add_page("/tulips", "Tulip Care", "Water tulips once a week.")
    results = await web.search("tulips care")
    assert results[0] == {
        "title": "Tulip Care",
        "url": local_web.url("/tulips"),
        "snippet": "Water tulips once a week.",
    }


async def test_search_without_a_provider_says_so() -> None:
    unset = Web(timeout_s=5, max_bytes=5_000, block_private=False, search_url="")
    try:
        with pytest.raises(WebError, match="not set up"):
            await unset.search("anything")
    finally:
        await unset.aclose()


async def test_a_provider_that_answers_nonsense_is_a_plain_error(local_web: LocalWeb) -> None:
    broken = Web(
        timeout_s=5, max_bytes=5_000, block_private=False, search_url=local_web.url("/hello")
    )
    try:
        with pytest.raises(WebError):
            await broken.search("anything")
    finally:
        await broken.aclose()


async def test_a_malformed_address_is_a_plain_error(web: Web) -> None:
    with pytest.raises(WebError):
        await web.fetch("http://[::1/broken")


async def test_an_unknown_charset_is_read_as_utf8(local_web: LocalWeb, web: Web) -> None:
    url = local_web.add_file("/odd", "text/plain; charset=klingon", "Grüße".encode())
    assert (await web.fetch(url)).text == "Grüße"
