"""`python -m gateway` serves the phone protocol and the health check."""

from __future__ import annotations

import asyncio

import uvicorn

from gateway.app import REACHED, create_app
from gateway.settings import GatewaySettings
from violet.channels import peers_of
from violet.logs import setup_logging
from violet.server import command_line, settle_heap
from violet.settings import load_settings
from violet.telemetry import setup_telemetry, shutdown_telemetry

NAME = "gateway"
# Past the protocol's 64 KiB, so an oversized frame gets a plain `bad_frame`, not a dropped socket.
WS_MAX_BYTES = 1024 * 1024


def main() -> None:
    command_line(NAME, commands=(), migrates=False).parse_args()
    settings = load_settings(GatewaySettings)
    setup_logging(NAME, settings.log_level, settings.log_format)
    peers = peers_of(settings, NAME, REACHED)
    host, _, port = settings.bind_address(NAME).rpartition(":")
    config = uvicorn.Config(
        create_app(settings, peers),
        host=host,
        port=int(port),
        ws_max_size=WS_MAX_BYTES,
        log_config=None,
        timeout_graceful_shutdown=int(settings.drain_s),
        lifespan="on",
    )
    setup_telemetry(NAME)
    settle_heap()  # the app is built: what serving adds is all the collector need look at
    try:
        asyncio.run(uvicorn.Server(config).serve())
    finally:
        shutdown_telemetry()


if __name__ == "__main__":
    main()
