"""Internal gRPC over TLS, both ends showing a certificate of the stack's own authority.

`VIOLET_GRPC_TLS` says how the services speak to one another:
- `on`: every service serves TLS and asks each caller for a client certificate signed by the
  stack's authority; every call is made the same way. A plain-text caller, or one without such
  a certificate, is refused before any method runs. The chart's default.
- `loopback` (the default): plain text, but only while every gRPC address is on this
  machine's loopback, where nothing crosses a network (the local stack, whose
  `grpcurl -plaintext` CONTRACTS.md section 2 promises). A service told to listen on or call
  any other address refuses to start.
- `off`: plain text on any address, only because the operator said so.

A service's certificates are three PEM files in one folder (`VIOLET_TLS_DIR`, default
`VIOLET_HOME/tls/NAME`): `ca.crt`, `tls.crt` and `tls.key`, the layout of a Kubernetes TLS
Secret made by cert-manager. `make run` makes a local authority and a certificate per service
(`local_authority`), so `VIOLET_GRPC_TLS=on make run` works as it is.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from violet.identity import SERVICES
from violet.settings import CommonSettings

MODES = ("on", "loopback", "off")
FILES = ("ca.crt", "tls.crt", "tls.key")
# Who the local authority certifies: the four servers, the gateway (a caller only) and the
# operator's CLI.
LOCAL_NAMES = (*SERVICES, "gateway", "operator")
LOCAL_VALID_DAYS = 365
RENEW_WITHIN_DAYS = 30


class PlainTextRefused(SystemExit):
    """Plain text would cross a network without the operator asking for it."""


class MissingCertificates(SystemExit):
    """TLS is on, but the service's certificate files are not where it looks."""


@dataclass(frozen=True)
class Certificates:
    """One party's PEM files: the authority it trusts, its certificate and its key."""

    authority: bytes
    certificate: bytes
    key: bytes

    @classmethod
    def read(cls, folder: Path) -> Certificates:
        missing = [name for name in FILES if not (folder / name).is_file()]
        if missing:
            raise MissingCertificates(
                f"TLS is on (VIOLET_GRPC_TLS=on) but {', '.join(missing)} is missing in "
                f"{folder}: set VIOLET_TLS_DIR to the folder of ca.crt, tls.crt and tls.key"
            )
        authority, certificate, key = ((folder / name).read_bytes() for name in FILES)
        return cls(authority, certificate, key)


@dataclass(frozen=True)
class Transport:
    """How one party of the stack serves and calls: `certificates` None means plain text."""

    certificates: Certificates | None

    def server_credentials(self) -> grpc.ServerCredentials | None:
        if self.certificates is None:
            return None
        return grpc.ssl_server_credentials(
            [(self.certificates.key, self.certificates.certificate)],
            root_certificates=self.certificates.authority,
            require_client_auth=True,
        )

    def channel_credentials(self) -> grpc.ChannelCredentials | None:
        if self.certificates is None:
            return None
        return grpc.ssl_channel_credentials(
            root_certificates=self.certificates.authority,
            private_key=self.certificates.key,
            certificate_chain=self.certificates.certificate,
        )


PLAIN = Transport(None)


def transport_of(settings: CommonSettings, name: str) -> Transport:
    """How `name` (a service, or `operator` for the CLI) speaks to the others, as the settings
    say; refuses plain text that would leave the machine unasked."""
    if settings.grpc_tls == "on":
        return Transport(Certificates.read(settings.tls_dir or settings.home / "tls" / name))
    if settings.grpc_tls == "loopback":
        addresses = [settings.address_of(service) for service in SERVICES]
        if settings.listen_addr:
            addresses.append(settings.listen_addr)
        beyond = [address for address in addresses if not is_loopback(address)]
        if beyond:
            raise PlainTextRefused(
                f"{name} would speak plain text to {', '.join(beyond)}, beyond this machine: "
                "set VIOLET_GRPC_TLS=on (with certificates, docs/security.md), or "
                "VIOLET_GRPC_TLS=off to allow plain text on a network you trust"
            )
    return PLAIN


def is_loopback(address: str) -> bool:
    """Whether `host:port` names this machine's loopback."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_authority(home: Path, names: Iterable[str] = LOCAL_NAMES) -> Path:
    """A local authority and a certificate for each of `names`, in `home/tls/NAME`, each valid
    for the loopback addresses and its own name. Made once and kept; made again, whole, when
    any file is missing or a certificate is within a month of its end. Returns `home/tls`."""
    names = tuple(names)
    folder = home / "tls"
    if _usable(folder, names):
        return folder
    aside = home / f".tls.{os.getpid()}.{secrets.token_hex(4)}"
    _write_authority(aside, names)
    old = home / f".tls-old.{os.getpid()}.{secrets.token_hex(4)}"
    if folder.exists():
        folder.rename(old)
    try:
        aside.rename(folder)
    except OSError:
        # Another process put its own in place at the same moment: theirs is as good.
        shutil.rmtree(aside, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    return folder


def _usable(folder: Path, names: tuple[str, ...]) -> bool:
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=RENEW_WITHIN_DAYS)
    for name in names:
        if not all((folder / name / file).is_file() for file in FILES):
            return False
        certificate = x509.load_pem_x509_certificate((folder / name / "tls.crt").read_bytes())
        if certificate.not_valid_after_utc < soon:
            return False
    return True


def _write_authority(folder: Path, names: tuple[str, ...]) -> None:
    folder.mkdir(mode=0o700, parents=True)
    now = datetime.datetime.now(datetime.UTC)
    authority_key = ec.generate_private_key(ec.SECP256R1())
    authority_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Violet local authority")])
    authority = (
        _valid_from(now, authority_name, authority_name, authority_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(signs=True), critical=True)
        .sign(authority_key, hashes.SHA256())
    )
    authority_pem = authority.public_bytes(serialization.Encoding.PEM)
    for name in names:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        certificate = (
            _valid_from(now, subject, authority_name, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(signs=False), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.DNSName(name),
                        x509.DNSName("localhost"),
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                        x509.IPAddress(ipaddress.ip_address("::1")),
                    ]
                ),
                critical=False,
            )
            .sign(authority_key, hashes.SHA256())
        )
        own = folder / name
        own.mkdir(mode=0o700)
        _owner_only(own / "ca.crt", authority_pem)
        _owner_only(own / "tls.crt", certificate.public_bytes(serialization.Encoding.PEM))
        _owner_only(own / "tls.key", _pem_key(key))
    # The authority's key stays beside them, so the operator can certify one more party.
    _owner_only(folder / "ca.crt", authority_pem)
    _owner_only(folder / "ca.key", _pem_key(authority_key))


def _valid_from(
    now: datetime.datetime, subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=LOCAL_VALID_DAYS))
    )


def _usage(signs: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not signs,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs,
        crl_sign=signs,
        encipher_only=False,
        decipher_only=False,
    )


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _owner_only(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
