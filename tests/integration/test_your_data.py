"""A person's own data over the phone protocol's gateway: the archive at `GET /v1/export`, and
the `account.delete` frame (docs/protocol.md, "Your data")."""

from __future__ import annotations

import io
import json
import uuid
import zipfile

import httpx
import pytest
import websockets

from tests.support.device import Device
from tests.support.stack import Stack
from violet.identity import issue_token

# One stack variant is enough: what is tested here is the gateway's, the same on every store.
pytestmark = pytest.mark.parametrize("stack", ["sqlite-offline"], indirect=True)


def person() -> str:
    return "person-" + uuid.uuid4().hex[:8]


def export(stack: Stack, token: str | None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx.get(stack.http_url + "/v1/export", headers=headers, timeout=60)


async def closed_with(device: Device) -> int | None:
    """The close code, once the gateway has closed the socket."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:
            await device.next()
    return closed.value.rcvd.code if closed.value.rcvd else None


def test_the_archive_refuses_a_missing_wrong_expired_or_foreign_token(stack: Stack) -> None:
    refused = [
        None,
        "not-a-token",
        issue_token("someone", stack.secret, ttl_s=-10),
        issue_token("someone", "a-different-secret-of-enough-length-0123"),
    ]
    for token in refused:
        answer = export(stack, token)
        assert answer.status_code == 401, token
        assert answer.headers["cache-control"] == "no-store"
        assert "sign in again" in answer.json()["error"]


async def test_a_wrong_confirmation_deletes_nothing_and_the_connection_goes_on(
    stack: Stack,
) -> None:
    token = stack.token(person())
    device, _ = await Device.open(stack.live_url, token)
    await device.ask("my cat is called Miso")
    for frame in (
        {"type": "account.delete", "confirmation": "yes"},
        {"type": "account.delete", "confirmation": "delete"},
        {"type": "account.delete"},
    ):
        await device.send(frame)
        refusal = await device.until(lambda f: f["type"] == "error")
        assert refusal["code"] == "bad_frame"
        assert "Nothing was deleted" in refusal["text"] and "delete everything" in refusal["text"]
    assert (await device.ask("Still there?"))["from"] == "violet"
    again, welcome = await Device.open(stack.live_url, token)
    assert welcome["seq"] == 4  # both says and their answers are all still there
    assert export(stack, token).status_code == 200
    await device.close()
    await again.close()


async def test_a_person_takes_their_archive_then_deletes_everything(stack: Stack) -> None:
    token = stack.token(person())
    device, _ = await Device.open(stack.live_url, token)
    other, _ = await Device.open(stack.live_url, token)
    await device.ask("my cat is called Miso")

    answer = export(stack, token)
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/zip"
    assert answer.headers["cache-control"] == "no-store"
    disposition = answer.headers["content-disposition"]
    assert disposition.startswith('attachment; filename="violet-archive-')
    with zipfile.ZipFile(io.BytesIO(answer.content)) as archive:
        assert {"README.md", "data.json", "your-data.md"} <= set(archive.namelist())
        data = json.loads(archive.read("data.json"))
    assert "my cat is called Miso" in json.dumps(data)

    await device.send({"type": "account.delete", "confirmation": "  Delete   EVERYTHING "})
    deleted = await device.until(lambda f: f["type"] != "message", timeout=60)
    assert set(deleted) == {"type", "text"} and deleted["type"] == "account.deleted"
    assert "deleted" in deleted["text"] and "signed out" in deleted["text"]
    assert await closed_with(device) == 4401

    # Every other device is signed out, and the old token is refused everywhere.
    signed_out = await other.until(lambda f: f["type"] == "error", timeout=30)
    assert signed_out["code"] == "unauthorized" and "deleted" in signed_out["text"]
    assert await closed_with(other) == 4401
    late = await Device.connect(stack.live_url)
    await late.send({"type": "hello", "token": token, "since": 0})
    assert (await late.next())["code"] == "unauthorized"
    assert await closed_with(late) == 4401
    assert export(stack, token).status_code == 401
