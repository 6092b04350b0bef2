"""The gateway's HTTP face: the phone protocol's websocket, the health check, the web page for
trying Violet in a browser with its sign-in through the identity provider, and the download of
a person's archive."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute

from gateway.archive import ArchiveDownload
from gateway.limits import PersonLimiter, SaysInFlight
from gateway.live import LiveEndpoint
from gateway.page_signin import PageSignIn
from gateway.settings import GatewaySettings
from gateway.signin import SignIn, issuer_from
from violet.channels import Peers
from violet.identity import resolve_secret
from violet.language import LANGUAGES

# The services a device's requests need: the conversation and the memory page. The documents
# (which the worker keeps) are not among them: while the worker is away, the conversation goes
# on and only the documents answer `unavailable`.
NEEDED = ("session", "memory")
REACHED = (*NEEDED, "worker")
HEALTH_TIMEOUT_S = 2.0

PAGE_DIR = Path(__file__).with_name("page")
PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
    # What a phone needs to keep the page on its home screen and open it with no connection.
    "/manifest.webmanifest": ("manifest.webmanifest", "application/manifest+json"),
    # Served from the root, so that it may look after every address of the page.
    "/sw.js": ("sw.js", "text/javascript; charset=utf-8"),
    "/icons/icon-192.png": ("icons/icon-192.png", "image/png"),
    "/icons/icon-512.png": ("icons/icon-512.png", "image/png"),
    "/icons/maskable-512.png": ("icons/maskable-512.png", "image/png"),
    "/icons/apple-touch-icon.png": ("icons/apple-touch-icon.png", "image/png"),
    # The small white shape Android shows beside a notice in the status bar.
    "/icons/badge-96.png": ("icons/badge-96.png", "image/png"),
    # The page's words, a file for each language Violet speaks.
    **{
        f"/words/{language}.json": (f"words/{language}.json", "application/json; charset=utf-8")
        for language in LANGUAGES
    },
}
# A Host header that is a plain host[:port], safe to name in the page's policy.
PLAIN_HOST = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


async def _serving(peers: Peers, service: str) -> bool:
    stub = health_pb2_grpc.HealthStub(peers.channel(service))
    try:
        # The health package's stubs declare no client methods.
        answer: health_pb2.HealthCheckResponse = await stub.Check(  # type: ignore[attr-defined]
            health_pb2.HealthCheckRequest(), timeout=HEALTH_TIMEOUT_S
        )
    except grpc.aio.AioRpcError:
        return False
    return answer.status == health_pb2.HealthCheckResponse.SERVING


def page_policy(host: str) -> str:
    """The page loads only its own files (its manifest and its offline helper too) and talks
    only to its own websocket."""
    # Some browsers do not count ws:// and wss:// as 'self', so the websocket is named outright.
    websocket = f" ws://{host} wss://{host}" if PLAIN_HOST.fullmatch(host) else ""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        f"connect-src 'self'{websocket}; manifest-src 'self'; worker-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


async def page_file(request: Request) -> Response:
    name, media_type = PAGE_FILES[request.url.path]
    return FileResponse(
        PAGE_DIR / name,
        media_type=media_type,
        headers={
            "Content-Security-Policy": page_policy(request.headers.get("host", "")),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        },
    )


def create_app(settings: GatewaySettings, peers: Peers) -> Starlette:
    secret = resolve_secret(settings.secret, settings.home)
    issuer_client = httpx.AsyncClient(follow_redirects=False)
    issuer = issuer_from(settings, issuer_client)
    # The archive's download checks its bearer token exactly as the hello checks its token.
    sign_in = SignIn(secret, issuer)
    live = LiveEndpoint(
        peers,
        secret,
        (
            PersonLimiter.per_minute(settings.says_per_minute, settings.say_burst),
            SaysInFlight(settings.says_in_flight),
        ),
        settings.hello_timeout_s,
        sign_in,
    )
    archive = ArchiveDownload(peers, secret, sign_in)
    page_sign_in = PageSignIn(issuer, settings.oidc_client_secret)

    async def healthz(_: Request) -> JSONResponse:
        states = await asyncio.gather(*(_serving(peers, name) for name in NEEDED))
        status = {name: "up" if up else "down" for name, up in zip(NEEDED, states, strict=True)}
        return JSONResponse(status, status_code=200 if all(states) else 503)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await issuer_client.aclose()
        await peers.close()

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            WebSocketRoute("/v1/live", live.serve),
            Route("/v1/export", archive.export, methods=["GET"]),
            *(Route(path, page_file) for path in PAGE_FILES),
            *page_sign_in.routes(),
        ],
        lifespan=lifespan,
    )
