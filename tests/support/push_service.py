"""A local Web Push service for tests: what a browser's push service does with a push, over HTTP
on a loopback port.

Each `subscription()` is a new browser: its own P-256 key pair and auth secret, and an endpoint
of its own. A push to it is checked as a push service and the browser would check it: the VAPID
token (RFC 8292) verified against the key it names, for this service's origin, unexpired and not
valid for more than a day, with a contact for its `sub`; then the body decrypted with the
browser's keys (RFC 8291, aes128gcm) into the notice's JSON. A push that passes is recorded as
`Received` and answered 201; anything else is recorded as a rejection and answered 400 (413 for
a payload too large), so a test can assert there were none.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import http_ece
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.device import Device
from tests.support.waiting import eventually
from violet.push import MAX_PAYLOAD_BYTES, b64url, from_b64url

if TYPE_CHECKING:
    from tests.support.stack import Stack

MAX_TOKEN_LIFETIME_S = 24 * 3600
# What no notification may show: Violet's inner words, and ids (of conversations, rows, work,
# traces): long runs of hex or of letters and digits mixed, and underscore-prefixed ids.
INTERNAL = re.compile(
    r"\b(work sessions?|topic cards?|claude-[a-z0-9.-]+|webpush|endpoint|vapid|subscription)\b"
    r"|\b[0-9a-f]{12,}\b|\b[a-z]{1,3}_[0-9a-zA-Z]{6,}\b|"
    r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{16,}\b",
    re.IGNORECASE,
)
NOTICE_KEYS = {"title", "body", "seq", "tag"}
ENDPOINT_PREFIX = "/push/"


def _leak(notice: dict[str, Any]) -> str:
    """What the notice shows that it must not: a key beyond its four, or an internal word or id
    in its words; "" when nothing."""
    if set(notice) != NOTICE_KEYS:
        return f"keys {sorted(notice)}"
    for text in (notice["title"], notice["body"]):
        found = INTERNAL.search(str(text))
        if found:
            return found.group(0)
    return ""


class Refused(Exception):
    """A push the service does not accept; the message says why."""

    def __init__(self, reason: str, status: int = 400) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class Received:
    endpoint: str
    notice: dict[str, Any]
    headers: dict[str, str]
    body_bytes: int  # the encrypted payload's size
    claims: dict[str, Any]  # the VAPID token's, verified


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str = ""  # why a push was refused


@dataclass(frozen=True)
class Rejection:
    endpoint: str
    reason: str


@dataclass
class _Browser:
    """One subscription, as the browser that made it holds it."""

    device_hint: str
    key: ec.EllipticCurvePrivateKey
    auth_secret: bytes
    gone: bool = False
    answered_gone: int = 0  # pushes answered 410 since `gone`
    next_failure: tuple[int, str | None] | None = None  # (status, Retry-After)


class LocalPushService:
    def __init__(self) -> None:
        self._browsers: dict[str, _Browser] = {}
        self._received: list[Received] = []
        self._rejections: list[Rejection] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.origin = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> LocalPushService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LocalPushService:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def subscription(self, device_hint: str) -> dict[str, str]:
        """A new browser's subscription, as `PushSubscription.toJSON()` gives its parts."""
        browser = _Browser(
            device_hint, ec.generate_private_key(ec.SECP256R1()), secrets.token_bytes(16)
        )
        endpoint = f"{self.origin}{ENDPOINT_PREFIX}{secrets.token_urlsafe(16)}"
        with self._lock:
            self._browsers[endpoint] = browser
        point = browser.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": endpoint, "p256dh": b64url(point), "auth": b64url(browser.auth_secret)}

    def gone(self, endpoint: str) -> None:
        """The browser unsubscribed: its endpoint answers 410 from now on."""
        with self._lock:
            self._browsers[endpoint].gone = True

    def answered_gone(self, endpoint: str) -> int:
        """How many pushes to `endpoint` were answered 410 (Gone)."""
        with self._lock:
            return self._browsers[endpoint].answered_gone

    def fail_next(self, endpoint: str, status: int, retry_after: str | None = None) -> None:
        """The next push to `endpoint` is answered `status` (and Retry-After, when given)."""
        with self._lock:
            self._browsers[endpoint].next_failure = (status, retry_after)

    def received(self, device_hint: str | None = None) -> list[Received]:
        """The pushes accepted, all or those to one device's subscriptions."""
        with self._lock:
            return [
                push
                for push in self._received
                if device_hint is None or self._browsers[push.endpoint].device_hint == device_hint
            ]

    def rejections(self) -> list[Rejection]:
        with self._lock:
            return list(self._rejections)

    async def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The pushes accepted, once there are at least `count` of them."""
        return await eventually(
            lambda: len(self.received()) >= count and self.received(),
            f"{count} pushes received",
            timeout_s=timeout,
        )

    def accept(self, endpoint: str, headers: dict[str, str], body: bytes) -> Answer:
        """The answer to a push to `endpoint` (headers named in lower case)."""
        with self._lock:
            browser = self._browsers.get(endpoint)
            failure = browser.next_failure if browser else None
            if browser is not None:
                browser.next_failure = None
                browser.answered_gone += browser.gone
        if browser is None:
            return Answer(404, {})
        if browser.gone:
            return Answer(410, {})
        if failure is not None:
            status, retry_after = failure
            return Answer(status, {"Retry-After": retry_after} if retry_after else {})
        try:
            push = self._opened(endpoint, browser, headers, body)
        except Refused as refused:
            with self._lock:
                self._rejections.append(Rejection(endpoint, str(refused)))
            return Answer(refused.status, {}, str(refused))
        with self._lock:
            self._received.append(push)
        return Answer(201, {"Location": f"{endpoint}/message/{secrets.token_urlsafe(8)}"})

    def _opened(
        self, endpoint: str, browser: _Browser, headers: dict[str, str], body: bytes
    ) -> Received:
        claims = self._verified_claims(headers.get("authorization", ""))
        if headers.get("content-encoding") != "aes128gcm":
            raise Refused(f"Content-Encoding is {headers.get('content-encoding')!r}")
        if not headers.get("ttl", "").isdigit():
            raise Refused("no TTL header, or not a number of seconds")
        if len(body) > MAX_PAYLOAD_BYTES:
            raise Refused(f"payload of {len(body)} bytes", status=413)
        try:
            plain = http_ece.decrypt(
                body, private_key=browser.key, auth_secret=browser.auth_secret, version="aes128gcm"
            )
            notice = json.loads(plain)
        except Exception as error:  # whatever fails to open is a refusal, never a crash
            raise Refused(f"the payload does not open: {error!r}") from None
        if not isinstance(notice, dict):
            raise Refused("the payload is not a JSON object")
        leaked = _leak(notice)
        if leaked:
            raise Refused(f"the notice shows {leaked!r}, which is Violet's own business")
        return Received(endpoint, notice, headers, len(body), claims)

    def _verified_claims(self, authorization: str) -> dict[str, Any]:
        scheme, _, rest = authorization.partition(" ")
        if scheme.lower() != "vapid":
            raise Refused(f"Authorization is not vapid: {scheme!r}")
        params = dict(part.strip().partition("=")[::2] for part in rest.split(","))
        if not params.get("t") or not params.get("k"):
            raise Refused("Authorization lacks t= or k=")
        try:
            key = ec.EllipticCurvePublicKey.from_encoded_point(
                ec.SECP256R1(), from_b64url(params["k"])
            )
            claims: dict[str, Any] = jwt.decode(
                params["t"],
                key,
                algorithms=["ES256"],
                audience=self.origin,
                options={"require": ["aud", "exp", "sub"]},
            )
        except (ValueError, jwt.PyJWTError) as error:
            raise Refused(f"the VAPID token does not verify: {error}") from None
        if claims["exp"] > time.time() + MAX_TOKEN_LIFETIME_S:
            raise Refused("the VAPID token is valid for more than 24 hours")
        if not str(claims["sub"]).startswith(("mailto:", "https:")):
            raise Refused(f"the VAPID sub is not a contact: {claims['sub']!r}")
        return claims

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                answer = service.accept(service.origin + self.path, headers, body)
                text = answer.text.encode()
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)

            def log_message(self, *_: object) -> None:
                pass

        return Handler


async def push_frame(device: Device, frame: dict[str, Any]) -> dict[str, Any]:
    await device.send(frame)
    return await device.until(lambda f: f["type"] in ("push", "error"))


async def turned_on(stack: Stack, person: str, browser: dict[str, str]) -> str:
    """Turns notifications on from a browser of the person (through a device that then
    leaves); its device id."""
    device_id = uuid.uuid4().hex
    phone, _ = await Device.open(stack.live_url, stack.token(person))
    state = await push_frame(phone, {"type": "push.get", "device": device_id})
    assert state["on"] is False and len(from_b64url(state["key"])) == 65
    turning_on = {"type": "push.on", "device": device_id, "previews": False, **browser}
    assert await push_frame(phone, turning_on) == {
        "type": "push",
        "key": state["key"],
        "on": True,
        "previews": False,
    }
    await phone.socket.close()
    return device_id


@pytest.fixture(scope="module")
def push() -> Iterator[LocalPushService]:
    """A local push service for a module's tests (import it as the module's `push`): no push it
    was sent may have been refused."""
    with LocalPushService() as service:
        yield service
        assert not service.rejections()
