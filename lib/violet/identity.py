"""Who a call is for: signed bearer tokens of two kinds, never accepted for one another.

A device token is what a phone holds (`violet token NAME`); only the gateway accepts it. An
internal token is what services send one another, naming the person the call is made for;
internal services accept only these, so a phone can never call an internal method. Internal
tokens are signed with a key derived from the stack's secret and carry their own audience, so
neither kind passes where the other is expected. Each also names the services it is for: a
service's calls carry a token for the one service called (`addressed`), and a service refuses
a token not addressed to it (`violet.server.AddressedTo`), so a token seen by one service opens
no other. Operator tokens are signed with a secret of their own, which only the session service
and the operator hold: a gateway or worker taken over holds the stack's secret but cannot make
one. The person is read only from a token: never from a request body or from anything a model
wrote.

People who sign in through an OpenID Connect issuer (the gateway's `gateway.oidc`) are named
with the `ISSUED_PERSON_PREFIX`; a device token is never made for such a name, so the two kinds
of person can never be mistaken for one another.

The person a call or a piece of background work is for is also the one every database
transaction of it names (`acting_for`); PostgreSQL's row-level security shows that person's rows
and no one else's.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import jwt

from violet.secret_files import made_once

ALGORITHM = "HS256"
ISSUER = "violet"
INTERNAL_AUDIENCE = "violet-internal"
# The services internal tokens are addressed to (each checks its own name among the audiences).
SERVICES = ("session", "router", "memory", "worker")
OPERATOR_AUDIENCE = "violet-operator"
OPERATOR = "operator"
DEVICE_TOKEN_TTL_S = 90 * 24 * 3600
SERVICE_TOKEN_TTL_S = 15 * 60
OPERATOR_TOKEN_TTL_S = 60 * 60
METADATA_KEY = "authorization"
ISSUED_PERSON_PREFIX = "oidc:"
OPERATOR_SECRET_FILE = "operator-secret"
_INTERNAL_KEY_LABEL = b"violet internal service tokens"
_OPERATOR_KEY_LABEL = b"violet operator tokens"

# What the session answers (UNAUTHENTICATED) a call for a person it may no longer serve: the
# whole account deleted (or being deleted), or only the asking device signed out.
ACCOUNT_DELETED = "signed out: this account was deleted"
DEVICE_SIGNED_OUT = "signed out: this device was signed out"

# Who the running call or task works for; empty: nobody, and no person's rows are visible.
_person: ContextVar[str] = ContextVar("violet_person", default="")


def current_person() -> str:
    return _person.get()


@contextmanager
def acting_for(person: str) -> Iterator[None]:
    """Work for `person` until the block ends (a task started inside inherits the person)."""
    token = _person.set(person)
    try:
        yield
    finally:
        _person.reset(token)


class Unauthorized(Exception):
    """The token is missing, malformed, of the wrong kind, signed with another secret, or
    expired."""


@dataclass(frozen=True)
class Identity:
    person: str
    token: str

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return ((METADATA_KEY, f"Bearer {self.token}"),)


def resolve_secret(configured: str, home: Path) -> str:
    """The configured secret, or the one kept in `home` (made once, on first use)."""
    if configured:
        return configured
    return made_once(home / "secret", lambda: secrets.token_urlsafe(32)).strip()


def resolve_operator_secret(configured: str, home: Path) -> str:
    """The secret operator tokens are signed with: the configured one, or the one kept in
    `home` (made once). Never the stack's secret, which every service holds."""
    if configured:
        return configured
    return made_once(home / OPERATOR_SECRET_FILE, lambda: secrets.token_urlsafe(32)).strip()


# Derived once per secret: every call served checks a token against this key.
@functools.lru_cache(maxsize=4)
def _internal_key(secret: str) -> str:
    return hmac.new(secret.encode(), _INTERNAL_KEY_LABEL, hashlib.sha256).hexdigest()


@functools.lru_cache(maxsize=4)
def _operator_key(operator_secret: str) -> str:
    return hmac.new(operator_secret.encode(), _OPERATOR_KEY_LABEL, hashlib.sha256).hexdigest()


def _claims(person: str, ttl_s: int) -> dict[str, Any]:
    if not person or not person.strip():
        raise ValueError("A person's name cannot be empty.")
    now = int(time.time())
    return {"sub": person, "iss": ISSUER, "iat": now, "exp": now + ttl_s}


def issue_token(person: str, secret: str, ttl_s: int = DEVICE_TOKEN_TTL_S) -> str:
    """A device token: what a phone says hello with."""
    if is_issued_person(person):
        raise ValueError(
            f"Names starting with {ISSUED_PERSON_PREFIX!r} belong to signed-in people."
        )
    return jwt.encode(_claims(person, ttl_s), secret, algorithm=ALGORITHM)


def is_issued_person(person: str) -> bool:
    """Whether `person` names someone signed in through an OpenID Connect issuer."""
    return person.startswith(ISSUED_PERSON_PREFIX)


class _Kept:
    """A bounded map that forgets the entry used longest ago; safe across threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


# Signing and checking a token cost more CPU than the rest of a small call. A token is
# immutable and names its own expiry, so both are kept: a checked token (by token, key and
# audience) until its expiry, a signed internal token (by person) for half its lifetime.
_checked = _Kept(4096)
_signed = _Kept(4096)


def service_audience(service: str) -> str:
    return f"{INTERNAL_AUDIENCE}:{service}"


def issue_internal_token(
    person: str,
    secret: str,
    ttl_s: int = SERVICE_TOKEN_TTL_S,
    services: tuple[str, ...] = SERVICES,
) -> str:
    """An internal token for `person`, addressed to `services` (every one by default, as the
    operator's `violet token --internal` makes it; none: good for no service until addressed)."""
    audience = [INTERNAL_AUDIENCE, *(service_audience(service) for service in services)]
    claims = {**_claims(person, ttl_s), "aud": audience}
    return jwt.encode(claims, _internal_key(secret), algorithm=ALGORITHM)


def issue_operator_token(operator_secret: str, ttl_s: int = OPERATOR_TOKEN_TTL_S) -> str:
    """An operator token: what `violet person ...`, `violet usage` and `violet keys rotate`
    send. No service issues one; only someone holding the operator secret can."""
    claims = {**_claims(OPERATOR, ttl_s), "aud": OPERATOR_AUDIENCE}
    return jwt.encode(claims, _operator_key(operator_secret), algorithm=ALGORITHM)


def _verify(token: str, key: str, audience: str | None) -> Identity:
    kept = _checked.get((token, key, audience))
    if kept is not None and time.time() < kept[1]:
        return Identity(person=kept[0], token=token)
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            audience=audience,
            options={"require": ["sub", "exp"]},
        )
    except jwt.PyJWTError as error:
        raise Unauthorized(str(error)) from None
    _checked.put((token, key, audience), (claims["sub"], claims["exp"]))
    return Identity(person=claims["sub"], token=token)


def verify_token(token: str, secret: str) -> Identity:
    """The person of a device token; an internal token is refused here."""
    return _verify(token, secret, audience=None)


def verify_internal_token(token: str, secret: str) -> Identity:
    """The person of an internal token; a device token is refused here."""
    return _verify(token, _internal_key(secret), audience=INTERNAL_AUDIENCE)


def _bearer(key: str, value: str | bytes) -> str | None:
    """The token of a metadata pair that is a bearer token; None for any other pair."""
    if key == METADATA_KEY and isinstance(value, str) and value.startswith("Bearer "):
        return value.removeprefix("Bearer ")
    return None


async def authenticate(context: grpc.aio.ServicerContext, secret: str) -> Identity:
    """The person an internal call is for, from its internal bearer token; aborts the call
    otherwise (a device token included). The rest of the call acts for that person (each call
    runs in its own task, so the person ends with it)."""
    for key, value in context.invocation_metadata() or ():
        token = _bearer(key, value)
        if token is None:
            continue
        try:
            identity = verify_internal_token(token, secret)
            _person.set(identity.person)
            return identity
        except Unauthorized as error:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"not an internal token: {error}")
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the call carries no bearer token")
    raise AssertionError("abort returns only by raising")


async def authenticate_operator(context: grpc.aio.ServicerContext, operator_secret: str) -> None:
    """Aborts the call unless it carries an operator token signed with `operator_secret` (a
    person's token of either kind, or one made from the stack's secret, is refused). The call
    then acts for nobody until it names a person itself."""
    for key, value in context.invocation_metadata() or ():
        token = _bearer(key, value)
        if token is None:
            continue
        try:
            _verify(token, _operator_key(operator_secret), OPERATOR_AUDIENCE)
            return
        except Unauthorized as error:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"not an operator token: {error}"
            )
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the call carries no bearer token")


def service_identity(person: str, secret: str, service: str = "") -> Identity:
    """The person's internal identity, for a call a service makes on their behalf, its token
    addressed to `service` (none: the channel to the service called addresses it, `Peers`): one
    token per person and service, signed again once half its lifetime has passed."""
    kept = _signed.get((person, secret, service))
    if kept is not None and time.time() < kept[1]:
        return Identity(person, kept[0])
    token = issue_internal_token(person, secret, services=(service,) if service else ())
    _signed.put((person, secret, service), (token, time.time() + SERVICE_TOKEN_TTL_S / 2))
    return Identity(person, token)


def addressed(metadata: Sequence[tuple[str, str | bytes]], service: str, secret: str) -> list:
    """The call's metadata with its internal token, if it has one, addressed to `service`
    alone; any other bearer (a device or operator token) is left as it is, for the service to
    refuse or take."""
    found: list = []
    for key, value in metadata:
        token = _bearer(key, value)
        try:
            person = verify_internal_token(token, secret).person if token else None
        except Unauthorized:
            person = None
        if person is None:
            found.append((key, value))
        else:
            found.extend(service_identity(person, secret, service).metadata())
    return found


def addressed_to(metadata: Sequence[tuple[str, str | bytes]] | None, service: str) -> bool:
    """Whether every internal token among the call's metadata names `service` among its
    audiences. The signature is not checked here: `authenticate` checks it, on the same token,
    before anything is done for the call."""
    for key, value in metadata or ():
        token = _bearer(key, value)
        if token is None:
            continue
        try:
            audience = jwt.decode(token, options={"verify_signature": False}).get("aud")
        except jwt.PyJWTError:
            continue  # not a token at all: `authenticate` refuses it
        audiences = audience if isinstance(audience, list) else [audience]
        if INTERNAL_AUDIENCE in audiences and service_audience(service) not in audiences:
            return False
    return True
