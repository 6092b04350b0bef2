"""The gateway's part of a person's own data: the `account.delete` frame and its answer, and
`GET /v1/export` against a stand-in of the session's `YourData`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import grpc
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from gateway import frames, phrases
from gateway.archive import TOO_MANY, ArchiveDownload
from gateway.frames import MAX_CONFIRMATION_CHARS, DeleteRequest, FrameError
from gateway.live import issued_at
from gateway.signin import SignIn
from tests.support.grpc_server import serving
from violet.channels import Peers
from violet.identity import issue_token, verify_internal_token
from violet.language import LANGUAGES
from violet.v1 import persons_pb2, persons_pb2_grpc

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
TODAY = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)


def test_a_deletion_carries_the_words_as_typed() -> None:
    frame = json.dumps({"type": "account.delete", "confirmation": " Delete  everything"})
    assert frames.parse(frame) == DeleteRequest(" Delete  everything")


@pytest.mark.parametrize(
    "confirmation",
    [None, 1, True, "x" * (MAX_CONFIRMATION_CHARS + 1), "delete\x00everything"],
    ids=["missing", "a number", "a boolean", "too long", "a NUL"],
)
def test_a_deletion_without_words_deletes_nothing_and_says_what_to_type(
    confirmation: object,
) -> None:
    sent: dict[str, object] = {"type": "account.delete"}
    if confirmation is not None:
        sent["confirmation"] = confirmation
    with pytest.raises(FrameError) as refused:
        frames.parse(json.dumps(sent))
    assert refused.value.code == "bad_frame"
    assert (
        refused.value.text == 'Nothing was deleted. To delete everything, type "delete everything".'
    )
    assert "delete everything" in refused.value.told_in("de")


def test_the_answer_to_a_deletion_carries_its_words_alone() -> None:
    sent = frames.outgoing("account.deleted", text="Gone.")
    assert json.loads(sent) == {"type": "account.deleted", "text": "Gone."}
    with pytest.raises(ValueError, match="person"):
        frames.outgoing("account.deleted", text="Gone.", person="ada")


@pytest.mark.parametrize("said", [phrases.DELETED, phrases.NOTHING_DELETED, phrases.DELETE_AWAY])
def test_what_a_deletion_tells_is_said_in_every_language(said: phrases.Phrase) -> None:
    assert set(said) == set(LANGUAGES) and all(said.values())


@dataclass
class YourData(persons_pb2_grpc.YourDataServicer):
    """The session's archive, as chunks; or a refusal before any, or a break after them."""

    chunks: list[bytes] = field(default_factory=lambda: [b"PK\x03\x04first", b"second"])
    refusal: grpc.StatusCode | None = None
    breaks: bool = False
    asked: list[tuple[int, str]] = field(default_factory=list)

    async def Export(
        self, request: persons_pb2.ExportArchiveRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[persons_pb2.ArchiveChunk]:
        bearer = dict(context.invocation_metadata() or ())["authorization"]
        person = verify_internal_token(bearer.removeprefix("Bearer "), SECRET).person
        self.asked.append((request.signed_in_at_unix, person))
        if self.refusal is not None:
            await context.abort(self.refusal, "not now")
        for data in self.chunks:
            yield persons_pb2.ArchiveChunk(data=data)
        if self.breaks:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "gone midway")


@pytest.fixture
async def session() -> AsyncIterator[tuple[YourData, httpx.AsyncClient]]:
    served = YourData()
    async with serving(persons_pb2_grpc.add_YourDataServicer_to_server, served) as address:
        peers = Peers({"session": address}, 10.0)
        download = ArchiveDownload(peers, SECRET, SignIn(SECRET), clock=lambda: TODAY)
        app = Starlette(routes=[Route("/v1/export", download.export)])
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://violet.test") as c:
                yield served, c
        finally:
            await peers.close()


def signed_in(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_the_archive_streams_with_its_name_for_the_token_s_person(
    session: tuple[YourData, httpx.AsyncClient],
) -> None:
    served, client = session
    token = issue_token("ada", SECRET)
    answer = await client.get("/v1/export", headers=signed_in(token))
    assert answer.status_code == 200 and answer.content == b"PK\x03\x04firstsecond"
    assert answer.headers["content-type"] == "application/zip"
    assert answer.headers["cache-control"] == "no-store"
    disposition = 'attachment; filename="violet-archive-2026-11-29.zip"'
    assert answer.headers["content-disposition"] == disposition
    assert served.asked == [(issued_at(token), "ada")]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": f"Basic {issue_token('ada', SECRET)}"},
        signed_in(issue_token("ada", SECRET, ttl_s=-10)),
        signed_in(issue_token("ada", "another-secret-that-is-long-enough-for-hs256")),
    ],
    ids=["none", "empty", "not a token", "not bearer", "expired", "another secret"],
)
async def test_a_token_the_hello_would_refuse_gets_401_and_asks_nothing(
    session: tuple[YourData, httpx.AsyncClient], headers: dict[str, str]
) -> None:
    served, client = session
    answer = await client.get("/v1/export", headers=headers)
    assert answer.status_code == 401 and "sign in again" in answer.json()["error"]
    assert answer.headers["www-authenticate"] == "Bearer"
    assert served.asked == []


@pytest.mark.parametrize(
    ("refusal", "status", "words"),
    [
        (grpc.StatusCode.UNAUTHENTICATED, 401, "deleted"),
        (grpc.StatusCode.UNAVAILABLE, 503, "try again"),
        (grpc.StatusCode.INTERNAL, 503, "try again"),
    ],
)
async def test_a_refusal_before_the_archive_gets_its_own_status_in_plain_words(
    session: tuple[YourData, httpx.AsyncClient],
    refusal: grpc.StatusCode,
    status: int,
    words: str,
) -> None:
    served, client = session
    served.refusal = refusal
    answer = await client.get("/v1/export", headers=signed_in(issue_token("ada", SECRET)))
    assert answer.status_code == status and words in answer.json()["error"]
    assert "not now" not in answer.text  # the service's own words stay inside


async def test_an_archive_that_breaks_midway_breaks_the_download(
    session: tuple[YourData, httpx.AsyncClient],
) -> None:
    served, client = session
    served.breaks = True
    with pytest.raises(grpc.aio.AioRpcError):
        await client.get("/v1/export", headers=signed_in(issue_token("ada", SECRET)))


async def test_past_three_archives_an_hour_a_person_is_told_to_come_back_later(
    session: tuple[YourData, httpx.AsyncClient],
) -> None:
    served, client = session
    ada, bo = signed_in(issue_token("ada", SECRET)), signed_in(issue_token("bo", SECRET))
    for _ in range(3):
        assert (await client.get("/v1/export", headers=ada)).status_code == 200
    refused = await client.get("/v1/export", headers=ada)
    assert refused.status_code == 429
    assert refused.json() == {"error": TOO_MANY}
    assert len(served.asked) == 3  # the session was not asked a fourth time
    assert (await client.get("/v1/export", headers=bo)).status_code == 200  # others' are theirs
