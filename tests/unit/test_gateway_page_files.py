"""The web page's own files as the gateway serves them: each with its kind and the page's
policy, the manifest naming icons that are there at the sizes it says, and the offline helper
(`sw.js`) keeping exactly these files, but itself."""

from __future__ import annotations

import json
import re
import struct

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from gateway.app import PAGE_DIR, PAGE_FILES, page_file

HOST = "violet.test"


async def test_every_file_is_served_as_its_kind_under_the_page_s_policy() -> None:
    app = Starlette(routes=[Route(route, page_file) for route in PAGE_FILES])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=f"http://{HOST}"
    ) as client:
        for path, (name, kind) in PAGE_FILES.items():
            answer = await client.get(path)
            assert answer.status_code == 200, path
            assert answer.headers["content-type"] == kind
            assert answer.content == (PAGE_DIR / name).read_bytes()
            assert answer.headers["cache-control"] == "no-cache"
            policy = answer.headers["content-security-policy"]
            assert "default-src 'none'" in policy
            assert "manifest-src 'self'" in policy and "worker-src 'self'" in policy
            assert f"ws://{HOST}" in policy


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_manifest_names_icons_that_are_served_at_the_sizes_it_says() -> None:
    manifest = json.loads((PAGE_DIR / "manifest.webmanifest").read_text())
    for icon in manifest["icons"]:
        assert icon["src"] in PAGE_FILES and icon["type"] == "image/png"
        width, height = png_size((PAGE_DIR / PAGE_FILES[icon["src"]][0]).read_bytes())
        assert icon["sizes"] == f"{width}x{height}"
    apple = (PAGE_DIR / PAGE_FILES["/icons/apple-touch-icon.png"][0]).read_bytes()
    assert png_size(apple) == (180, 180)


def test_the_offline_helper_keeps_exactly_the_page_s_own_files() -> None:
    helper = (PAGE_DIR / "sw.js").read_text()
    listed = re.search(r"const SHELL = \[(.*?)\];", helper, re.S)
    assert listed
    # The helper itself is the browser's to keep and to check for a new version.
    assert set(re.findall(r'"([^"]+)"', listed[1])) == set(PAGE_FILES) - {"/sw.js"}
