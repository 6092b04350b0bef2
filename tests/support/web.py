"""A local web for tests: pages and a search endpoint on a loopback HTTP server.

The search endpoint speaks the worker's search protocol (`GET /search?q=...` gives
`{"results": [{"title", "url", "snippet"}]}`): pages whose title or text shares a word with the
query, best first.
"""

from __future__ import annotations

import html
import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_WORD = re.compile(r"[a-z0-9]+")
GATE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Served:
    content_type: str
    body: bytes
    status: int = 200
    title: str = ""
    text: str = ""
    location: str = ""
    # Held until set: a page that answers only when the test lets it.
    gate: threading.Event | None = None


def html_page(title: str, *paragraphs: str) -> bytes:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html><head><title>{html.escape(title)}</title>"
        "<style>p { color: red }</style><script>var hidden = 'not text';</script></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    ).encode()


class LocalWeb:
    def __init__(self) -> None:
        self.pages: dict[str, Served] = {}
        self.requests: list[str] = []
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                web.requests.append(self.path)
                parts = urlsplit(self.path)
                if parts.path == "/search":
                    query = parse_qs(parts.query).get("q", [""])[0]
                    served = Served("application/json", json.dumps(web.search(query)).encode())
                else:
                    served = web.pages.get(parts.path, Served("text/plain", b"not found", 404))
                if served.gate is not None:
                    served.gate.wait(GATE_TIMEOUT_S)
                self.send_response(served.status)
                self.send_header("Content-Type", served.content_type)
                self.send_header("Content-Length", str(len(served.body)))
                if served.location:
                    self.send_header("Location", served.location)
                self.end_headers()
                self.wfile.write(served.body)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def search_url(self) -> str:
        return f"{self.base_url}/search"

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def add_page(
        self, path: str, title: str, *paragraphs: str, gate: threading.Event | None = None
    ) -> str:
        """A page; with `gate`, each request of it waits until the gate is set."""
        text = " ".join(paragraphs)
        page = html_page(title, *paragraphs)
        served = Served("text/html; charset=utf-8", page, 200, title, text, gate=gate)
        self.pages[path] = served
        return self.url(path)

    def add_file(self, path: str, content_type: str, body: bytes, status: int = 200) -> str:
        self.pages[path] = Served(content_type, body, status)
        return self.url(path)

    def add_redirect(self, path: str, to: str) -> str:
        self.pages[path] = Served("text/plain", b"", 302, location=to)
        return self.url(path)

    def search(self, query: str) -> dict:
        wanted = set(_WORD.findall(query.lower()))
        scored = []
        for path, page in self.pages.items():
            shared = len(wanted & set(_WORD.findall(f"{page.title} {page.text}".lower())))
            if page.title and shared:
                scored.append((shared, path, page))
        scored.sort(key=lambda hit: (-hit[0], hit[1]))
        return {
            "results": [
                {"title": page.title, "url": self.url(path), "snippet": page.text[:200]}
                for _, path, page in scored
            ]
        }

    def start(self) -> LocalWeb:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
