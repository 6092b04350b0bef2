"""The web page's sign-in through the identity provider: the gateway's two routes, with the page
played by the test against a real local issuer (authorization code flow with PKCE)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from starlette.applications import Starlette

from gateway.allowlist import NOBODY_ALLOWED_TEXT, NOT_ALLOWED_TEXT, Allowlist
from gateway.oidc import OidcIssuer, issued_person
from gateway.page_signin import AWAY, BAD_REQUEST, NOT_CONFIGURED, REFUSED, PageSignIn
from gateway.signin import SignIn
from tests.support.oidc import ALLOWED, AUDIENCE, LocalIssuer, s256

PAGE = "http://violet.test"
SECRET = "a-test-secret-that-is-long-enough-for-hs256"


@pytest.fixture(scope="module")
def local_issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer() as issuer:
        yield issuer


@pytest.fixture(scope="module")
def confidential_issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer(client_secret="the-client-secret") as issuer:
        yield issuer


@pytest.fixture
async def issuer_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(follow_redirects=False) as client:
        yield client


def gateway(issuer: OidcIssuer | None, client_secret: str = "") -> httpx.AsyncClient:
    app = Starlette(routes=PageSignIn(issuer, client_secret).routes())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PAGE)


class Page:
    """What the page does: start a sign-in at the issuer, then hand its code to the gateway."""

    def __init__(self, gateway: httpx.AsyncClient, issuer_client: httpx.AsyncClient) -> None:
        self.gateway = gateway
        self.issuer_client = issuer_client
        self.verifier = secrets.token_urlsafe(32)
        self.nonce = secrets.token_urlsafe(16)
        self.state = secrets.token_urlsafe(16)

    async def code(self) -> dict[str, str]:
        provider = (await self.gateway.get("/sign-in/provider")).json()
        asked = {
            "response_type": "code",
            "client_id": provider["client_id"],
            "redirect_uri": f"{PAGE}/",
            "scope": provider["scope"],
            "state": self.state,
            "nonce": self.nonce,
            "code_challenge": s256(self.verifier),
            "code_challenge_method": "S256",
        }
        sent_to = await self.issuer_client.get(f"{provider['authorize']}?{urlencode(asked)}")
        back = urlsplit(sent_to.headers["location"])
        assert f"{back.scheme}://{back.netloc}{back.path}" == f"{PAGE}/"
        return {k: v[0] for k, v in parse_qs(back.query).items()}

    async def exchange(self, code: str, **changes: str) -> httpx.Response:
        sent = {"code": code, "verifier": self.verifier, "redirect_uri": f"{PAGE}/"}
        sent |= {"nonce": self.nonce, **changes}
        return await self.gateway.post("/sign-in/token", json=sent)


@pytest.fixture
async def page(local_issuer: LocalIssuer, issuer_client: httpx.AsyncClient) -> AsyncIterator[Page]:
    async with gateway(OidcIssuer(local_issuer.url, AUDIENCE, issuer_client, ALLOWED)) as client:
        yield Page(client, issuer_client)


async def test_the_page_learns_where_and_as_whom_to_sign_in(
    page: Page, local_issuer: LocalIssuer
) -> None:
    answer = await page.gateway.get("/sign-in/provider")
    assert answer.status_code == 200
    assert answer.json() == {
        "authorize": f"{local_issuer.url}/authorize",
        "client_id": AUDIENCE,
        "scope": "openid",
    }


async def test_without_an_issuer_the_page_is_told_to_use_a_code() -> None:
    async with gateway(None) as client:
        for answer in (
            await client.get("/sign-in/provider"),
            await client.post("/sign-in/token", json={}),
        ):
            assert answer.status_code == 404
            assert answer.json() == {"error": NOT_CONFIGURED, "reason": "not_configured"}


async def test_a_sign_in_at_the_issuer_gives_the_page_a_token_that_says_hello(
    page: Page, local_issuer: LocalIssuer, issuer_client: httpx.AsyncClient
) -> None:
    back = await page.code()
    assert back["state"] == page.state
    answer = await page.exchange(back["code"])
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    sign_in = SignIn(SECRET, OidcIssuer(local_issuer.url, AUDIENCE, issuer_client, ALLOWED))
    person = await sign_in.person(answer.json()["token"])
    assert person == issued_person(local_issuer.url, "web-person")


async def test_a_code_is_exchanged_once_and_only_with_its_verifier(page: Page) -> None:
    code = (await page.code())["code"]
    wrong = await page.exchange(code, verifier=secrets.token_urlsafe(32))
    assert (wrong.status_code, wrong.json()) == (401, {"error": REFUSED, "reason": "refused"})
    code = (await page.code())["code"]
    assert (await page.exchange(code)).status_code == 200
    again = await page.exchange(code)
    assert (again.status_code, again.json()) == (401, {"error": REFUSED, "reason": "refused"})


async def test_a_token_issued_for_another_sign_in_is_refused(page: Page) -> None:
    code = (await page.code())["code"]
    answer = await page.exchange(code, nonce="another-sign-in")
    assert (answer.status_code, answer.json()) == (401, {"error": REFUSED, "reason": "refused"})


async def test_a_person_who_declines_at_the_issuer_is_sent_back_with_an_error(
    page: Page, local_issuer: LocalIssuer
) -> None:
    local_issuer.signs_in = ""
    try:
        back = await page.code()
    finally:
        local_issuer.signs_in = "web-person"
    assert back == {"error": "access_denied", "state": page.state}


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"code": "c", "verifier": "v", "redirect_uri": "http://violet.test/"}',
        b'{"code": 1, "verifier": "v", "redirect_uri": "http://violet.test/", "nonce": "n"}',
        # A code meant for a page elsewhere is not this gateway's to exchange.
        b'{"code": "c", "verifier": "v", "redirect_uri": "https://evil.test/", "nonce": "n"}',
        b'{"code": "' + b"c" * 10_000 + b'"}',
    ],
    ids=["not-json", "not-an-object", "no-nonce", "not-text", "other-page", "too-big"],
)
async def test_what_the_page_would_never_send_is_refused_in_plain_words(
    page: Page, local_issuer: LocalIssuer, body: bytes
) -> None:
    exchanges = local_issuer.exchanges
    answer = await page.gateway.post("/sign-in/token", content=body)
    assert (answer.status_code, answer.json()) == (
        400,
        {"error": BAD_REQUEST, "reason": "not_finished"},
    )
    assert local_issuer.exchanges == exchanges  # the issuer was never asked


async def test_a_confidential_client_exchanges_with_its_secret(
    confidential_issuer: LocalIssuer, issuer_client: httpx.AsyncClient
) -> None:
    oidc = OidcIssuer(confidential_issuer.url, AUDIENCE, issuer_client, ALLOWED)
    for secret, status in (("the-client-secret", 200), ("", 401), ("a-guess", 401)):
        async with gateway(oidc, secret) as client:
            page = Page(client, issuer_client)
            answer = await page.exchange((await page.code())["code"])
            assert answer.status_code == status, secret


async def test_an_issuer_that_cannot_be_reached_is_told_as_a_moment_away(
    issuer_client: httpx.AsyncClient,
) -> None:
    with LocalIssuer() as gone:
        url = gone.url
    async with gateway(OidcIssuer(url, AUDIENCE, issuer_client, ALLOWED)) as client:
        provider = await client.get("/sign-in/provider")
        token = await client.post(
            "/sign-in/token",
            json={"code": "c", "verifier": "v", "redirect_uri": f"{PAGE}/", "nonce": "n"},
        )
    for answer in (provider, token):
        assert (answer.status_code, answer.json()) == (503, {"error": AWAY, "reason": "away"})


async def test_with_nobody_let_in_the_page_says_so_and_offers_no_sign_in_through_an_account(
    local_issuer: LocalIssuer, issuer_client: httpx.AsyncClient
) -> None:
    async with gateway(
        OidcIssuer(local_issuer.url, AUDIENCE, issuer_client, Allowlist())
    ) as client:
        answer = await client.get("/sign-in/provider")
    assert answer.status_code == 403
    assert answer.json() == {"error": NOBODY_ALLOWED_TEXT, "reason": "nobody_allowed"}


async def test_a_person_not_let_in_is_told_so_and_gets_no_token(
    local_issuer: LocalIssuer, issuer_client: httpx.AsyncClient
) -> None:
    only_ana = OidcIssuer(local_issuer.url, AUDIENCE, issuer_client, Allowlist.parse("ana@x.org"))
    async with gateway(only_ana) as client:
        page = Page(client, issuer_client)
        back = await page.code()
        answer = await page.exchange(back["code"])
    assert answer.status_code == 403
    assert answer.json() == {"error": NOT_ALLOWED_TEXT, "reason": "not_allowed"}
