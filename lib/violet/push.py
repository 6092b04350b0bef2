"""Notices sent to people's devices: the sending side of push notifications.

One interface, `Pusher`, whatever carries a notice to a device. Browsers are reached by Web Push:
the notice goes to the push service the browser named (RFC 8030), encrypted for that browser alone
(RFC 8291, aes128gcm), and signed with Violet's VAPID key so the push service knows who sends
(RFC 8292). A push ends in one `Outcome`: delivered; gone (the subscription is dead: forget it);
retry (the push service or the network is having trouble: try again later); or failed (refused
for a reason trying again will not change).

A subscription's endpoint is a capability: whoever knows it can push to the device. It is never
logged, only its host is. Endpoints a browser hands over are checked when given
(`check_endpoint`, `check_keys`); with `block_private`, a push also connects to public addresses
only, checked again where the connection is opened, so a name that answers a public address to
the check and a private one later still reaches nothing inside.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import enum
import ipaddress
import json
import logging
import re
import socket
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import SplitResult, urlsplit

import http_ece
import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import jwt as vapid_jwt

from violet.public_net import NotPublic, is_public, public_transport
from violet.secret_files import made_once

log = logging.getLogger(__name__)

WEB_PUSH = "webpush"
MAX_ENDPOINT_CHARS = 1024
# The largest message every push service must accept (RFC 8030 section 7.2, RFC 8291 section 4).
MAX_PAYLOAD_BYTES = 4096
# What aes128gcm adds to the notice: a header (salt 16, record size 4, key id length 1, the
# sender's public key 65), the padding delimiter 1 and the authentication tag 16.
_ENCRYPTION_OVERHEAD = 86 + 1 + 16
MAX_NOTICE_BYTES = MAX_PAYLOAD_BYTES - _ENCRYPTION_OVERHEAD
# A push service's Retry-After is honoured up to a day: past it (or in a form no one can read),
# the notifier's own backoff decides.
RETRY_AFTER_AT_MOST_S = 86_400.0
_SECONDS = re.compile(r"[0-9]{1,64}")
VAPID_TOKEN_TTL_S = 12 * 3600  # push services refuse tokens valid for more than 24 hours
VAPID_FILE = "vapid.pem"
SHORTENED = "…"
_KEPT_ANSWER_BYTES = 1024  # of a push service's answer, for the log line
_SHOWN_ANSWER_CHARS = 200
_P256_POINT_BYTES = 65  # an uncompressed point: 0x04, then x and y of 32 bytes each
_AUTH_SECRET_BYTES = 16

UNUSABLE_ADDRESS = "This browser's notification address can't be used."
UNUSABLE_DETAILS = (
    "This browser's notification details can't be used. Try turning notifications off and on again."
)


@dataclass(frozen=True)
class PushAddress:
    """Where one device is reached. For Web Push, the parts of the browser's subscription (as
    `PushSubscription.toJSON()` gives them): the endpoint, the browser's P-256 public key and its
    16-byte auth secret, both base64url without padding."""

    kind: str
    endpoint: str
    p256dh: str
    auth: str


@dataclass(frozen=True)
class Notice:
    """What the device shows. `seq` is the message of the conversation opened when the notice is
    tapped; a notice with the same `tag` replaces the one shown, so a notice sent twice shows
    once."""

    title: str
    body: str
    seq: int
    tag: str


class Outcome(enum.Enum):
    DELIVERED = "delivered"
    GONE = "gone"  # the subscription is dead: remove it
    RETRY = "retry"  # the push service or the network had trouble: try again later
    FAILED = "failed"  # refused; will not be retried


@dataclass(frozen=True)
class Sent:
    """How one push ended; `reason` is plain words for the logs, never the endpoint."""

    outcome: Outcome
    status: int | None
    reason: str
    retry_after_s: float | None = None


class Pusher(Protocol):
    """Sends notices to devices of one kind of address."""

    kind: str

    async def push(self, address: PushAddress, notice: Notice) -> Sent: ...

    async def aclose(self) -> None: ...


class BadEndpoint(Exception):
    """A subscription that cannot be used. The message is plain words for the person; `detail`
    says why, for the logs."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


def b64url(data: bytes) -> str:
    """Base64url without padding, as browsers and VAPID write keys."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    """The bytes of base64url text, padded or not; anything else raises ValueError."""
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded, altchars=b"-_", validate=True)


# --- VAPID: who sends -------------------------------------------------------------------------


class VapidKeys:
    """Violet's VAPID key pair (P-256). The public half is what a browser's subscription is made
    with (`applicationServerKey`); the private half signs every push."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        if not isinstance(private_key.curve, ec.SECP256R1):
            raise ValueError("A VAPID key must be a P-256 key.")
        self._private_key = private_key

    @classmethod
    def generate(cls) -> VapidKeys:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_pem(cls, text: str) -> VapidKeys:
        key = serialization.load_pem_private_key(text.strip().encode(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError("A VAPID key must be an elliptic curve (P-256) private key.")
        return cls(key)

    def pem(self) -> str:
        return self._private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    @property
    def public_key_b64(self) -> str:
        point = self._private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64url(point)

    def authorization(self, audience: str, subject: str) -> str:
        """The Authorization header of a push to `audience` (RFC 8292 section 3)."""
        claims = {"aud": audience, "sub": subject, "exp": int(time.time()) + VAPID_TOKEN_TTL_S}
        token: str = vapid_jwt.sign(claims, self._private_key)
        return f"vapid t={token}, k={self.public_key_b64}"

    def __repr__(self) -> str:
        return f"VapidKeys(public={self.public_key_b64})"


def resolve_vapid(configured: str, home: Path) -> VapidKeys:
    """The configured key (PEM text), or the one kept in `home` (made once, on first use)."""
    if configured.strip():
        return VapidKeys.from_pem(configured)
    return VapidKeys.from_pem(made_once(home / VAPID_FILE, lambda: VapidKeys.generate().pem()))


# --- Checking what a browser hands over -------------------------------------------------------


async def check_endpoint(url: str, block_private: bool) -> str:
    """`url` when it can serve as a subscription's endpoint; BadEndpoint otherwise. With
    `block_private`, only https to a host whose every address is public."""
    parts = _endpoint_parts(url, block_private)
    if block_private:
        await _check_public_host(parts)
    return url


def _endpoint_parts(url: str, block_private: bool) -> SplitResult:
    if len(url) > MAX_ENDPOINT_CHARS:
        raise BadEndpoint(UNUSABLE_ADDRESS, f"longer than {MAX_ENDPOINT_CHARS} characters")
    if not url.isprintable() or " " in url:
        raise BadEndpoint(UNUSABLE_ADDRESS, "spaces or control characters")
    try:
        parts = _parsed(url)
    except ValueError as error:
        raise BadEndpoint(UNUSABLE_ADDRESS, f"not a URL ({error})") from None
    if parts.scheme not in _schemes(block_private):
        raise BadEndpoint(UNUSABLE_ADDRESS, f"the scheme {parts.scheme!r} is not allowed")
    if not parts.hostname:
        raise BadEndpoint(UNUSABLE_ADDRESS, "no host")
    if "@" in parts.netloc:
        raise BadEndpoint(UNUSABLE_ADDRESS, "a user name or password in the address")
    return parts


def _parsed(url: str) -> SplitResult:
    """The parts of a URL; ValueError for one that does not parse, its port included."""
    parts = urlsplit(url)
    parts.port  # noqa: B018 (reading the port is what checks it)
    return parts


def _host_of(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def _schemes(block_private: bool) -> tuple[str, ...]:
    # Plain http only where nothing is checked: a local stack's or a test's push service.
    return ("https",) if block_private else ("https", "http")


async def _check_public_host(parts: SplitResult) -> None:
    host = parts.hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        raise BadEndpoint(UNUSABLE_ADDRESS, f"{host} is this machine")
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        addresses = await _resolved(host, parts.port or 443)
    private = [address for address in addresses if not is_public(address)]
    if private:
        raise BadEndpoint(UNUSABLE_ADDRESS, f"{host} has addresses that are not public")


async def _resolved(host: str, port: int) -> list[str]:
    try:
        answers = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise BadEndpoint(UNUSABLE_ADDRESS, f"{host} could not be found") from None
    if not answers:
        raise BadEndpoint(UNUSABLE_ADDRESS, f"{host} has no address")
    return [str(answer[4][0]) for answer in answers]


def check_keys(p256dh: str, auth: str) -> tuple[bytes, bytes]:
    """The browser's public key (an uncompressed P-256 point) and auth secret, decoded;
    BadEndpoint when either is not what a browser gives."""
    try:
        point, secret = from_b64url(p256dh), from_b64url(auth)
    except (ValueError, binascii.Error):
        raise BadEndpoint(UNUSABLE_DETAILS, "keys are not base64url") from None
    if len(point) != _P256_POINT_BYTES or point[0] != 0x04:
        raise BadEndpoint(UNUSABLE_DETAILS, "p256dh is not an uncompressed P-256 point")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        raise BadEndpoint(UNUSABLE_DETAILS, "p256dh is not on the P-256 curve") from None
    if len(secret) != _AUTH_SECRET_BYTES:
        raise BadEndpoint(UNUSABLE_DETAILS, f"auth is not {_AUTH_SECRET_BYTES} bytes")
    return point, secret


# --- The notice on the wire -------------------------------------------------------------------


def _notice_json(notice: Notice) -> bytes:
    fields = {"title": notice.title, "body": notice.body, "seq": notice.seq, "tag": notice.tag}
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()


def _shortened(notice: Notice, kept_chars: int) -> Notice:
    return replace(notice, body=notice.body[:kept_chars].rstrip() + SHORTENED)


def notice_payload(notice: Notice) -> bytes:
    """The notice as the JSON the device reads, its body shortened to fit in one push."""
    whole = _notice_json(notice)
    if len(whole) <= MAX_NOTICE_BYTES:
        return whole
    # The most characters of the body that fit: escaping makes bytes per character vary.
    fits, too_many = 0, len(notice.body)
    while too_many - fits > 1:
        middle = (fits + too_many) // 2
        if len(_notice_json(_shortened(notice, middle))) <= MAX_NOTICE_BYTES:
            fits = middle
        else:
            too_many = middle
    return _notice_json(_shortened(notice, fits))


def _encrypted(plaintext: bytes, browser_key: bytes, auth_secret: bytes) -> bytes:
    # A fresh sender key for every message, as RFC 8291 requires.
    sender_key = ec.generate_private_key(ec.SECP256R1())
    sealed: bytes = http_ece.encrypt(
        plaintext,
        version="aes128gcm",
        dh=browser_key,
        auth_secret=auth_secret,
        private_key=sender_key,
    )
    return sealed


def _origin(parts: SplitResult) -> str:
    """scheme://host[:port], the audience of a VAPID token."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    default_port = {"https": 443, "http": 80}.get(parts.scheme)
    port = f":{parts.port}" if parts.port and parts.port != default_port else ""
    return f"{parts.scheme}://{host}{port}"


# --- Sending ----------------------------------------------------------------------------------


class WebPusher:
    """Sends notices to browsers by Web Push. With `block_private`, only to https endpoints on
    public addresses; without (tests, a local stack), http and private addresses too."""

    kind = WEB_PUSH

    def __init__(
        self,
        keys: VapidKeys,
        subject: str,
        block_private: bool,
        ttl_s: int = 86400,
        timeout_s: float = 10.0,
    ) -> None:
        if not subject.startswith(("mailto:", "https:")):
            raise ValueError("The VAPID subject must be a mailto: or https: address.")
        self._keys = keys
        self._subject = subject
        self._block_private = block_private
        self._ttl_s = ttl_s
        self._timeout_s = timeout_s
        # Direct connections only: a proxy's own address would be the only one checked.
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=False,
            transport=public_transport() if block_private else None,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def push(self, address: PushAddress, notice: Notice) -> Sent:
        sent = await self._send(address, notice)
        if sent.outcome is not Outcome.DELIVERED:
            log.warning(
                "push not delivered: %s",
                sent.reason,
                extra={"push_host": _host_of(address.endpoint), "outcome": sent.outcome.value},
            )
        return sent

    async def _send(self, address: PushAddress, notice: Notice) -> Sent:
        try:
            parts = _parsed(address.endpoint)
        except ValueError:
            return Sent(Outcome.FAILED, None, "the endpoint is not a URL")
        refusal = self._refusal(address, parts)
        if refusal:
            return Sent(Outcome.FAILED, None, refusal)
        try:
            browser_key, auth_secret = check_keys(address.p256dh, address.auth)
        except BadEndpoint as error:
            return Sent(Outcome.FAILED, None, f"the subscription is unusable: {error.detail}")
        body = _encrypted(notice_payload(notice), browser_key, auth_secret)
        if len(body) > MAX_PAYLOAD_BYTES:
            return Sent(Outcome.FAILED, None, f"the notice is too large ({len(body)} bytes)")
        return await self._post(address.endpoint, parts, body)

    def _refusal(self, address: PushAddress, parts: SplitResult) -> str:
        """Why the address cannot be pushed to at all, or nothing."""
        if address.kind != WEB_PUSH:
            return f"a {address.kind!r} address is not a web push one"
        if parts.scheme not in _schemes(self._block_private) or not parts.hostname:
            return f"the scheme {parts.scheme!r} is not allowed, or the endpoint has no host"
        return ""

    def _headers(self, parts: SplitResult) -> dict[str, str]:
        return {
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
            "TTL": str(self._ttl_s),
            "Urgency": "normal",
            "Authorization": self._keys.authorization(_origin(parts), self._subject),
        }

    async def _post(self, endpoint: str, parts: SplitResult, body: bytes) -> Sent:
        host = parts.hostname
        try:
            # The whole exchange is bounded: a service answering a byte at a time is cut off.
            async with asyncio.timeout(self._timeout_s * 2):
                request = self._client.stream(
                    "POST", endpoint, content=body, headers=self._headers(parts)
                )
                async with request as response:
                    answer = await _first_bytes(response, _KEPT_ANSWER_BYTES)
        except (TimeoutError, httpx.TimeoutException):
            return Sent(Outcome.RETRY, None, f"the push service at {host} took too long")
        except httpx.HTTPError as error:
            if isinstance(error.__cause__, NotPublic):
                return Sent(Outcome.RETRY, None, f"{host} is not a public address")
            kind = type(error).__name__
            return Sent(Outcome.RETRY, None, f"the push service at {host} is unreachable ({kind})")
        except httpx.InvalidURL:
            return Sent(Outcome.FAILED, None, "the endpoint is not a usable URL")
        return _outcome(response, host, _without_path(answer.decode(errors="replace"), parts))


def _without_path(said: str, parts: SplitResult) -> str:
    """What a push service said, short, and without the endpoint's path should it repeat it."""
    if len(parts.path) > 1:
        said = said.replace(parts.path, "…")
    return " ".join(said.split())[:_SHOWN_ANSWER_CHARS]


async def _first_bytes(response: httpx.Response, limit: int) -> bytes:
    kept = bytearray()
    async for chunk in response.aiter_bytes():
        kept += chunk
        if len(kept) >= limit:
            break
    return bytes(kept[:limit])


def _outcome(response: httpx.Response, host: str | None, said: str) -> Sent:
    status = response.status_code
    answered = f"the push service at {host} answered {status}"
    if said:
        answered += f": {said}"
    if 200 <= status < 300:
        return Sent(Outcome.DELIVERED, status, "delivered")
    if status in (404, 410):
        return Sent(Outcome.GONE, status, answered)
    if status == 429 or status >= 500:
        retry_after = _retry_after_s(response.headers.get("Retry-After"))
        return Sent(Outcome.RETRY, status, answered, retry_after)
    # 400, 401, 403, 413 and the like: the request or the key is at fault, not the moment.
    return Sent(Outcome.FAILED, status, answered)


def _retry_after_s(value: str | None) -> float | None:
    """Seconds to wait, from a Retry-After header: a number of seconds (ASCII digits only), or an
    HTTP date; never more than a day, whatever the push service asks. None when it is neither:
    the sender's own backoff applies."""
    if not value or not value.strip():
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return min(float(value), RETRY_AFTER_AT_MOST_S)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(max(0.0, (when - datetime.now(UTC)).total_seconds()), RETRY_AFTER_AT_MOST_S)
