"""Web Push, sending side: notices encrypted and signed as browsers' push services expect, what
their answers mean, and the checks on what a browser hands over; against a local push service."""

from __future__ import annotations

import asyncio
import logging
import socket
import stat
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.push_service import LocalPushService
from violet.push import (
    MAX_PAYLOAD_BYTES,
    SHORTENED,
    UNUSABLE_ADDRESS,
    UNUSABLE_DETAILS,
    VAPID_FILE,
    VAPID_TOKEN_TTL_S,
    WEB_PUSH,
    BadEndpoint,
    Notice,
    Outcome,
    PushAddress,
    Pusher,
    VapidKeys,
    WebPusher,
    b64url,
    check_endpoint,
    check_keys,
    from_b64url,
    resolve_vapid,
)

SUBJECT = "mailto:operator@example.com"
NOTICE = Notice(title="Violet", body="Your shopping list is ready.", seq=42, tag="conversation-42")


@pytest.fixture(scope="module")
def service() -> Iterator[LocalPushService]:
    with LocalPushService() as started:
        yield started


@pytest.fixture(scope="module")
def keys() -> VapidKeys:
    return VapidKeys.generate()


@pytest.fixture
async def pusher(keys: VapidKeys) -> AsyncIterator[Pusher]:
    sender = WebPusher(keys, SUBJECT, block_private=False)
    yield sender
    await sender.aclose()


@pytest.fixture
async def guarded(keys: VapidKeys) -> AsyncIterator[Pusher]:
    sender = WebPusher(keys, SUBJECT, block_private=True, timeout_s=2.0)
    yield sender
    await sender.aclose()


@pytest.fixture(autouse=True)
def no_rejected_pushes(service: LocalPushService) -> Iterator[None]:
    before = len(service.rejections())
    yield
    assert service.rejections()[before:] == []


def address_of(subscription: dict[str, str]) -> PushAddress:
    return PushAddress(WEB_PUSH, **subscription)


def fake_dns(monkeypatch: pytest.MonkeyPatch, answers: dict[str, str]) -> None:
    """Names resolve to the addresses given; any other name cannot be found."""

    async def getaddrinfo(host: str, port: int, *_: Any, **__: Any) -> list[Any]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "not found")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)


# --- Sending ----------------------------------------------------------------------------------


async def test_a_notice_arrives_decrypted_as_it_was_sent(
    service: LocalPushService, pusher: Pusher
) -> None:
    subscription = service.subscription("phone")
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.status) == (Outcome.DELIVERED, 201)
    [received] = await service.wait_for(1)
    assert received.endpoint == subscription["endpoint"]
    assert received.notice == asdict(NOTICE)
    assert received.headers["urgency"] == "normal"
    assert received.headers["ttl"] == "86400"
    assert received.headers["content-type"] == "application/octet-stream"


async def test_the_vapid_token_is_signed_with_our_key_for_the_push_services_origin(
    service: LocalPushService, pusher: Pusher, keys: VapidKeys
) -> None:
    await pusher.push(address_of(service.subscription("vapid")), NOTICE)
    [received] = service.received("vapid")
    scheme, _, params = received.headers["authorization"].partition(" ")
    token, key = (part.split("=", 1)[1] for part in params.split(", "))
    assert (scheme, key) == ("vapid", keys.public_key_b64)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), from_b64url(key))
    claims = jwt.decode(token, public, algorithms=["ES256"], audience=service.origin)
    assert claims["sub"] == SUBJECT
    expected_exp = datetime.now(UTC).timestamp() + VAPID_TOKEN_TTL_S
    assert abs(claims["exp"] - expected_exp) < 60


@pytest.mark.parametrize("forged", ["signature", "audience"])
async def test_the_local_push_service_refuses_a_token_that_does_not_verify(
    keys: VapidKeys, forged: str
) -> None:
    with LocalPushService() as strict:  # its own: these rejections are on purpose
        endpoint = strict.subscription("forged")["endpoint"]
        if forged == "signature":  # signed by another key than the one it names
            token = VapidKeys.generate().authorization(strict.origin, SUBJECT).split(",")[0]
            header = f"{token}, k={keys.public_key_b64}"
        else:
            header = keys.authorization("https://push.example.com", SUBJECT)
        async with httpx.AsyncClient() as client:
            answer = await client.post(
                endpoint,
                content=b"x" * 100,
                headers={"Authorization": header, "Content-Encoding": "aes128gcm", "TTL": "60"},
            )
        assert answer.status_code == 400
        assert "does not verify" in answer.text
        assert [rejection.endpoint for rejection in strict.rejections()] == [endpoint]
        assert strict.received() == []


@pytest.mark.parametrize(
    "body",
    [
        "Your work session finished.",
        "Done: conversation c_9f8e7d6c5b4a",
        "Trace 4bf92f3577b34da6a3ce929d0e0e4736",
    ],
)
async def test_the_local_push_service_refuses_a_notice_showing_an_internal_word_or_id(
    pusher: Pusher, body: str
) -> None:
    with LocalPushService() as strict:  # its own: these rejections are on purpose
        subscription = strict.subscription("leaky")
        sent = await pusher.push(address_of(subscription), Notice("Violet", body, 1, "t"))
        assert sent.outcome is Outcome.FAILED
        assert len(strict.rejections()) == 1 and strict.received() == []


async def test_a_long_body_is_shortened_to_fit_one_push(
    service: LocalPushService, pusher: Pusher
) -> None:
    for i, long_body in enumerate(['He said "no". ' * 600, "Café crème, s'il vous plaît. " * 400]):
        hint = f"long-{i}"
        notice = Notice("Violet", long_body, 7, "t")
        sent = await pusher.push(address_of(service.subscription(hint)), notice)
        assert sent.outcome is Outcome.DELIVERED
        [received] = service.received(hint)
        body = received.notice["body"]
        assert body.endswith(SHORTENED)
        assert long_body.startswith(body.removesuffix(SHORTENED))
        # Shortened to the limit, not far below it.
        assert MAX_PAYLOAD_BYTES - 16 <= received.body_bytes <= MAX_PAYLOAD_BYTES


async def test_a_notice_too_large_even_shortened_is_not_sent(
    service: LocalPushService, pusher: Pusher
) -> None:
    sent = await pusher.push(
        address_of(service.subscription("huge")), Notice("T" * 5000, "body", 1, "t")
    )
    assert sent.outcome is Outcome.FAILED
    assert "too large" in sent.reason
    assert service.received("huge") == []


# --- What the push service's answers mean -----------------------------------------------------


async def test_an_unsubscribed_browser_is_gone(
    service: LocalPushService, pusher: Pusher, caplog: pytest.LogCaptureFixture
) -> None:
    subscription = service.subscription("gone")
    service.gone(subscription["endpoint"])
    with caplog.at_level(logging.WARNING, logger="violet.push"):
        sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.status) == (Outcome.GONE, 410)
    # One line, naming the host; the endpoint's path is a capability and never logged.
    [line] = [record.getMessage() for record in caplog.records]
    assert "127.0.0.1" in line
    assert subscription["endpoint"].rsplit("/", 1)[1] not in line


async def test_an_unknown_endpoint_is_gone(service: LocalPushService, pusher: Pusher) -> None:
    subscription = service.subscription("unknown")
    unknown = {**subscription, "endpoint": subscription["endpoint"] + "-unknown"}
    sent = await pusher.push(address_of(unknown), NOTICE)
    assert (sent.outcome, sent.status) == (Outcome.GONE, 404)


@pytest.mark.parametrize(
    ("status", "retry_after", "outcome", "wait_s"),
    [(500, None, Outcome.RETRY, None), (429, "120", Outcome.RETRY, 120.0),
     (503, "in a while", Outcome.RETRY, None), (413, None, Outcome.FAILED, None),
     (403, None, Outcome.FAILED, None), (400, None, Outcome.FAILED, None)],
)  # fmt: skip
async def test_a_push_service_in_trouble_means_retry_and_a_refusal_means_failed(
    service: LocalPushService,
    pusher: Pusher,
    status: int,
    retry_after: str | None,
    outcome: Outcome,
    wait_s: float | None,
) -> None:
    subscription = service.subscription(f"fails-{status}")
    service.fail_next(subscription["endpoint"], status, retry_after)
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.status, sent.retry_after_s) == (outcome, status, wait_s)
    assert str(status) in sent.reason
    again = await pusher.push(address_of(subscription), NOTICE)  # the trouble has passed
    assert again.outcome is Outcome.DELIVERED


async def test_retry_after_may_be_a_date(service: LocalPushService, pusher: Pusher) -> None:
    subscription = service.subscription("date")
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    service.fail_next(subscription["endpoint"], 503, later)
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert sent.outcome is Outcome.RETRY
    assert sent.retry_after_s is not None and 80 <= sent.retry_after_s <= 90


@pytest.mark.parametrize(
    ("retry_after", "wait_s"),
    [
        ("²", None),  # a digit to Python, a number to nobody
        ("-1", None),
        ("1.5", None),
        ("99999999999999", 86_400.0),  # a day at most
        ("Fri, 01 Jan 2099 00:00:00 GMT", 86_400.0),
        ("Mon, 01 Jan 2001 00:00:00 GMT", 0.0),
        ("Mon, 99 Zzz 2001 99:99:99 GMT", None),
    ],
)
async def test_a_retry_after_is_read_within_bounds_and_never_raises(
    service: LocalPushService, pusher: Pusher, retry_after: str, wait_s: float | None
) -> None:
    subscription = service.subscription("odd-retry-after")
    service.fail_next(subscription["endpoint"], 503, retry_after)
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.retry_after_s) == (Outcome.RETRY, wait_s)


async def test_a_dead_push_service_means_retry(service: LocalPushService, pusher: Pusher) -> None:
    subscription = {**service.subscription("dead"), "endpoint": "http://127.0.0.1:9/push/dead"}
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.status) == (Outcome.RETRY, None)
    assert "unreachable" in sent.reason


async def test_an_address_of_another_kind_is_refused(
    service: LocalPushService, pusher: Pusher
) -> None:
    subscription = service.subscription("apns")
    sent = await pusher.push(PushAddress("apns", **subscription), NOTICE)
    assert sent.outcome is Outcome.FAILED
    assert service.received("apns") == []


async def test_an_endpoint_that_does_not_parse_fails_without_a_crash(
    service: LocalPushService, pusher: Pusher
) -> None:
    subscription = {**service.subscription("unparsed"), "endpoint": "http://127.0.0.1:99999/x"}
    sent = await pusher.push(address_of(subscription), NOTICE)
    assert (sent.outcome, sent.reason) == (Outcome.FAILED, "the endpoint is not a URL")


# --- Private addresses ------------------------------------------------------------------------


async def test_a_guarded_pusher_never_connects_to_a_private_address(
    service: LocalPushService, guarded: Pusher
) -> None:
    subscription = service.subscription("inside")
    https = {**subscription, "endpoint": subscription["endpoint"].replace("http:", "https:")}
    sent = await guarded.push(address_of(https), NOTICE)
    assert (sent.outcome, sent.status) == (Outcome.RETRY, None)
    assert sent.reason == "127.0.0.1 is not a public address"
    plain = await guarded.push(address_of(subscription), NOTICE)  # http is refused outright
    assert plain.outcome is Outcome.FAILED
    assert service.received("inside") == []


@pytest.mark.parametrize(
    "url",
    ["http://push.example.com/x", "https://localhost/x", "https://push.localhost/x",
     "https://127.0.0.1/x", "https://10.1.2.3/x", "https://169.254.169.254/latest",
     "https://[::1]/x", "https://[::ffff:127.0.0.1]/x", "https://user:pw@fcm.googleapis.com/x",
     "https://fcm.googleapis.com/" + "a" * 1024, "https:///no-host", "ftp://fcm.googleapis.com/x",
     "https://fcm.googleapis.com:99999/x", "https://fcm.googleapis.com/a b",
     "https://inside.example.com/x", "https://nowhere.example.com/x"],
)  # fmt: skip
async def test_an_endpoint_that_is_not_public_https_is_refused_in_plain_words(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    fake_dns(
        monkeypatch, {"fcm.googleapis.com": "142.250.74.106", "inside.example.com": "10.0.0.7"}
    )
    with pytest.raises(BadEndpoint) as refused:
        await check_endpoint(url, block_private=True)
    assert str(refused.value) == UNUSABLE_ADDRESS
    assert refused.value.detail


async def test_a_public_https_endpoint_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dns(monkeypatch, {"fcm.googleapis.com": "142.250.74.106"})
    url = "https://fcm.googleapis.com/fcm/send/abc"
    assert await check_endpoint(url, block_private=True) == url


async def test_without_blocking_a_local_http_endpoint_is_accepted_unresolved() -> None:
    url = "http://127.0.0.1:8080/push/abc"
    assert await check_endpoint(url, block_private=False) == url
    with pytest.raises(BadEndpoint):
        await check_endpoint("http://user@127.0.0.1:8080/push/abc", block_private=False)


def test_a_browsers_keys_are_checked(service: LocalPushService) -> None:
    subscription = service.subscription("keys")
    point, secret = check_keys(subscription["p256dh"], subscription["auth"])
    assert (len(point), len(secret)) == (65, 16)
    not_on_the_curve = b64url(b"\x04" + b"\x01" * 64)
    for p256dh, auth in [
        ("not base64!", subscription["auth"]),
        (subscription["p256dh"][:44], subscription["auth"]),  # cut short
        (not_on_the_curve, subscription["auth"]),
        (subscription["p256dh"], subscription["auth"][:11]),  # 8 bytes
    ]:
        with pytest.raises(BadEndpoint, match=UNUSABLE_DETAILS):
            check_keys(p256dh, auth)


# --- VAPID keys -------------------------------------------------------------------------------


def test_vapid_keys_survive_their_pem() -> None:
    keys = VapidKeys.generate()
    again = VapidKeys.from_pem(keys.pem())
    assert again.public_key_b64 == keys.public_key_b64
    point = from_b64url(keys.public_key_b64)
    assert (len(point), point[0]) == (65, 0x04)
    assert "PRIVATE" not in repr(keys)


def test_a_key_on_another_curve_is_not_a_vapid_key() -> None:
    other = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with pytest.raises(ValueError, match="P-256"):
        VapidKeys.from_pem(other.decode())


def test_the_vapid_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = resolve_vapid("", home)
    kept = (home / VAPID_FILE).read_text()
    assert stat.S_IMODE((home / VAPID_FILE).stat().st_mode) == 0o600
    assert resolve_vapid("", home).public_key_b64 == first.public_key_b64
    assert (home / VAPID_FILE).read_text() == kept
    configured = VapidKeys.generate()
    chosen = resolve_vapid(configured.pem(), tmp_path / "elsewhere")
    assert chosen.public_key_b64 == configured.public_key_b64
    assert not (tmp_path / "elsewhere").exists()
