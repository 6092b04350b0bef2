"""Client side of the service mesh: one channel per peer, a deadline on every unary call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc

from violet.identity import addressed, resolve_secret
from violet.settings import CommonSettings
from violet.telemetry import client_interceptors
from violet.tls import transport_of

# Clients ping every connection, busy or idle, so a long Follow stream or a pooled channel
# notices a vanished peer. Servers must welcome those pings: a server that allows fewer counts
# each one as a strike and, after two, sends GOAWAY `too_many_pings`, failing the next calls.
KEEPALIVE_TIME_MS = 30_000
KEEPALIVE_TIMEOUT_MS = 10_000
CHANNEL_OPTIONS = [
    ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
    ("grpc.keepalive_permit_without_calls", 1),
]
# What every server accepts: pings on idle connections, as often as twice the clients' rate.
SERVER_KEEPALIVE_OPTIONS = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_TIME_MS // 2),
]


class _Patient(grpc.aio.UnaryUnaryClientInterceptor):
    """A deadline on every call, and waiting out a peer's restart within it instead of failing."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    async def intercept_unary_unary(
        self,
        continuation: Callable[
            [grpc.aio.ClientCallDetails, Any], Awaitable[grpc.aio.UnaryUnaryCall[Any, Any]]
        ],
        client_call_details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> grpc.aio.UnaryUnaryCall[Any, Any]:
        # The details are a namedtuple at run time; the stubs declare a plain class.
        if client_call_details.timeout is None:
            client_call_details = client_call_details._replace(timeout=self.timeout_s)  # type: ignore[attr-defined]
        if client_call_details.wait_for_ready is None:
            client_call_details = client_call_details._replace(wait_for_ready=True)  # type: ignore[attr-defined]
        return await continuation(client_call_details, request)


class _Addressing:
    """Each call's internal token addressed to the one service the channel reaches, so that a
    token seen by that service opens no other (`violet.identity.addressed`)."""

    def __init__(self, service: str, secret: str) -> None:
        self._service = service
        self._secret = secret

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        if not details.metadata:
            return details
        pairs = addressed(list(details.metadata), self._service, self._secret)
        # The details are a namedtuple at run time; the stubs declare a plain class.
        return details._replace(metadata=grpc.aio.Metadata(*pairs))  # type: ignore[attr-defined]


# One object each: a channel files an interceptor under the first kind of call it serves.
class _AddressedUnary(_Addressing, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(self._details(client_call_details), request)


class _AddressedStream(_Addressing, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(self._details(client_call_details), request)


def open_channel(
    address: str,
    timeout_s: float,
    credentials: grpc.ChannelCredentials | None = None,
    addressed_to: tuple[str, str] | None = None,
) -> grpc.aio.Channel:
    """A channel whose unary calls time out after `timeout_s` unless the caller says otherwise;
    over TLS with `credentials` (violet.tls), else plain text. With `addressed_to` (the service
    reached, and the stack's secret), every internal token is addressed to that service."""
    interceptors: list[Any] = [_Patient(timeout_s), *client_interceptors()]
    if addressed_to is not None:
        interceptors += [_AddressedUnary(*addressed_to), _AddressedStream(*addressed_to)]
    return channel_to(address, credentials, options=CHANNEL_OPTIONS, interceptors=interceptors)


def channel_to(
    address: str, credentials: grpc.ChannelCredentials | None, **options: Any
) -> grpc.aio.Channel:
    """A channel over TLS with `credentials` (`violet.tls`), else in plain text."""
    if credentials is None:
        return grpc.aio.insecure_channel(address, **options)
    return grpc.aio.secure_channel(address, credentials, **options)


Stub = TypeVar("Stub")


class Peers:
    """Stubs for the services one service talks to, opened on first use and closed together."""

    def __init__(
        self,
        addresses: dict[str, str],
        timeout_s: float,
        credentials: grpc.ChannelCredentials | None = None,
        secret: str = "",
    ) -> None:
        """With the stack's `secret`, each call's internal token is addressed to the service
        it reaches."""
        self._addresses = addresses
        self._timeout_s = timeout_s
        self._credentials = credentials
        self._secret = secret
        self._channels: dict[str, grpc.aio.Channel] = {}
        # A stub builds a callable per method of its service (through every interceptor):
        # made once per channel, not once per call.
        self._stubs: dict[tuple[str, Callable[[grpc.aio.Channel], Any]], Any] = {}

    def channel(self, service: str) -> grpc.aio.Channel:
        if service not in self._channels:
            self._channels[service] = open_channel(
                self._addresses[service],
                self._timeout_s,
                self._credentials,
                (service, self._secret) if self._secret else None,
            )
        return self._channels[service]

    def stub(self, service: str, stub_class: Callable[[grpc.aio.Channel], Stub]) -> Stub:
        key = (service, stub_class)
        if key not in self._stubs:
            self._stubs[key] = stub_class(self.channel(service))
        stub: Stub = self._stubs[key]
        return stub

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
        self._stubs.clear()


def peers_of(settings: CommonSettings, name: str, services: Iterable[str]) -> Peers:
    """The peers `name` calls, at the addresses the settings give, as `VIOLET_GRPC_TLS` says."""
    return Peers(
        {service: settings.address_of(service) for service in services},
        settings.rpc_timeout_s,
        transport_of(settings, name).channel_credentials(),
        resolve_secret(settings.secret, settings.home),
    )
