"""`violet check-model` as an operator runs it: each check told on its own line, against the
local Messages API that keeps the configured models' documented rules."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.messages_api import MessagesAPIProcess

VIOLET = str(Path(sys.executable).parent / "violet")


def check_model(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("VIOLET_", "ANTHROPIC_"))}
    return subprocess.run(
        [VIOLET, "check-model"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def api() -> Iterator[MessagesAPIProcess]:
    with MessagesAPIProcess(api_key="sk-ant-right-key-1234") as server:
        yield server


def test_every_check_passes_with_a_good_key(api: MessagesAPIProcess) -> None:
    done = check_model(ANTHROPIC_API_KEY="sk-ant-right-key-1234", ANTHROPIC_BASE_URL=api.url)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines[0] == f"Checking {api.url} with the key ending in …1234"
    assert lines[1] == "ok     the key was accepted"
    assert [line.split(":")[0] for line in lines[2:6]] == [
        "ok     claude-opus-5-5 answers the conversation (streamed)",
        "ok     claude-opus-5-5 does background work with its tools (streamed)",
        "ok     claude-haiku-5-5 gives a structured answer",
        "ok     the prompt cache is written and then read",
    ]
    assert lines[-1] == "Every check passed."
    assert "sk-ant-right" not in done.stdout + done.stderr


def test_a_refused_key_is_named_and_nothing_else_is_tried(api: MessagesAPIProcess) -> None:
    done = check_model(ANTHROPIC_API_KEY="sk-ant-wrong-key-9999", ANTHROPIC_BASE_URL=api.url)
    assert done.returncode == 1
    [_, refused, skipped] = done.stdout.splitlines()
    assert refused.startswith("FAILED claude-opus-5-5 answers the conversation (streamed): ")
    assert "the key was refused" in refused and "HTTP 401" in refused
    assert skipped == "The other checks need an accepted key; they were not run."


def test_a_model_that_is_not_there_is_named_on_its_own_line(api: MessagesAPIProcess) -> None:
    done = check_model(
        ANTHROPIC_API_KEY="sk-ant-right-key-1234",
        ANTHROPIC_BASE_URL=api.url,
        VIOLET_FAST_MODEL="claude-haiku-9-9",
    )
    assert done.returncode == 1
    [failed] = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    assert failed.startswith("FAILED claude-haiku-9-9 gives a structured answer: ")
    assert "the model was not found" in failed
    assert done.stdout.splitlines()[-1] == "1 of 4 checks failed."


def test_without_a_network_it_says_so_in_one_line() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{probe.getsockname()[1]}"
    done = check_model(ANTHROPIC_API_KEY="sk-ant-any-key-0000", ANTHROPIC_BASE_URL=nowhere)
    assert done.returncode == 2
    assert done.stdout.splitlines()[1:] == [
        f"Cannot reach {nowhere}: no network connection to the Anthropic API from here."
    ]


def test_without_a_key_there_is_nothing_to_check() -> None:
    done = check_model(ANTHROPIC_API_KEY="")
    assert done.returncode == 2
    assert done.stdout.strip() == (
        "No ANTHROPIC_API_KEY is set: Violet runs on its offline model; nothing to check."
    )
