"""Connections to public addresses only, for requests made to addresses someone else chose.

A page a person asked for, or the push service a browser named: either could point inside the
network Violet runs in. `public_transport()` is an httpx transport that checks where a connection
is opened, on the very addresses the name resolves to, so every redirect and every DNS answer is
checked, and a name cannot answer one address to a check and another to the connection.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable

import httpcore
import httpx

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def is_public(address: str) -> bool:
    """Whether an address is on the public internet, an IPv4 address carried inside an IPv6 one
    (mapped, NAT64, 6to4, Teredo) included."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if not ip.is_global or ip.is_multicast:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        carried = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        if ip in _NAT64:
            carried.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        return all(is_public(str(inner)) for inner in carried if inner is not None)
    return True


class NotPublic(httpcore.ConnectError):
    """A host resolves to an address that is not public."""


class _PublicAddressesOnly(httpcore.AsyncNetworkBackend):
    """Opens connections only to public addresses: resolves the host itself, checks every
    answer, and connects to a checked one."""

    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            answers = await asyncio.get_running_loop().getaddrinfo(
                host, port, type=socket.SOCK_STREAM
            )
        except OSError as error:
            raise httpcore.ConnectError(f"{host} could not be found") from error
        addresses = [str(answer[4][0]) for answer in answers]
        if not addresses or not all(is_public(address) for address in addresses):
            raise NotPublic(host)
        return await self._backend.connect_tcp(
            addresses[0], port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[tuple] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise NotPublic(path)

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def public_transport() -> httpx.AsyncHTTPTransport:
    """An httpx transport that connects to public addresses only (a refused connection raises
    `httpx.ConnectError` caused by `NotPublic`). Give it to a client with `trust_env=False`: a
    proxy's own address would be the only one it sees."""
    transport = httpx.AsyncHTTPTransport()
    # httpx has no setting for the network backend: the pool is made again with ours.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=_PublicAddressesOnly()
    )
    return transport
