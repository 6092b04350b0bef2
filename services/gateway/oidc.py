"""Sign-in with tokens from an OpenID Connect issuer, beside the local device tokens.

A token is accepted when it is signed with one of the issuer's published keys (RS256 or ES256
only: never `none`, never an HMAC keyed with a public key), names the configured issuer and
audience, and is within its `nbf`..`exp` window give or take a small leeway. The person is the
configured claim (default `sub`), named `oidc:<issuer digest>:<value>`: the prefix keeps every
signed-in person apart from the local names, and the issuer's digest keeps the people of two
issuers apart should the issuer ever change.

The keys are fetched over HTTP without blocking the event loop, kept for a while, and fetched
again early when a token names a key not among them (at most once a `refetch_min_s`, so tokens
with made-up key ids cannot make Violet hammer the issuer).

A valid token is not enough: the person must also be one the operator lets in
(`VIOLET_OIDC_ALLOW`, `Allowlist`). With a public issuer anyone has an account, and every person
who signs in spends on the operator's key; so with no one listed, no one signs in through the
issuer, and one not listed is refused in plain words before anything of theirs is made.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import jwt

from gateway.allowlist import Allowlist, NotAllowed
from gateway.settings import checked_url
from violet.identity import ISSUED_PERSON_PREFIX, Identity, Unauthorized

log = logging.getLogger(__name__)

ALGORITHMS = ("RS256", "ES256")
DISCOVERY_PATH = "/.well-known/openid-configuration"
FETCH_TIMEOUT_S = 5.0
MAX_PERSON_CHARS = 128


class IssuerUnreachable(Exception):
    """The issuer's discovery document or keys could not be fetched."""


def issued_person(issuer: str, value: str) -> str:
    """The Violet person for `value` of the person claim in tokens from `issuer`."""
    digest = hashlib.sha256(issuer.encode()).hexdigest()[:8]
    return f"{ISSUED_PERSON_PREFIX}{digest}:{value}"


class KeySet:
    """The issuer's signing keys by key id, fetched on first need and refreshed as they age."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[dict[str, Any]]],
        max_age_s: float,
        refetch_min_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._max_age_s = max_age_s
        self._refetch_min_s = refetch_min_s
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._fetching = asyncio.Lock()

    async def key(self, kid: str) -> jwt.PyJWK:
        """The key with id `kid`; raises Unauthorized when the issuer has no such key."""
        if self._fetched_at is None or self._age() >= self._max_age_s:
            await self._refresh(keep_stale=self._fetched_at is not None)
        elif kid not in self._keys and self._age() >= self._refetch_min_s:
            await self._refresh(keep_stale=True)
        if kid not in self._keys:
            raise Unauthorized("the token is signed with a key the issuer does not publish")
        return self._keys[kid]

    def _age(self) -> float:
        assert self._fetched_at is not None
        return self._clock() - self._fetched_at

    async def _refresh(self, keep_stale: bool) -> None:
        started = self._clock()
        async with self._fetching:
            if self._fetched_at is not None and self._fetched_at >= started:
                return  # fetched by another sign-in while this one waited
            try:
                published = await self._fetch()
                self._keys = _signing_keys(published)
            except IssuerUnreachable:
                if not keep_stale:
                    raise
                log.warning("the issuer's keys could not be refetched; the known ones stay")
            self._fetched_at = self._clock()


def _signing_keys(published: dict[str, Any]) -> dict[str, jwt.PyJWK]:
    """The keys of a JWKS document that sign with an accepted algorithm, by key id."""
    keys: dict[str, jwt.PyJWK] = {}
    for entry in published.get("keys", []) if isinstance(published, dict) else []:
        if not isinstance(entry, dict) or "kid" not in entry or entry.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(entry)
        except jwt.PyJWTError:
            continue  # a key of a kind Violet does not use
        if key.algorithm_name in ALGORITHMS:
            keys[str(entry["kid"])] = key
    return keys


class OidcIssuer:
    """Checks tokens of one issuer for one audience."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        client: httpx.AsyncClient,
        allowed: Allowlist,
        jwks_url: str = "",
        person_claim: str = "sub",
        leeway_s: float = 30,
        keys_max_age_s: float = 3600,
        refetch_min_s: float = 60,
    ) -> None:
        self.issuer = issuer
        self._audience = audience
        self.allowed = allowed
        self._client = client
        self._jwks_url = jwks_url
        self._person_claim = person_claim
        self._leeway_s = leeway_s
        self.keys = KeySet(self._fetch_keys, keys_max_age_s, refetch_min_s)
        self._discovery: dict[str, Any] | None = None

    @property
    def audience(self) -> str:
        return self._audience

    async def verify(self, token: str, nonce: str | None = None) -> Identity:
        """The person the token signs in; raises Unauthorized, or IssuerUnreachable when the
        issuer's keys cannot be had. With `nonce`, the token must carry it (a sign-in the page
        itself started)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise Unauthorized(str(error)) from None
        if header.get("alg") not in ALGORITHMS:
            raise Unauthorized("the token is not signed with an accepted algorithm")
        kid = header.get("kid")
        if not isinstance(kid, str):
            raise Unauthorized("the token names no signing key")
        key = await self.keys.key(kid)
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                issuer=self.issuer,
                audience=self._audience,
                leeway=self._leeway_s,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as error:
            raise Unauthorized(str(error)) from None
        if nonce is not None and claims.get("nonce") != nonce:
            raise Unauthorized("the token was issued for another sign-in")
        if not self.allowed.lets_in(claims):
            raise NotAllowed("the operator does not let this person sign in")
        value = claims.get(self._person_claim)
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_PERSON_CHARS:
            raise Unauthorized(f"the token's {self._person_claim!r} claim names no person")
        return Identity(person=issued_person(self.issuer, value), token=token)

    async def endpoint(self, name: str) -> str:
        """One of the issuer's endpoints (`jwks_uri`, `authorization_endpoint`,
        `token_endpoint`), from its discovery document, fetched once and kept."""
        if self._discovery is None:
            discovery = await self._get_json(self.issuer.rstrip("/") + DISCOVERY_PATH)
            if discovery.get("issuer") != self.issuer:
                raise IssuerUnreachable("the discovery document names another issuer")
            self._discovery = discovery
        if not self._discovery.get(name):
            raise IssuerUnreachable(f"the discovery document names no {name}")
        try:
            return checked_url(str(self._discovery[name]))
        except ValueError as error:
            raise IssuerUnreachable(f"the discovery document's {name} {error}") from None

    async def post_form(self, url: str, form: dict[str, str], auth: tuple[str, str] | None) -> Any:
        """What the issuer answers a form posted to `url`, read as JSON. Raises
        IssuerUnreachable when it cannot be reached; an answer it refuses (4xx) is returned."""
        try:
            async with asyncio.timeout(FETCH_TIMEOUT_S):
                response = await self._client.post(
                    url,
                    data=form,
                    auth=httpx.BasicAuth(*auth) if auth else httpx.USE_CLIENT_DEFAULT,
                    timeout=FETCH_TIMEOUT_S,
                )
                if response.status_code >= 500:
                    response.raise_for_status()
                return response.json()
        except TimeoutError:
            raise IssuerUnreachable(f"{url}: no answer in {FETCH_TIMEOUT_S:g} s") from None
        except (httpx.HTTPError, ValueError) as error:
            raise IssuerUnreachable(f"{url}: {error}") from None

    async def _fetch_keys(self) -> dict[str, Any]:
        if not self._jwks_url:
            self._jwks_url = await self.endpoint("jwks_uri")
        return await self._get_json(self._jwks_url)

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            async with asyncio.timeout(FETCH_TIMEOUT_S):  # in all, however slowly it answers
                response = await self._client.get(url, timeout=FETCH_TIMEOUT_S)
                response.raise_for_status()
                document = response.json()
        except TimeoutError:
            raise IssuerUnreachable(f"{url}: no answer in {FETCH_TIMEOUT_S:g} s") from None
        except (httpx.HTTPError, ValueError) as error:
            raise IssuerUnreachable(f"{url}: {error}") from None
        if not isinstance(document, dict):
            raise IssuerUnreachable(f"{url}: not a JSON object")
        return document
