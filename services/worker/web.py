"""Web pages and web search for work sessions.

A page is fetched with a time limit and a size cap, and turned into its title and readable text.
Unless `VIOLET_FETCH_BLOCK_PRIVATE=false` (for tests), a page is fetched only from a public
address: the check is made where the connection is opened, on the very addresses the name
resolves to, so every redirect and every DNS answer is checked, and a name cannot answer one
address to a check and another to the connection. Pages are fetched directly, never through a
proxy named in the environment, whose own address would be the only one seen here.

Search goes to the provider at `VIOLET_SEARCH_URL`, which speaks one small JSON protocol:

    GET {VIOLET_SEARCH_URL}?q=QUERY
    200 {"results": [{"title": "...", "url": "https://...", "snippet": "..."}, ...]}   best first
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

from violet.public_net import NotPublic, public_transport
from violet.public_net import is_public as is_public  # still named here by the worker's callers

MAX_REDIRECTS = 5
MAX_TEXT_CHARS = 20_000
MAX_RESULTS = 8
USER_AGENT = "Violet/0.1 (personal assistant; fetches a page a person asked for)"
READABLE_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/json")

_SKIPPED = {"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head"}
_BLOCKS = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table",
    "section", "article", "header", "footer", "blockquote", "pre", "hr", "main", "nav", "dt", "dd",
}  # fmt: skip
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")


class WebError(Exception):
    """A page or search that could not be had; the message is plain words for the model."""


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str


class _Readable(HTMLParser):
    """The title and the visible text of an HTML page, one line per block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] = []
        self.heading_parts: list[str] = []
        self.parts: list[str] = []
        self._skipping = 0
        self._in_title = False
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skipping += 1
        elif tag == "h1" and not self.heading_parts:
            self._in_heading = True
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED and self._skipping:
            self._skipping -= 1
        elif tag == "h1":
            self._in_heading = False
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skipping:
            self.parts.append(data)
            if self._in_heading:
                self.heading_parts.append(data)


def _flat(text: str) -> str:
    return " ".join(text.split())


def readable(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page; the title falls back to the first heading."""
    parser = _Readable()
    parser.feed(html)
    parser.close()
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parser.parts).splitlines())
    kept = [line for line in lines if line]
    title = _flat("".join(parser.title_parts)) or _flat("".join(parser.heading_parts))
    if kept and kept[0] == title:
        kept = kept[1:]  # the heading that repeats the title is not the page's first words
    return title, "\n".join(kept)


def _check_scheme(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebError("Only http and https pages can be opened.")


class Web:
    def __init__(
        self,
        *,
        timeout_s: float,
        max_bytes: int,
        block_private: bool,
        search_url: str,
    ) -> None:
        self._pages = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
            transport=public_transport() if block_private else None,
            trust_env=False,
        )
        # The search provider is the operator's choice, wherever it runs.
        self._search = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s), headers={"User-Agent": USER_AGENT}
        )
        self._timeout_s = timeout_s
        self._max_bytes = max_bytes
        self._search_url = search_url

    async def aclose(self) -> None:
        await self._pages.aclose()
        await self._search.aclose()

    async def fetch(self, url: str) -> Page:
        """The page at `url` (redirects followed, each one checked like the first)."""
        try:
            async with asyncio.timeout(self._timeout_s * 2):
                for _ in range(MAX_REDIRECTS + 1):
                    _check_scheme(url)
                    async with self._pages.stream("GET", url) as response:
                        if response.is_redirect and "location" in response.headers:
                            url = urljoin(url, response.headers["location"])
                            continue
                        return await self._page(url, response)
        except TimeoutError as error:
            raise WebError(f"{url} took too long to answer.") from error
        except httpx.HTTPError as error:
            if isinstance(error.__cause__, NotPublic):
                host = urlsplit(url).hostname
                raise WebError(f"{host} is not a public address.") from error
            raise WebError(f"{url} could not be reached.") from error
        except (httpx.InvalidURL, ValueError) as error:
            raise WebError(f"{url} is not a web address that can be opened.") from error
        raise WebError(f"{url} redirects too many times.")

    async def _page(self, url: str, response: httpx.Response) -> Page:
        if response.status_code >= 400:
            raise WebError(f"{url} answered with an error ({response.status_code}).")
        kind = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
        if kind not in READABLE_TYPES:
            raise WebError(f"{url} is a file of type {kind}, not a page that can be read.")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) >= self._max_bytes:
                del body[self._max_bytes :]
                break
        try:
            decoded = body.decode(response.charset_encoding or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            decoded = body.decode("utf-8", errors="replace")
        if kind in ("text/html", "application/xhtml+xml"):
            title, text = readable(decoded)
        else:
            title, text = "", decoded.strip()
        return Page(url, title or url, text[:MAX_TEXT_CHARS])

    async def search(self, query: str) -> list[dict[str, str]]:
        if not self._search_url:
            raise WebError("Searching the web is not set up here.")
        try:
            response = await self._search.get(self._search_url, params={"q": query})
            response.raise_for_status()
            answer = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise WebError("The search did not answer just now.") from error
        found = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            raise WebError("The search answered with something that is not a list of results.")
        results = [
            {key: str(hit.get(key) or "")[:2000] for key in ("title", "url", "snippet")}
            for hit in found
            if isinstance(hit, dict)
        ]
        return results[:MAX_RESULTS]
