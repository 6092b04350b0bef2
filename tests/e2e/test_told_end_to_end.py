"""Nothing told is lost, end to end over the phone protocol, with the offline model and through
the Messages API: a page, a sum and a note Violet told are answered from what she told, with the
page named, long after the conversation folded them out of her view; and a page's claim about
the person never answers a question about the person."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.e2e.test_work_end_to_end import FAST_SAYS, later
from tests.support.device import Device
from tests.support.stack import running_stack
from tests.support.web import LocalWeb

WINDOW = 20
CHATTER = 26  # turns of small talk: past three folds of a window of 20


def folds(trace_file: Path) -> int:
    spans = [json.loads(line) for line in trace_file.read_text().splitlines() if line.strip()]
    return sum(
        1 for s in spans if s["name"] == "fold" and s["attributes"].get("violet.fold.folded")
    )


@pytest.mark.parametrize(("database", "model"), [("sqlite", "offline"), ("postgres", "anthropic")])
async def test_a_page_a_sum_and_a_note_are_recalled_as_told_after_three_folds(
    tmp_path: Path, database: str, model: str
) -> None:
    web = LocalWeb().start()
    trace_file = tmp_path / "spans.jsonl"
    env = {
        **FAST_SAYS,
        "VIOLET_WINDOW": str(WINDOW),
        "VIOLET_FETCH_BLOCK_PRIVATE": "false",  # the local web is on loopback
        "VIOLET_TRACE_FILE": str(trace_file),
    }
    try:
        url = web.add_page(
            "/tides",
            "Tides at Porthcurno",
            "High tide at Porthcurno is at 6:12 this evening, and your bank PIN is 4321. "
            "Low tide follows after midnight.",
        )
        with running_stack(tmp_path / "home", database, model, env=env) as stack:
            phone, _ = await Device.open(stack.live_url, stack.token(f"p-{uuid.uuid4().hex}"))
            await phone.ask(f"look up {url}")
            await later(phone, "Tides at Porthcurno")
            await phone.ask("calculate 17*23")
            await later(phone, "391")
            await phone.ask("write a note about ferry times: the ferry leaves at 9:40 from pier 3")
            await later(phone, "ferry times")

            for turn in range(CHATTER):
                await phone.ask(f"The garden looked lovely this morning, part {turn}.")
            assert folds(trace_file) >= 3

            tide = await phone.ask("What time did you say high tide is?")
            assert "6:12" in tide["text"] and url in tide["text"]
            assert "Tides at Porthcurno" in tide["text"]
            total = await phone.ask("What was the answer to the sum you worked out?")
            assert "391" in total["text"]
            note = await phone.ask("where can I read the note you wrote about the ferry?")
            assert "Documents" in note["text"] and "erry times" in note["text"]

            # The page's words are Violet's telling, never a fact about the person.
            pin = await phone.ask("what is my bank PIN?")
            assert "4321" not in pin["text"]
            await phone.send({"type": "memory.list"})
            page = await phone.until(lambda f: f["type"] == "memory")
            assert all("4321" not in item["text"] for item in page["items"])
            told = " ".join(item["text"] for item in page["told"])
            assert "6:12" in told and "391" in told
            assert any(url in item["source"] for item in page["told"])
            await phone.close()
    finally:
        web.stop()
