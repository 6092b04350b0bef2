"""Sign-in with an OpenID Connect issuer's tokens, checked against a real JWKS served on a
loopback port with generated RSA and EC keys."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from pydantic import ValidationError

from gateway.allowlist import Allowlist, NotAllowed
from gateway.oidc import IssuerUnreachable, KeySet, OidcIssuer, issued_person
from gateway.settings import GatewaySettings
from gateway.signin import SignIn
from tests.support.oidc import ALLOWED, AUDIENCE, LocalIssuer
from violet.identity import Unauthorized, issue_token

SECRET = "a-test-secret-that-is-long-enough-for-hs256"


def segment(data: dict | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def local_issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer() as issuer:
        yield issuer


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture
def oidc(local_issuer: LocalIssuer, client: httpx.AsyncClient) -> OidcIssuer:
    return OidcIssuer(local_issuer.url, AUDIENCE, client, ALLOWED)


@pytest.mark.parametrize("kind", ["rsa", "ec"])
async def test_a_token_of_the_issuer_signs_its_person_in(
    oidc: OidcIssuer, local_issuer: LocalIssuer, kind: str
) -> None:
    identity = await oidc.verify(local_issuer.token("alice", kind=kind))
    assert identity.person == issued_person(local_issuer.url, "alice")
    assert identity.person.startswith("oidc:") and identity.person.endswith(":alice")


async def test_the_person_comes_from_the_configured_claim(
    local_issuer: LocalIssuer, client: httpx.AsyncClient
) -> None:
    allowed = Allowlist.parse("sub=248289761001")
    by_email = OidcIssuer(local_issuer.url, AUDIENCE, client, allowed, person_claim="email")
    token = local_issuer.token("248289761001", email="ana@example.com")
    assert (await by_email.verify(token)).person.endswith(":ana@example.com")
    with pytest.raises(Unauthorized, match="names no person"):
        await by_email.verify(local_issuer.token("248289761001", email=None))


async def test_people_of_two_issuers_never_share_a_name() -> None:
    assert issued_person("https://a.example", "1") != issued_person("https://b.example", "1")


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "https://elsewhere.example"}, "(?i)issuer"),
        ({"aud": "another-client"}, "(?i)audience"),
        ({"exp": -120}, "(?i)expired"),
        ({"nbf": +120}, "(?i)not yet valid"),
    ],
    ids=["wrong-issuer", "wrong-audience", "expired", "not-yet-valid"],
)
async def test_a_token_for_another_issuer_audience_or_time_is_refused(
    oidc: OidcIssuer, local_issuer: LocalIssuer, claims: dict, reason: str
) -> None:
    # Times are given as seconds from now and made absolute here, not when tests are collected.
    now = int(time.time())
    claims = {key: now + value if key in ("exp", "nbf") else value for key, value in claims.items()}
    with pytest.raises(Unauthorized, match=reason):
        await oidc.verify(local_issuer.token("alice", **claims))


async def test_a_clock_a_few_seconds_off_is_forgiven(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    token = local_issuer.token("alice", exp=int(time.time()) - 5, nbf=int(time.time()) + 5)
    assert (await oidc.verify(token)).person.endswith(":alice")


async def test_a_token_signed_with_an_unknown_key_is_refused(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    with pytest.raises(Unauthorized, match="key the issuer does not publish"):
        await oidc.verify(local_issuer.token("alice", kid="rotated-away"))


async def test_a_token_naming_another_kind_of_key_than_it_is_signed_with_is_refused(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    with pytest.raises(Unauthorized, match="does not match the key"):
        await oidc.verify(local_issuer.token("alice", kind="ec", kid="rsa-1"))


async def test_an_unsigned_token_is_refused(oidc: OidcIssuer, local_issuer: LocalIssuer) -> None:
    header = {"alg": "none", "typ": "JWT", "kid": "rsa-1"}
    token = f"{segment(header)}.{segment(local_issuer.claims('alice'))}."
    with pytest.raises(Unauthorized, match="accepted algorithm"):
        await oidc.verify(token)
    with pytest.raises(Unauthorized):
        await SignIn(SECRET, oidc).person(token)


async def test_a_token_signed_with_the_public_key_as_an_hmac_secret_is_refused(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    public = local_issuer.rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signed = f"{segment({'alg': 'HS256', 'typ': 'JWT', 'kid': 'rsa-1'})}."
    signed += segment(local_issuer.claims("alice"))
    signature = hmac.new(public, signed.encode(), hashlib.sha256).digest()
    token = f"{signed}.{segment(signature)}"
    with pytest.raises(Unauthorized):
        await oidc.verify(token)
    with pytest.raises(Unauthorized):
        await SignIn(SECRET, oidc).person(token)


async def test_a_token_whose_claims_were_changed_is_refused(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    header, _, signature = local_issuer.token("alice").split(".")
    forged = f"{header}.{segment(local_issuer.claims('root'))}.{signature}"
    with pytest.raises(Unauthorized, match="Signature verification failed"):
        await oidc.verify(forged)


async def test_an_unreachable_issuer_is_told_apart_from_a_bad_token(
    client: httpx.AsyncClient, local_issuer: LocalIssuer
) -> None:
    with LocalIssuer() as gone:
        url = gone.url
    unreachable = OidcIssuer(url, AUDIENCE, client, ALLOWED)
    with pytest.raises(IssuerUnreachable):
        await unreachable.verify(local_issuer.token("alice"))


async def test_sign_in_keeps_accepting_local_tokens_beside_the_issuers(
    oidc: OidcIssuer, local_issuer: LocalIssuer
) -> None:
    sign_in = SignIn(SECRET, oidc)
    assert await sign_in.person(issue_token("ana", SECRET)) == "ana"
    assert (await sign_in.person(local_issuer.token("ana"))).startswith("oidc:")
    with pytest.raises(Unauthorized):
        await SignIn(SECRET).person(local_issuer.token("ana"))


async def test_no_local_token_can_name_a_signed_in_person(local_issuer: LocalIssuer) -> None:
    with pytest.raises(ValueError, match="signed-in people"):
        issue_token("oidc:1234abcd:alice", SECRET)
    claims = {"sub": "oidc:1234abcd:alice", "iss": "violet", "exp": int(time.time()) + 60}
    with pytest.raises(Unauthorized, match="signed-in person"):
        await SignIn(SECRET).person(jwt.encode(claims, SECRET, algorithm="HS256"))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_keys_are_cached_refetched_for_a_new_key_and_at_most_once_a_while(
    local_issuer: LocalIssuer,
) -> None:
    fetched: list[int] = []
    published = local_issuer.jwks()

    async def fetch() -> dict:
        fetched.append(1)
        return published

    clock = Clock()
    keys = KeySet(fetch, max_age_s=3600, refetch_min_s=60, clock=clock)
    await keys.key("rsa-1")
    await keys.key("ec-1")
    assert len(fetched) == 1
    clock.now += 61
    for _ in range(5):
        with pytest.raises(Unauthorized):
            await keys.key("made-up")
    assert len(fetched) == 2  # one refetch for the unknown key, not one per token
    published = {"keys": [{**local_issuer.jwks()["keys"][0], "kid": "rsa-2"}]}
    clock.now += 61
    await keys.key("rsa-2")
    assert len(fetched) == 3


async def test_known_keys_stay_in_use_while_the_issuer_is_down(local_issuer: LocalIssuer) -> None:
    answers: list[dict | None] = [local_issuer.jwks(), None]

    async def fetch() -> dict:
        answer = answers.pop(0)
        if answer is None:
            raise IssuerUnreachable("down")
        return answer

    clock = Clock()
    keys = KeySet(fetch, max_age_s=3600, refetch_min_s=60, clock=clock)
    await keys.key("rsa-1")
    clock.now += 3601
    assert (await keys.key("rsa-1")).algorithm_name == "RS256"


def test_an_issuer_needs_an_audience_and_a_safe_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIOLET_OIDC_ISSUER", "https://id.example.com")
    with pytest.raises(ValidationError, match="audience"):
        GatewaySettings()
    monkeypatch.setenv("VIOLET_OIDC_AUDIENCE", "violet")
    assert GatewaySettings().oidc_person_claim == "sub"
    monkeypatch.setenv("VIOLET_OIDC_ISSUER", "http://id.example.com")
    with pytest.raises(ValidationError, match="https"):
        GatewaySettings()


def test_a_client_secret_or_a_keys_address_needs_an_issuer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIOLET_OIDC_JWKS_URL", "https://id.example.com/keys")
    with pytest.raises(ValidationError, match="a JWKS URL needs VIOLET_OIDC_ISSUER"):
        GatewaySettings()
    monkeypatch.delenv("VIOLET_OIDC_JWKS_URL")
    monkeypatch.setenv("VIOLET_OIDC_CLIENT_SECRET", "a-secret")
    with pytest.raises(ValidationError, match="a client secret needs VIOLET_OIDC_ISSUER"):
        GatewaySettings()
    monkeypatch.setenv("VIOLET_OIDC_ISSUER", "https://id.example.com")
    monkeypatch.setenv("VIOLET_OIDC_AUDIENCE", "violet")
    assert GatewaySettings().oidc_client_secret == "a-secret"


def test_who_may_sign_in_is_read_from_addresses_domains_and_claims() -> None:
    allowed = Allowlist.parse(" Ana@Example.org, @school.example , groups=violet,tid=42 ")
    assert allowed.emails == {"ana@example.org"} and allowed.domains == {"@school.example"}
    assert allowed.claims == {("groups", "violet"), ("tid", "42")}
    assert Allowlist.parse("").nobody and Allowlist.parse(" , ").nobody


@pytest.mark.parametrize("entry", ["ana", "ana@", "=violet", "groups=", "@localhost"])
def test_an_entry_that_names_nobody_is_refused_in_plain_words(entry: str) -> None:
    with pytest.raises(ValueError, match="email address|claim and a value"):
        Allowlist.parse(entry)


@pytest.mark.parametrize(
    ("claims", "let_in"),
    [
        ({"email": "ANA@example.org", "email_verified": True}, True),
        ({"email": "bo@school.example", "email_verified": True}, True),
        ({"email": "ana@example.org", "email_verified": False}, False),  # not verified
        ({"email": "ana@example.org"}, False),  # nor said to be
        ({"email": "eve@notschool.example", "email_verified": True}, False),
        ({"email": "eve@evil.example", "email_verified": True, "groups": ["violet"]}, True),
        ({"groups": "violet-admins"}, False),
        ({"tid": 42}, True),
        ({"sub": "someone"}, False),
    ],
)
def test_a_person_is_let_in_by_a_verified_address_their_domain_or_a_claim(
    claims: dict, let_in: bool
) -> None:
    allowed = Allowlist.parse("ana@example.org,@school.example,groups=violet,tid=42")
    assert allowed.lets_in(claims) is let_in
    assert not Allowlist().lets_in(claims)  # nobody


async def test_a_valid_token_of_a_person_not_let_in_is_refused_as_not_allowed(
    local_issuer: LocalIssuer, client: httpx.AsyncClient
) -> None:
    only_ana = OidcIssuer(local_issuer.url, AUDIENCE, client, Allowlist.parse("ana@example.org"))
    with pytest.raises(NotAllowed):
        await only_ana.verify(local_issuer.token("mallory"))
    token = local_issuer.token("ana-sub", email="ana@example.org")
    assert (await only_ana.verify(token)).person.endswith(":ana-sub")


def test_the_setting_says_which_entry_of_who_may_sign_in_is_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VIOLET_OIDC_ALLOW", "@example.org, ana")
    with pytest.raises(ValidationError, match="'ana' is not an email address"):
        GatewaySettings()
