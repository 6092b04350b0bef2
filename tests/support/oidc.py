"""A local OpenID Connect issuer: discovery document and JWKS served over HTTP on a loopback
port, with freshly generated RSA and EC keys, and tokens signed as a real issuer signs them."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

AUDIENCE = "violet-web"


class LocalIssuer:
    def __init__(self) -> None:
        self.rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.keys_fetched = 0
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
        claims = {"iss": self.url, "aud": AUDIENCE, "sub": subject, "iat": now, "exp": now + 600}
        claims.update(overrides)
        return claims

    def token(self, subject: str = "alice", kind: str = "rsa", kid: str = "", **claims: Any) -> str:
        key, algorithm = (self.rsa_key, "RS256") if kind == "rsa" else (self.ec_key, "ES256")
        headers = {"kid": kid or f"{kind}-1"}
        return jwt.encode(self.claims(subject, **claims), key, algorithm, headers=headers)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/keys"}
                elif self.path == "/keys":
                    issuer.keys_fetched += 1
                    body = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                pass

        return Handler
