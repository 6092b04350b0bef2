"""What a person tells Violet is on their memory page, and recalled by other service processes."""

from __future__ import annotations

from pathlib import Path

from tests.support.device import Device
from tests.support.stack import running_stack

SAID = "my cat is called Miso, and I take my coffee with oat milk"


async def test_facts_said_once_are_listed_as_yours_and_recalled_by_a_second_stack(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with running_stack(home, "sqlite") as first:
        device, welcome = await Device.open(first.live_url, first.token("mia"))
        await device.ask(SAID)
        items = await device.memory_page(wanted=2)
        assert {item["origin"] for item in items} == {"you"}
        texts = " ".join(item["text"] for item in items).lower()
        assert "miso" in texts and "oat milk" in texts
        await device.close()

    with running_stack(home, "sqlite") as second:  # new processes, new ports, the same state
        device, again = await Device.open(second.live_url, second.token("mia"))
        assert again["conversation"] == welcome["conversation"]
        answer = await device.ask("what is my cat called?")
        assert "Miso" in answer["text"]
        coffee = await device.ask("what do I take in my coffee?")
        assert "oat milk" in coffee["text"]


async def test_forgetting_a_fact_takes_it_out_of_recall_and_restoring_brings_it_back(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path / "home", "sqlite") as stack:
        device, _ = await Device.open(stack.live_url, stack.token("noor"))
        await device.ask("my sister is called Lina")
        [fact] = await device.memory_page(wanted=1)

        await device.send({"type": "memory.forget", "item": fact["item"]})
        page = await device.until(lambda f: f["type"] == "memory")
        assert page["items"] == []
        forgotten = await device.ask("what is my sister called?")
        assert "Lina" not in forgotten["text"]

        await device.send({"type": "memory.restore", "item": fact["item"]})
        page = await device.until(lambda f: f["type"] == "memory")
        assert [item["item"] for item in page["items"]] == [fact["item"]]
        remembered = await device.ask("what is my sister called?")
        assert "Lina" in remembered["text"]
