"""Memory killed, not stopped, while a person talks: every say is answered meanwhile, and once
memory is back every fact said in its absence is recalled, each remembered once."""

from __future__ import annotations

from tests.integration.test_phone_protocol import person
from tests.support.device import Device
from tests.support.stack import Stack
from tests.support.waiting import eventually_blocking

FACTS = [
    ("My locker number is 4817.", "What is my locker number?", "4817"),
    ("My bike lock code is 5520.", "What is my bike lock code?", "5520"),
    ("My desk number is 311.", "What is my desk number?", "311"),
]


async def test_facts_said_while_memory_is_down_are_recalled_once_it_is_back(stack: Stack) -> None:
    someone = person()
    device, _ = await Device.open(stack.live_url, stack.token(someone))
    memory = stack.processes.pop("memory")
    memory.kill()
    memory.wait()
    try:
        for fact, _, _ in FACTS:
            assert (await device.ask(fact))["text"]  # answered, memory or not
    finally:
        stack.start("memory")

    eventually_blocking(
        lambda: not stack.rows("session", "SELECT 1 FROM owed_captures"),
        "every capture owed delivered",
        timeout_s=60,
    )
    for _, question, value in FACTS:
        assert value in (await device.ask(question))["text"], question
    turns = stack.rows(
        "memory", "SELECT text FROM memory_items WHERE person = :p AND kind = 'turn'", p=someone
    )
    said = [row.text for row in turns]
    assert all(said.count(fact) == 1 for fact, _, _ in FACTS), said
    await device.close()
