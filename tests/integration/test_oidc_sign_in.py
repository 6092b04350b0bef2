"""A device signs in with a token from an OpenID Connect issuer, over the real websocket of a
stack whose gateway trusts a local issuer, while local tokens keep working beside it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.allowlist import NOT_ALLOWED_TEXT
from gateway.oidc import issued_person
from tests.conftest import running_stack
from tests.support.device import Device
from tests.support.oidc import AUDIENCE, DOMAIN, LocalIssuer
from tests.support.stack import Stack


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    with LocalIssuer() as local_issuer:
        yield local_issuer


@pytest.fixture(scope="module")
def signed_in_stack(
    issuer: LocalIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    env = {
        "VIOLET_OIDC_ISSUER": issuer.url,
        "VIOLET_OIDC_AUDIENCE": AUDIENCE,
        "VIOLET_OIDC_ALLOW": f"@{DOMAIN}",
    }
    home: Path = tmp_path_factory.mktemp("violet-oidc")
    with running_stack(home, "sqlite", env=env) as stack:
        yield stack


async def test_a_device_signs_in_with_the_issuers_token_and_gets_its_conversation(
    signed_in_stack: Stack, issuer: LocalIssuer
) -> None:
    token = issuer.token("oidc-person-1", kind="ec")
    device, welcome = await Device.open(signed_in_stack.live_url, token)
    message_id = await device.say("Hello Violet, I signed in through my company.")
    answer = await device.answer_to(message_id)
    assert answer["from"] == "violet" and answer["text"]
    await device.close()

    again, second_welcome = await Device.open(
        signed_in_stack.live_url, issuer.token("oidc-person-1")
    )
    assert second_welcome["conversation"] == welcome["conversation"]
    assert second_welcome["seq"] == answer["seq"]
    await again.close()


async def test_the_issuers_person_is_never_a_local_person_of_the_same_name(
    signed_in_stack: Stack, issuer: LocalIssuer
) -> None:
    _, issued = await Device.open(signed_in_stack.live_url, issuer.token("same-name"))
    _, local = await Device.open(signed_in_stack.live_url, signed_in_stack.token("same-name"))
    assert issued["conversation"] != local["conversation"]


@pytest.mark.parametrize(
    "claims",
    [{"aud": "another-client"}, {"exp": int(time.time()) - 3600}],
    ids=["audience", "expired"],
)
async def test_a_refused_issuer_token_gets_the_plain_unauthorized_error(
    signed_in_stack: Stack, issuer: LocalIssuer, claims: dict
) -> None:
    device = await Device.connect(signed_in_stack.live_url)
    await device.send({"type": "hello", "token": issuer.token("intruder", **claims), "since": 0})
    refusal = await device.next()
    assert refusal == {
        "type": "error",
        "code": "unauthorized",
        "text": "That sign-in has expired or is not valid. Please sign in again.",
    }


async def test_a_person_the_operator_does_not_let_in_is_told_so_and_nothing_of_theirs_is_made(
    signed_in_stack: Stack, issuer: LocalIssuer
) -> None:
    stranger = issuer.token("stranger", email="stranger@gmail.example")
    device = await Device.connect(signed_in_stack.live_url)
    await device.send({"type": "hello", "token": stranger, "since": 0})
    assert await device.next() == {
        "type": "error",
        "code": "unauthorized",
        "text": NOT_ALLOWED_TEXT,
    }
    person = issued_person(issuer.url, "stranger")
    for table in ("conversations", "devices", "pseudonym_keys"):
        made = signed_in_stack.rows("session", f"SELECT 1 FROM {table} WHERE person = :p", p=person)
        assert made == [], table
    unverified = issuer.token("stranger", email_verified=False)  # an address of the domain
    device = await Device.connect(signed_in_stack.live_url)
    await device.send({"type": "hello", "token": unverified, "since": 0})
    assert (await device.next())["text"] == NOT_ALLOWED_TEXT
