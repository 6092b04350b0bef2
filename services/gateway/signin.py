"""Who a device's hello signs in: a local device token, or a token from the OpenID Connect
issuer when one is configured. The two are told apart by their signing algorithm (local tokens
are HS256, an issuer's RS256 or ES256), so each is checked only by its own verifier."""

from __future__ import annotations

import logging

import httpx
import jwt

from gateway.allowlist import Allowlist
from gateway.oidc import ALGORITHMS, OidcIssuer
from gateway.settings import GatewaySettings
from violet.identity import ALGORITHM, Unauthorized, is_issued_person, verify_token

log = logging.getLogger(__name__)


class SignIn:
    def __init__(self, secret: str, issuer: OidcIssuer | None = None) -> None:
        self._secret = secret
        self._issuer = issuer

    async def person(self, token: str) -> str:
        """The person `token` signs in; raises Unauthorized, or IssuerUnreachable when the
        issuer's keys cannot be had."""
        try:
            algorithm = jwt.get_unverified_header(token).get("alg")
        except jwt.PyJWTError as error:
            raise Unauthorized(str(error)) from None
        if algorithm == ALGORITHM:
            person = verify_token(token, self._secret).person
            if is_issued_person(person):
                raise Unauthorized("a local token cannot name a signed-in person")
            return person
        if self._issuer is not None and algorithm in ALGORITHMS:
            return (await self._issuer.verify(token)).person
        raise Unauthorized("the token is not signed with an accepted algorithm")


def issuer_from(settings: GatewaySettings, client: httpx.AsyncClient) -> OidcIssuer | None:
    """The configured OpenID Connect issuer, if any."""
    if not settings.oidc_issuer:
        return None
    allowed = Allowlist.parse(settings.oidc_allow)
    if allowed.nobody:
        log.warning(
            "Nobody may sign in through %s yet: VIOLET_OIDC_ALLOW names no one. Set it to the "
            "email addresses, @domains or claim=value pairs of the people Violet is for.",
            settings.oidc_issuer,
        )
    return OidcIssuer(
        settings.oidc_issuer,
        settings.oidc_audience,
        client,
        allowed,
        jwks_url=settings.oidc_jwks_url,
        person_claim=settings.oidc_person_claim,
        leeway_s=settings.oidc_leeway_s,
        keys_max_age_s=settings.oidc_keys_max_age_s,
        refetch_min_s=settings.oidc_refetch_min_s,
    )
