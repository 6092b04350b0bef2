from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509

from violet.settings import CommonSettings
from violet.tls import (
    FILES,
    PLAIN,
    MissingCertificates,
    PlainTextRefused,
    is_loopback,
    local_authority,
    transport_of,
)


def settings(tmp_path: Path, **values: object) -> CommonSettings:
    return CommonSettings(home=tmp_path, **values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("127.8.0.2:1", True),
        ("localhost:50051", True),
        ("[::1]:50051", True),
        ("0.0.0.0:50051", False),
        ("10.0.0.7:50051", False),
        ("violet-session:50051", False),
        ("[::]:50051", False),
    ],
)
def test_loopback_is_this_machine_alone(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_plain_text_on_loopback_by_default(tmp_path: Path) -> None:
    assert transport_of(settings(tmp_path), "session") is PLAIN


@pytest.mark.parametrize(
    "beyond",
    [{"memory_addr": "violet-memory:50053"}, {"listen_addr": "0.0.0.0:50051"}],
)
def test_plain_text_beyond_loopback_is_refused_unless_said(
    tmp_path: Path, beyond: dict[str, str]
) -> None:
    with pytest.raises(PlainTextRefused, match="VIOLET_GRPC_TLS=on"):
        transport_of(settings(tmp_path, **beyond), "session")
    assert transport_of(settings(tmp_path, grpc_tls="off", **beyond), "session") is PLAIN


def test_tls_without_its_files_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(MissingCertificates, match="VIOLET_TLS_DIR"):
        transport_of(settings(tmp_path, grpc_tls="on"), "session")


def test_tls_reads_the_party_s_own_folder_or_the_one_given(tmp_path: Path) -> None:
    local_authority(tmp_path)
    own = transport_of(settings(tmp_path, grpc_tls="on"), "worker")
    assert own.certificates is not None
    assert own.certificates.key == (tmp_path / "tls" / "worker" / "tls.key").read_bytes()
    given = settings(tmp_path, grpc_tls="on", tls_dir=tmp_path / "tls" / "memory")
    assert (
        transport_of(given, "worker").certificates.key
        == (  # type: ignore[union-attr]
            tmp_path / "tls" / "memory" / "tls.key"
        ).read_bytes()
    )
    assert own.server_credentials() is not None and own.channel_credentials() is not None


def test_the_local_authority_is_made_once_owner_only_and_kept(tmp_path: Path) -> None:
    folder = local_authority(tmp_path, ["session", "operator"])
    made = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    assert {path.name for path in made} >= {*FILES, "ca.key"}
    assert all(path.stat().st_mode & 0o077 == 0 for path in made)
    assert local_authority(tmp_path, ["session", "operator"]) == folder
    assert {path: path.read_bytes() for path in made} == made


def test_a_missing_file_makes_the_authority_again_whole(tmp_path: Path) -> None:
    folder = local_authority(tmp_path, ["session", "operator"])
    before = (folder / "ca.crt").read_bytes()
    (folder / "operator" / "tls.key").unlink()
    local_authority(tmp_path, ["session", "operator"])
    assert (folder / "operator" / "tls.key").is_file()
    assert (folder / "ca.crt").read_bytes() != before
    assert (folder / "session" / "ca.crt").read_bytes() == (folder / "ca.crt").read_bytes()


def test_a_certificate_names_its_party_and_loopback(tmp_path: Path) -> None:
    folder = local_authority(tmp_path, ["memory"])
    certificate = x509.load_pem_x509_certificate((folder / "memory" / "tls.crt").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == {"memory", "localhost"}
    assert {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    authority = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
    certificate.verify_directly_issued_by(authority)
