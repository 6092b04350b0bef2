"""The web page's sign-in through the OpenID Connect issuer: the authorization code flow with
PKCE, the code exchanged by the gateway.

The page sends the person to the issuer's sign-in page (`GET /sign-in/provider` tells it where,
and as which client), with a one-time code challenge, state and nonce it keeps. The issuer sends
the person back to the page with a code; the page hands the code and its verifier to
`POST /sign-in/token`, and the gateway exchanges them at the issuer's token endpoint (with the
client secret, when Violet is registered as a confidential client), checks the ID token as every
hello is checked, nonce included, and gives it to the page, which says hello with it. So the
page talks only to its own origin, and no secret ever reaches a browser.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from gateway.allowlist import NOBODY_ALLOWED_TEXT, NOT_ALLOWED_TEXT, NotAllowed
from gateway.oidc import IssuerUnreachable, OidcIssuer
from violet.identity import Unauthorized

log = logging.getLogger(__name__)

# A code, a verifier, a redirect address and a nonce fit in far less.
MAX_BODY_BYTES = 8 * 1024
SCOPE = "openid"

NOT_CONFIGURED = "Signing in through an account is not set up here: use a sign-in code."
BAD_REQUEST = "That sign-in could not be finished. Please start it again."
REFUSED = "That sign-in was not accepted. Please sign in again."
AWAY = "Violet can't reach the sign-in service right now. Please try again in a moment."


def _problem(text: str, status: int, reason: str) -> JSONResponse:
    """`error` in English words; `reason` names it, so the page says it in its own language."""
    return JSONResponse({"error": text, "reason": reason}, status_code=status)


class PageSignIn:
    def __init__(self, issuer: OidcIssuer | None, client_secret: str = "") -> None:
        self._issuer = issuer
        self._client_secret = client_secret

    def routes(self) -> list[Route]:
        return [
            Route("/sign-in/provider", self.provider, methods=["GET"]),
            Route("/sign-in/token", self.token, methods=["POST"]),
        ]

    async def provider(self, _: Request) -> JSONResponse:
        """Where the page sends the person to sign in, and as which client."""
        if self._issuer is None:
            return _problem(NOT_CONFIGURED, 404, "not_configured")
        if self._issuer.allowed.nobody:
            return _problem(NOBODY_ALLOWED_TEXT, 403, "nobody_allowed")
        try:
            authorize = await self._issuer.endpoint("authorization_endpoint")
        except IssuerUnreachable as error:
            log.warning("the issuer's sign-in page is unknown", extra={"error": str(error)})
            return _problem(AWAY, 503, "away")
        return JSONResponse(
            {"authorize": authorize, "client_id": self._issuer.audience, "scope": SCOPE},
            headers={"Cache-Control": "no-store"},
        )

    async def token(self, request: Request) -> JSONResponse:
        """Exchanges the code the issuer gave the page for an ID token the gateway accepts."""
        if self._issuer is None:
            return _problem(NOT_CONFIGURED, 404, "not_configured")
        asked = await _exchange_request(request)
        if asked is None:
            return _problem(BAD_REQUEST, 400, "not_finished")
        code, verifier, redirect_uri, nonce = asked
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": redirect_uri,
            "client_id": self._issuer.audience,
        }
        auth = (self._issuer.audience, self._client_secret) if self._client_secret else None
        try:
            answer = await self._issuer.post_form(
                await self._issuer.endpoint("token_endpoint"), form, auth
            )
            id_token = answer.get("id_token") if isinstance(answer, dict) else None
            if not isinstance(id_token, str):
                refusal = answer.get("error") if isinstance(answer, dict) else answer
                raise Unauthorized(f"the issuer gave no ID token: {refusal}")
            await self._issuer.verify(id_token, nonce=nonce)
        except IssuerUnreachable as error:
            log.warning("a sign-in could not be exchanged", extra={"error": str(error)})
            return _problem(AWAY, 503, "away")
        except NotAllowed:
            log.info("a sign-in was refused: the person is not let in")
            return _problem(NOT_ALLOWED_TEXT, 403, "not_allowed")
        except Unauthorized as error:
            log.info("a sign-in was refused", extra={"error": str(error)})
            return _problem(REFUSED, 401, "refused")
        return JSONResponse({"token": id_token}, headers={"Cache-Control": "no-store"})


async def _exchange_request(request: Request) -> tuple[str, str, str, str] | None:
    """The code, verifier, redirect address and nonce the page sent, or None when the body is
    not what the page sends: the redirect address must be this gateway's own page."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    try:
        sent = json.loads(body)
    except ValueError:
        return None
    fields = ("code", "verifier", "redirect_uri", "nonce")
    if not isinstance(sent, dict) or not all(
        isinstance(sent.get(name), str) and sent[name] for name in fields
    ):
        return None
    if urlsplit(sent["redirect_uri"]).netloc != request.headers.get("host", ""):
        return None
    return sent["code"], sent["verifier"], sent["redirect_uri"], sent["nonce"]
