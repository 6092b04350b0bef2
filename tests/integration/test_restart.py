"""State lives in the database: restarting the session service loses nothing."""

from __future__ import annotations

from tests.integration.test_phone_protocol import person
from tests.support.device import Device
from tests.support.stack import Stack


async def test_a_restart_of_the_session_service_loses_nothing(stack: Stack) -> None:
    token = stack.token(person())
    device, welcome = await Device.open(stack.live_url, token)
    await device.ask("Before the restart")
    await device.close()

    stack.stop("session")
    stack.start("session")

    again, after = await Device.open(stack.live_url, token)
    assert after["conversation"] == welcome["conversation"]
    assert [(await again.next())["text"] for _ in range(2)][0] == "Before the restart"
    answer = await again.ask("After the restart")
    assert answer["seq"] == 4


async def test_a_device_connected_through_a_restart_keeps_receiving(stack: Stack) -> None:
    token = stack.token(person())
    device, _ = await Device.open(stack.live_url, token)
    await device.ask("First")
    stack.stop("session")
    stack.start("session")
    answer = await device.ask("Second")
    assert answer["seq"] == 4
