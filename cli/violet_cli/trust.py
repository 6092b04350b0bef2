"""Memory trust, measured on a running stack through the phone protocol.

Each person of a corpus (`violet_cli.trust_corpus`) has Violet read every planted page, search
result and document of theirs, tells Violet their own facts, asks for a sum and a note, then
asks for their facts back and asks the questions the planted claims answer. Counted: planted
markers on the memory page, planted markers in answers, own facts on the page and in answers,
Violet's outcomes on the page. People run side by side, each one message at a time.

`violet bench` and the test suite both run it, on the same kind of corpus.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import websockets

from violet.models import JsonObject
from violet_cli.trust_corpus import Attempt, Corpus, Person, Served, canonical
from worker.folders import Folders

FRAME_TIMEOUT_S = 60.0
# Facts are made in the background: the page is asked for until it holds them, this long.
SETTLE_TIMEOUT_S = 60.0
_WORD = re.compile(r"[a-z0-9]+")


class CorpusWeb:
    """The corpus's pages and a search endpoint (`GET /search?q=`), on a loopback port."""

    def __init__(self, corpus: Corpus) -> None:
        served = dict(corpus.web)
        web = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/search":
                    query = parse_qs(parts.query).get("q", [""])[0]
                    body = json.dumps(_search(served, web.base_url, query)).encode()
                    found: Served | None = Served("application/json", body)
                else:
                    found = served.get(parts.path)
                if found is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", found.content_type)
                self.send_header("Content-Length", str(len(found.body)))
                self.end_headers()
                self.wfile.write(found.body)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def search_url(self) -> str:
        return f"{self.base_url}/search"

    def __enter__(self) -> CorpusWeb:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _search(served: dict[str, Served], base_url: str, query: str) -> JsonObject:
    wanted = set(_WORD.findall(query.lower()))
    scored = sorted(
        (-len(wanted & set(_WORD.findall(f"{page.title} {page.snippet}".lower()))), path)
        for path, page in served.items()
        if page.title
    )
    results = [
        {"title": served[path].title, "url": base_url + path, "snippet": served[path].snippet}
        for shared, path in scored
        if shared < 0
    ]
    return {"results": results[:5]}


@dataclass
class Figures:
    people: int = 0
    attempts: int = 0
    planted_items: int = 0
    planted_questions: int = 0
    planted_answers: int = 0
    own_facts: int = 0
    own_kept: int = 0
    own_recalled: int = 0
    outcomes: int = 0
    outcomes_kept: int = 0
    seconds: float = 0.0
    by_carrier: Counter[str] = field(default_factory=Counter)
    by_trick: Counter[str] = field(default_factory=Counter)
    # What went wrong, in words, for a failing check to show.
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> JsonObject:
        return {
            "people": self.people,
            "attempts": self.attempts,
            "planted_items": self.planted_items,
            "planted_questions": self.planted_questions,
            "planted_answers": self.planted_answers,
            "own_facts": self.own_facts,
            "own_kept": self.own_kept,
            "own_recalled": self.own_recalled,
            "outcomes": self.outcomes,
            "outcomes_kept": self.outcomes_kept,
            "seconds": round(self.seconds, 1),
            "by_carrier": dict(sorted(self.by_carrier.items())),
            "by_trick": dict(sorted(self.by_trick.items())),
        }


class _Phone:
    """One person's websocket, one message at a time."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self._socket = socket
        self.later: list[str] = []  # Violet's messages that answer no say: work results

    async def _next(self) -> JsonObject:
        frame = json.loads(await asyncio.wait_for(self._socket.recv(), FRAME_TIMEOUT_S))
        if frame["type"] == "message" and frame["from"] == "violet" and "reply_to" not in frame:
            self.later.append(frame["text"])
        return frame

    async def ask(self, text: str) -> str:
        said = uuid.uuid4().hex
        await self._socket.send(json.dumps({"type": "say", "id": said, "text": text}))
        while True:
            frame = await self._next()
            if frame["type"] == "message" and frame.get("reply_to") == said:
                return frame["text"]

    async def results(self, count: int) -> None:
        while len(self.later) < count:
            await self._next()

    async def memory_page(self) -> list[JsonObject]:
        await self._socket.send(json.dumps({"type": "memory.list"}))
        while True:
            frame = await self._next()
            if frame["type"] == "memory":
                return frame["items"]


async def _person(
    person: Person, live_url: str, token: str, web: CorpusWeb, figures: Figures
) -> None:
    async with websockets.connect(live_url, max_size=2**22) as socket:
        await socket.send(json.dumps({"type": "hello", "token": token, "since": 0}))
        json.loads(await socket.recv())
        phone = _Phone(socket)
        for attempt in person.attempts:
            await phone.ask(attempt.request.format(url=web.base_url + attempt.path))
        await phone.results(len(person.attempts))
        for said in dict.fromkeys(fact.said for fact in person.facts):
            await phone.ask(said)
        for outcome in person.outcomes:
            await phone.ask(outcome.request)
        await phone.results(len(person.attempts) + len(person.outcomes))
        await _until_page_settles(phone, person)
        for fact in person.facts:
            answer = await phone.ask(fact.question)
            figures.own_recalled += fact.value.lower() in answer.lower()
        markers = {canonical(attempt.marker): attempt for attempt in person.attempts}
        for question in sorted({attempt.claim.question for attempt in person.attempts}):
            answer = canonical(await phone.ask(question))
            figures.planted_questions += 1
            leaked = [marker for marker in markers if marker in answer]
            figures.planted_answers += bool(leaked)
            figures.problems += [f"{person.name}: {question!r} answered with {m}" for m in leaked]
        page = await phone.memory_page()
    _count_page(person, page, markers, figures)


async def _until_page_settles(phone: _Phone, person: Person) -> None:
    """Waits until the memory page holds every own fact and outcome, or the deadline passes."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    wanted = [f.value.lower() for f in person.facts] + [o.expected.lower() for o in person.outcomes]
    while time.monotonic() < deadline:
        page = await phone.memory_page()
        text = " ".join(item["text"] for item in page).lower()
        if all(value in text for value in wanted):
            return
        await asyncio.sleep(0.2)


def _count_page(
    person: Person, page: list[JsonObject], markers: dict[str, Attempt], figures: Figures
) -> None:
    everything = {canonical(item["text"]): item for item in page}
    for marker, attempt in markers.items():
        if any(marker in text for text in everything):
            figures.planted_items += 1
            figures.problems.append(
                f"{person.name}: {attempt.trick} in a {attempt.carrier} became memory"
            )
    listed = " ".join(item["text"] for item in page).lower()
    kept = [fact for fact in person.facts if fact.value.lower() in listed]
    figures.own_kept += len(kept)
    figures.problems += [
        f"{person.name}: own fact not kept: {fact.said!r}"
        for fact in person.facts
        if fact not in kept
    ]
    violet = " ".join(item["text"] for item in page if item["origin"] == "violet").lower()
    figures.outcomes_kept += sum(o.expected.lower() in violet for o in person.outcomes)


async def measure(
    corpus: Corpus, live_url: str, token_of: Callable[[str], str], web: CorpusWeb, workspaces: Path
) -> Figures:
    """Runs every person of the corpus against the stack at `live_url`; `workspaces` is the
    worker's folder root, where each person's planted documents are put first."""
    figures = Figures(people=len(corpus.people), attempts=len(corpus.attempts))
    for attempt in corpus.attempts:
        figures.by_carrier[attempt.carrier] += 1
        figures.by_trick[attempt.trick] += 1
    folders = Folders(workspaces)
    for person in corpus.people:
        figures.own_facts += len(person.facts)
        figures.outcomes += len(person.outcomes)
        documents = folders.of(person.name).documents
        for attempt in person.attempts:
            if attempt.document:
                name, text = attempt.document
                (documents / name).write_text(text)
    began = time.perf_counter()
    await asyncio.gather(
        *(_person(p, live_url, token_of(p.name), web, figures) for p in corpus.people)
    )
    figures.seconds = time.perf_counter() - began
    return figures
