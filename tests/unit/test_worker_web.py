"""Pages and search: readable text, limits, and the search protocol, against a local web."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.web import LocalWeb
from worker.web import Web, WebError, readable


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


async def test_private_addresses_can_be_refused(local_web: LocalWeb) -> None:
    guarded = Web(timeout_s=5, max_bytes=5_000, block_private=True, search_url="")
    try:
        with pytest.raises(WebError, match="not a public address"):
            await guarded.fetch(local_web.add_page("/inside", "Inside", "Private."))
    finally:
        await guarded.aclose()


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
