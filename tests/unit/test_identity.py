from __future__ import annotations

import time

import jwt
import pytest

from violet import identity
from violet.identity import (
    SERVICE_TOKEN_TTL_S,
    Unauthorized,
    issue_internal_token,
    issue_token,
    resolve_operator_secret,
    resolve_secret,
    service_identity,
    verify_internal_token,
    verify_token,
)

SECRET = "a-test-secret-that-is-long-enough-for-hs256"
OTHER = "another-test-secret-long-enough-for-hs256!"


def test_a_token_names_its_person() -> None:
    assert verify_token(issue_token("ana", SECRET), SECRET).person == "ana"


def test_a_token_signed_with_another_secret_is_refused() -> None:
    with pytest.raises(Unauthorized):
        verify_token(issue_token("ana", SECRET), OTHER)


def test_an_expired_token_is_refused() -> None:
    with pytest.raises(Unauthorized):
        verify_token(issue_token("ana", SECRET, ttl_s=-1), SECRET)


def test_an_empty_name_gets_no_token() -> None:
    with pytest.raises(ValueError):
        issue_token("  ", SECRET)


def test_the_local_secret_is_made_once_and_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = resolve_secret("", tmp_path)
    assert first and resolve_secret("", tmp_path) == first
    assert resolve_secret("given", tmp_path) == "given"


def test_the_operator_secret_is_its_own_and_kept_owner_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    stack = resolve_secret("", tmp_path)
    operator = resolve_operator_secret("", tmp_path)
    assert operator and operator != stack
    assert resolve_operator_secret("", tmp_path) == operator
    assert (tmp_path / identity.OPERATOR_SECRET_FILE).stat().st_mode & 0o077 == 0


def test_an_internal_token_names_its_person_and_is_refused_as_a_device_token() -> None:
    internal = issue_internal_token("ana", SECRET)
    assert verify_internal_token(internal, SECRET).person == "ana"
    assert verify_internal_token(service_identity("ana", SECRET).token, SECRET).person == "ana"
    with pytest.raises(Unauthorized):
        verify_token(internal, SECRET)


def test_a_device_token_is_refused_as_an_internal_token() -> None:
    with pytest.raises(Unauthorized):
        verify_internal_token(issue_token("ana", SECRET), SECRET)


def test_an_internal_token_of_another_stack_or_expired_is_refused() -> None:
    with pytest.raises(Unauthorized):
        verify_internal_token(issue_internal_token("ana", OTHER), SECRET)
    with pytest.raises(Unauthorized):
        verify_internal_token(issue_internal_token("ana", SECRET, ttl_s=-1), SECRET)


def test_a_checked_token_is_refused_once_it_expires() -> None:
    token = issue_token("ana", SECRET, ttl_s=1)
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert verify_token(token, SECRET).person == "ana"  # checked, and kept
    assert verify_token(token, SECRET).person == "ana"
    while time.time() < expires:
        time.sleep(0.05)
    with pytest.raises(Unauthorized):
        verify_token(token, SECRET)
    with pytest.raises(Unauthorized):  # kept for one key and audience, not for another
        verify_internal_token(issue_token("bo", SECRET, ttl_s=600), SECRET)


def test_a_person_keeps_one_internal_token_for_half_its_lifetime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = service_identity("cy", SECRET).token
    assert service_identity("cy", SECRET).token == first
    assert service_identity("dee", SECRET).token != first
    assert service_identity("cy", OTHER).token != first
    later = time.time() + SERVICE_TOKEN_TTL_S / 2 + 1
    monkeypatch.setattr(identity.time, "time", lambda: later)
    renewed = service_identity("cy", SECRET).token
    assert renewed != first
    assert jwt.decode(renewed, options={"verify_signature": False})["sub"] == "cy"


def test_a_token_is_addressed_to_the_one_service_called() -> None:
    unaddressed = service_identity("ana", SECRET).metadata()
    assert not identity.addressed_to(unaddressed, "memory")
    metadata = identity.addressed([*unaddressed, ("traceparent", "00-x")], "memory", SECRET)
    assert identity.addressed_to(metadata, "memory")
    assert not identity.addressed_to(metadata, "worker")
    assert ("traceparent", "00-x") in metadata
    [(_, bearer)] = [pair for pair in metadata if pair[0] == "authorization"]
    assert verify_internal_token(bearer.removeprefix("Bearer "), SECRET).person == "ana"


def test_what_is_no_internal_token_is_left_for_the_service_to_judge() -> None:
    device = (("authorization", f"Bearer {issue_token('ana', SECRET)}"),)
    assert identity.addressed(device, "memory", SECRET) == list(device)
    assert identity.addressed_to(device, "memory")  # `authenticate` refuses it there
    garbage = (("authorization", "Bearer not-a-token"),)
    assert identity.addressed_to(garbage, "memory")
    assert identity.addressed_to(None, "memory")


def test_the_operators_internal_token_is_for_every_service() -> None:
    token = (("authorization", f"Bearer {issue_internal_token('ana', SECRET)}"),)
    assert all(identity.addressed_to(token, service) for service in identity.SERVICES)
