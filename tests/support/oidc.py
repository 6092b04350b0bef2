"""A local OpenID Connect issuer: discovery document and JWKS served over HTTP on a loopback
port, with freshly generated RSA and EC keys, and tokens signed as a real issuer signs them; and
the authorization code flow with PKCE, where every sign-in is granted at once to the subject of
`signs_in` (as a person already signed in at their provider sees it)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from gateway.allowlist import Allowlist

AUDIENCE = "violet-web"
# Every person the local issuer signs in has a verified address here; the stacks let them in.
DOMAIN = "people.example.org"
ALLOWED = Allowlist.parse(f"@{DOMAIN}")


@dataclass(frozen=True)
class Grant:
    """What a code the issuer handed out was granted for."""

    subject: str
    challenge: str
    redirect_uri: str
    nonce: str


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class LocalIssuer:
    def __init__(self, client_secret: str = "") -> None:
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.keys_fetched = 0
        self.client_secret = client_secret
        # Who signs in at the issuer's page; empty: the person declines.
        self.signs_in = "web-person"
        self.grants: dict[str, Grant] = {}
        self.exchanges = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> LocalIssuer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key, algorithm in (
            ("rsa-1", self.rsa_key, jwt.algorithms.RSAAlgorithm),
            ("ec-1", self.ec_key, jwt.algorithms.ECAlgorithm),
        ):
            public = json.loads(algorithm.to_jwk(key.public_key()))
            keys.append({**public, "kid": kid, "use": "sig"})
        return {"keys": keys}

    def claims(self, subject: str, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": subject,
            "email": f"{subject}@{DOMAIN}",
            "email_verified": True,
            "iat": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        return claims

    def token(self, subject: str = "alice", kind: str = "rsa", kid: str = "", **claims: Any) -> str:
        key, algorithm = (self.rsa_key, "RS256") if kind == "rsa" else (self.ec_key, "ES256")
        headers = {"kid": kid or f"{kind}-1"}
        return jwt.encode(self.claims(subject, **claims), key, algorithm, headers=headers)

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/keys",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
        }

    def authorize(self, asked: dict[str, str]) -> str:
        """Where the issuer's sign-in page sends the person back to."""
        back = asked["redirect_uri"]
        if asked.get("client_id") != AUDIENCE or asked.get("code_challenge_method") != "S256":
            return f"{back}?{urlencode({'error': 'invalid_request', 'state': asked['state']})}"
        if not self.signs_in:
            return f"{back}?{urlencode({'error': 'access_denied', 'state': asked['state']})}"
        code = secrets.token_urlsafe(16)
        self.grants[code] = Grant(
            self.signs_in, asked["code_challenge"], back, asked.get("nonce", "")
        )
        return f"{back}?{urlencode({'code': code, 'state': asked['state']})}"

    def exchange(self, form: dict[str, str], basic: str) -> tuple[int, dict[str, Any]]:
        """The token endpoint: a code is good once, for its verifier and redirect address."""
        self.exchanges += 1
        expected = base64.b64encode(f"{AUDIENCE}:{self.client_secret}".encode()).decode()
        if self.client_secret and basic != f"Basic {expected}":
            return 401, {"error": "invalid_client"}
        grant = self.grants.pop(form.get("code", ""), None)
        if (
            grant is None
            or form.get("grant_type") != "authorization_code"
            or form.get("redirect_uri") != grant.redirect_uri
            or s256(form.get("code_verifier", "")) != grant.challenge
        ):
            return 400, {"error": "invalid_grant"}
        id_token = self.token(grant.subject, nonce=grant.nonce)
        return 200, {"id_token": id_token, "access_token": "opaque", "token_type": "Bearer"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                parts = urlsplit(self.path)
                if parts.path == "/authorize":
                    asked = {k: v[0] for k, v in parse_qs(parts.query).items()}
                    self.send_response(302)
                    self.send_header("Location", issuer.authorize(asked))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/.well-known/openid-configuration":
                    body = issuer.discovery()
                elif self.path == "/keys":
                    issuer.keys_fetched += 1
                    body = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                self._json(200, body)

            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                if self.path != "/token":
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                self._json(*issuer.exchange(form, self.headers.get("Authorization", "")))

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                pass

        return Handler
