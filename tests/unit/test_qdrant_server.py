"""A Qdrant server as operators run it: an API key, TLS, a timeout per call, and a plain error
that names the server when it cannot be used. No Qdrant server runs here, so the server is a
small HTTPS stand-in that answers the first call a store makes (the server's version)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.ci import unavailable
from violet.settings import SettingsError, VectorSettings, load_settings
from violet.vectors import VectorStoreError, open_vector_store, qdrant_client_for
from violet_cli.run import free_port

API_KEY = "the-right-key"
DIMENSION = 4


@dataclass
class StandIn:
    url: str
    certificate: Path
    keys_seen: list[str | None] = field(default_factory=list)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not shutil.which("openssl"):
        unavailable("openssl is not installed (apt-get install openssl)")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def server(certificate: tuple[Path, Path]) -> Iterator[StandIn]:
    """Answers GET / with its version when the request carries the API key, else 401."""
    cert, key = certificate
    stand_in = StandIn("", cert)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            stand_in.keys_seen.append(self.headers.get("api-key"))
            if self.headers.get("api-key") == API_KEY:
                self.answer(200, {"title": "qdrant - vector search engine", "version": "1.20.0"})
            else:
                self.answer(401, {"status": {"error": "Must provide an API key"}})

        def answer(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    stand_in.url = f"https://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield stand_in
    finally:
        httpd.shutdown()
        httpd.server_close()


def settings(tmp_path: Path, **values: object) -> VectorSettings:
    return VectorSettings(home=tmp_path, **values)  # type: ignore[arg-type]


async def test_the_api_key_travels_over_tls_checked_against_the_ca_file(
    server: StandIn, tmp_path: Path
) -> None:
    chosen = settings(
        tmp_path, qdrant_url=server.url, qdrant_api_key=API_KEY, qdrant_ca_file=server.certificate
    )
    client = qdrant_client_for(chosen)
    try:
        assert (await client.info()).version == "1.20.0"
    finally:
        await client.close()
    assert server.keys_seen == [API_KEY]


async def test_a_refused_api_key_is_said_plainly(server: StandIn, tmp_path: Path) -> None:
    chosen = settings(
        tmp_path, qdrant_url=server.url, qdrant_api_key="wrong", qdrant_ca_file=server.certificate
    )
    with pytest.raises(VectorStoreError) as refused:
        await open_vector_store(chosen, DIMENSION, "memory")
    assert str(refused.value) == (
        f"The Qdrant server at {server.url} refused the API key (HTTP 401): check "
        "VIOLET_QDRANT_API_KEY."
    )


async def test_a_certificate_nobody_vouches_for_is_refused(server: StandIn, tmp_path: Path) -> None:
    chosen = settings(tmp_path, qdrant_url=server.url, qdrant_api_key=API_KEY)
    with pytest.raises(VectorStoreError, match="certificate verify failed") as refused:
        await open_vector_store(chosen, DIMENSION, "memory")
    assert str(refused.value).startswith(f"The Qdrant server at {server.url} cannot be reached")
    assert server.keys_seen == []  # the key never left over an unchecked connection


async def test_an_unreachable_server_is_named_in_a_plain_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(VectorStoreError) as unreachable:
        await open_vector_store(settings(tmp_path, qdrant_url=url), DIMENSION, "memory")
    assert str(unreachable.value).startswith(
        f"The Qdrant server at {url} cannot be reached (Connection refused)."
    )
    assert str(unreachable.value).endswith(
        "Check VIOLET_QDRANT_URL, that the server runs, and that this service may reach it."
    )


async def test_a_server_that_does_not_answer_is_given_up_after_the_timeout(
    tmp_path: Path,
) -> None:
    with socket.socket() as silent:  # takes connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        chosen = settings(tmp_path, qdrant_url=url, qdrant_timeout_s=1)
        with pytest.raises(VectorStoreError) as silence:
            await open_vector_store(chosen, DIMENSION, "memory")
    assert f"at {url} cannot be reached (no answer within VIOLET_QDRANT_TIMEOUT_S)" in str(
        silence.value
    )


def test_a_service_that_cannot_reach_qdrant_stops_with_one_plain_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIOLET_", "OTEL_"))}
    env.update(
        VIOLET_HOME=str(tmp_path),
        VIOLET_QDRANT_URL=url,
        VIOLET_ROUTER_ADDR=f"127.0.0.1:{free_port()}",
        VIOLET_LOG_FORMAT="json",
    )
    finished = subprocess.run(
        [sys.executable, "-m", "router"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 1
    assert "Traceback" not in finished.stderr
    last = finished.stderr.strip().splitlines()[-1]
    assert last.startswith(f"router cannot start: The Qdrant server at {url} cannot be reached")


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"VIOLET_QDRANT_URL": "qdrant:6333"}, "VIOLET_QDRANT_URL"),
        ({"VIOLET_QDRANT_URL": "http://qdrant:6333", "VIOLET_QDRANT_CA_FILE": "{ca}"}, "CA_FILE"),
        (
            {"VIOLET_QDRANT_URL": "https://q:6333", "VIOLET_QDRANT_CA_FILE": "/no/such.pem"},
            "CA_FILE",
        ),
        ({"VIOLET_QDRANT_TIMEOUT_S": "0"}, "VIOLET_QDRANT_TIMEOUT_S"),
    ],
    ids=["no-scheme", "ca-without-https", "missing-ca-file", "no-time"],
)
def test_qdrant_settings_that_cannot_work_stop_the_start(
    env: dict[str, str],
    variable: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "ca.pem").write_text("")
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(ca=tmp_path / "ca.pem"))
    with pytest.raises(SettingsError):
        load_settings(VectorSettings)
    assert variable in capsys.readouterr().err
