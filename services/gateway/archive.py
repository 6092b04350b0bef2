"""`GET /v1/export`: the person's whole archive (a zip the session makes as it sends it), for the
device token the websocket's hello takes, sent as a bearer token.

The answer waits for the archive's first piece, so that a refusal still gets its own status
(401, or 503 while part of Violet can't be reached); after that the archive streams through as
it comes and is never held here whole. A stream that breaks later breaks the download too,
rather than ending as if the file were whole.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import grpc
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from gateway.limits import EXPORTS_PER_HOUR, PersonLimiter
from gateway.live import device_digest, issued_at, signed_out_phrase
from gateway.oidc import IssuerUnreachable
from gateway.signin import SignIn
from violet.channels import Peers
from violet.clock import Clock, utc_now
from violet.identity import Unauthorized, service_identity
from violet.language import ENGLISH, phrase
from violet.v1 import persons_pb2, persons_pb2_grpc

log = logging.getLogger(__name__)

NOT_SIGNED_IN = "That sign-in has expired or is not valid. Please sign in again."
AWAY = "Your data can't be gathered right now. Please try again in a few minutes."
SIGN_IN_AWAY = "Violet can't check your sign-in right now. Please try again in a moment."
TOO_MANY = "You've downloaded your data several times in the last hour. Please try again later."

Call = grpc.aio.UnaryStreamCall[persons_pb2.ExportArchiveRequest, persons_pb2.ArchiveChunk]


def _problem(text: str, status: int) -> JSONResponse:
    headers = {"Cache-Control": "no-store"}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": text}, status_code=status, headers=headers)


def bearer(request: Request) -> str:
    """The token of an `Authorization: Bearer ...` header, or ""."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def _rest(first: bytes, call: Call) -> AsyncIterator[bytes]:
    """The archive from its first piece on; the call is cancelled if the download stops."""
    try:
        yield first
        while isinstance(chunk := await call.read(), persons_pb2.ArchiveChunk):
            yield chunk.data
    except grpc.aio.AioRpcError as error:
        log.warning("an export broke off", extra={"code": error.code().name})
        raise  # the connection is cut: a half archive never looks whole
    finally:
        call.cancel()


class ArchiveDownload:
    def __init__(self, peers: Peers, secret: str, sign_in: SignIn, clock: Clock = utc_now) -> None:
        self._peers = peers
        self._secret = secret
        self._sign_in = sign_in
        self._clock = clock
        self._exports = PersonLimiter.per_hour(EXPORTS_PER_HOUR)

    async def export(self, request: Request) -> Response:
        token = bearer(request)
        try:
            person = await self._sign_in.person(token)
        except Unauthorized:
            return _problem(NOT_SIGNED_IN, 401)
        except IssuerUnreachable as error:
            log.warning("a sign-in could not be checked", extra={"error": str(error)})
            return _problem(SIGN_IN_AWAY, 503)
        if not self._exports.allow(person):
            return _problem(TOO_MANY, 429)
        stub = self._peers.stub("session", persons_pb2_grpc.YourDataStub)
        call: Call = stub.Export(
            persons_pb2.ExportArchiveRequest(
                signed_in_at_unix=issued_at(token), device=device_digest(token)
            ),
            metadata=service_identity(person, self._secret).metadata(),
        )
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as error:
            return self._refused(error)
        if not isinstance(first, persons_pb2.ArchiveChunk):
            log.warning("an export ended before it began")
            return _problem(AWAY, 503)
        return StreamingResponse(
            _rest(first.data, call),
            media_type="application/zip",
            headers={
                "Content-Disposition": f'attachment; filename="{self.file_name()}"',
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
            },
        )

    def file_name(self) -> str:
        return f"violet-archive-{self._clock().date().isoformat()}.zip"

    def _refused(self, error: grpc.aio.AioRpcError) -> Response:
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            # Deleted, or this device signed out, since this sign-in.
            return _problem(phrase(signed_out_phrase(error), ENGLISH), 401)
        log.warning("an export could not begin", extra={"code": error.code().name})
        return _problem(AWAY, 503)
