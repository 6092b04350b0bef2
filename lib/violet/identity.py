"""Who a call is for: signed bearer tokens, carried from the device to every service.

The person is read only from a token signed with the stack's secret: never from a request body
or from anything a model wrote. Services forward the person's token in the `authorization`
metadata; work that runs after its turn carries a short-lived token minted for the same person.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import jwt

ALGORITHM = "HS256"
ISSUER = "violet"
DEVICE_TOKEN_TTL_S = 90 * 24 * 3600
SERVICE_TOKEN_TTL_S = 15 * 60
METADATA_KEY = "authorization"


class Unauthorized(Exception):
    """The token is missing, malformed, signed with another secret, or expired."""


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
    path = home / "secret"
    if path.exists():
        return path.read_text().strip()
    home.mkdir(parents=True, exist_ok=True)
    candidate = secrets.token_urlsafe(32)
    try:
        with path.open("x") as file:  # two services starting at once agree on one secret
            file.write(candidate)
        path.chmod(0o600)
    except FileExistsError:
        pass
    return path.read_text().strip()


def issue_token(person: str, secret: str, ttl_s: int = DEVICE_TOKEN_TTL_S) -> str:
    if not person or not person.strip():
        raise ValueError("A person's name cannot be empty.")
    now = int(time.time())
    claims = {"sub": person, "iss": ISSUER, "iat": now, "exp": now + ttl_s}
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def verify_token(token: str, secret: str) -> Identity:
    try:
        claims = jwt.decode(
            token,
            secret,
            algorithms=[ALGORITHM],
            issuer=ISSUER,
            options={"require": ["sub", "exp"]},
        )
    except jwt.PyJWTError as error:
        raise Unauthorized(str(error)) from None
    return Identity(person=claims["sub"], token=token)


async def authenticate(context: grpc.aio.ServicerContext, secret: str) -> Identity:
    """The person a gRPC call is for, from its bearer token; aborts the call otherwise."""
    for key, value in context.invocation_metadata() or ():
        if key == METADATA_KEY and value.startswith("Bearer "):
            try:
                return verify_token(value.removeprefix("Bearer "), secret)
            except Unauthorized as error:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, f"bad token: {error}")
    await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the call carries no bearer token")
    raise AssertionError("abort returns only by raising")


def service_identity(person: str, secret: str) -> Identity:
    """The person's identity for work a service does on their behalf after their own call."""
    return Identity(person, issue_token(person, secret, SERVICE_TOKEN_TTL_S))
