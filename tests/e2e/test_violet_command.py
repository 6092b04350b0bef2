"""The `violet` command as a person uses it: `run` until ready, `token`, `chat`, Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import websockets
from websockets.sync.client import connect

from tests.support.stack import SERVICES
from tests.support.waiting import eventually_blocking
from violet_cli.run import free_port
from worker.folders import folder_name

VIOLET = str(Path(sys.executable).parent / "violet")


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIOLET_", "ANTHROPIC_"))}
    env.update({f"VIOLET_{name.upper()}_ADDR": f"127.0.0.1:{free_port()}" for name in SERVICES})
    env["VIOLET_HOME"] = str(tmp_path / "home")
    return env


@pytest.fixture
def running(environment: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    # Its own process group, so the five services it starts end with it whatever happens.
    stack = subprocess.Popen(
        [VIOLET, "run"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        yield stack
    finally:
        stop_all(stack)


def stop_all(stack: subprocess.Popen[str]) -> None:
    """Ctrl-C as a person would; the whole group is killed only if that does not end it."""
    if stack.poll() is None:
        stack.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            stack.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(stack.pid, signal.SIGKILL)
    stack.wait()


def test_run_is_ready_chat_holds_a_conversation_ctrl_c_stops_all_and_run_starts_again_at_once(
    running: subprocess.Popen[str], environment: dict[str, str]
) -> None:
    assert running.stdout is not None
    line = running.stdout.readline()
    gateway = environment["VIOLET_GATEWAY_ADDR"]
    assert line.strip() == f"Violet is ready: http://{gateway}"

    chat = subprocess.run(
        [VIOLET, "chat", "--person", "robin"],
        input="Hello Violet!\n",
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert chat.returncode == 0, chat.stderr
    assert "you: Hello Violet!" in chat.stdout

    again = subprocess.run(
        [VIOLET, "chat", "--person", "robin"],
        input="",
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "you: Hello Violet!" in again.stdout  # the same conversation, on a new device
    assert "Violet: " in again.stdout

    running.send_signal(signal.SIGINT)
    assert running.wait(timeout=60) == 0
    secret = Path(environment["VIOLET_HOME"]) / "secret"
    assert secret.exists()

    # Started again at once: the connections just closed wait in TIME_WAIT, and do not count.
    again = subprocess.Popen(
        [VIOLET, "run"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert again.stdout is not None and again.stderr is not None
        assert again.stdout.readline().strip() == f"Violet is ready: http://{gateway}"
        again.send_signal(signal.SIGINT)
        assert again.wait(timeout=60) == 0, again.stderr.read()
    finally:
        stop_all(again)


def test_chat_keeps_commands_to_itself_and_asks_before_forgetting_everything(
    running: subprocess.Popen[str], environment: dict[str, str], tmp_path: Path
) -> None:
    assert running.stdout is not None
    running.stdout.readline()  # ready
    typed = "/help\n/frobnicate\n/forget\nmy cat is called Miso\n/forget-all\nno\n"
    chat = subprocess.run(
        [VIOLET, "chat", "--person", "kim"],
        input=typed,
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert chat.returncode == 0, chat.stderr
    assert "/memory" in chat.stdout  # the help
    assert "There's no command /frobnicate" in chat.stdout
    assert "Say which item" in chat.stdout
    assert "nothing was forgotten" in chat.stdout
    assert "you: my cat is called Miso" in chat.stdout

    again = subprocess.run(
        [VIOLET, "chat", "--person", "kim"],
        input="",
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = [line for line in again.stdout.splitlines() if line.startswith("you: ")]
    assert said == ["you: my cat is called Miso"]


def test_chat_lists_opens_saves_deletes_and_brings_back_documents(
    running: subprocess.Popen[str], environment: dict[str, str], tmp_path: Path
) -> None:
    assert running.stdout is not None
    running.stdout.readline()  # ready
    subprocess.run(
        [VIOLET, "chat", "--person", "lee"],
        input="write a note about ferry times: leaves at 9:40\n",
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    documents = Path(environment["VIOLET_HOME"]) / "workspaces" / folder_name("lee") / "documents"
    eventually_blocking(lambda: list(documents.glob("*.md")), "the note", timeout_s=60)

    typed = "/documents\n/open 1\n/save 1 ferry.md\n/delete 1\n/undo\n/documents\n"
    chat = subprocess.run(
        [VIOLET, "chat", "--person", "lee"],
        input=typed,
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert chat.returncode == 0, chat.stderr
    listed = "1. Ferry times (note-about-ferry-times.md)"
    shown = chat.stdout
    assert listed in shown and "leaves at 9:40" in shown
    assert "leaves at 9:40" in (tmp_path / "ferry.md").read_text()
    assert 'Deleted "Ferry times"' in shown
    assert "Violet hasn't written any documents for you yet." in shown
    assert listed in shown.rpartition("/undo")[2]  # back after the undo


def chat_as(
    person: str, typed: str, environment: dict[str, str], folder: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [VIOLET, "chat", "--person", person],
        input=typed,
        env=environment,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_chat_exports_everything_and_deletes_everything(
    running: subprocess.Popen[str], environment: dict[str, str], tmp_path: Path
) -> None:
    from violet.identity import issue_token, resolve_secret

    assert running.stdout is not None
    assert "Violet is ready" in running.stdout.readline()
    assert chat_as("ivy", "my cat is called Miso\n", environment, tmp_path).returncode == 0
    reminding = chat_as(
        "ivy", "remind me tomorrow at 8 to call the dentist\n", environment, tmp_path
    )
    assert "I'll remind you tomorrow at 08:00: call the dentist" in reminding.stdout
    reminded = chat_as("ivy", "/reminders\n/cancel 1\n/reminders\n", environment, tmp_path)
    assert reminded.returncode == 0, reminded.stderr
    assert "1. tomorrow at 08:00: call the dentist" in reminded.stdout
    assert 'Cancelled "call the dentist".' in reminded.stdout
    assert "You have no reminders." in reminded.stdout
    secret = resolve_secret("", Path(environment["VIOLET_HOME"]))
    old_token = issue_token("ivy", secret)

    exported = chat_as("ivy", "/export\n/export mine.zip\n", environment, tmp_path)
    assert exported.returncode == 0, exported.stderr
    [archive] = tmp_path.glob("violet-archive-*.zip")
    for saved in (archive, tmp_path / "mine.zip"):
        with zipfile.ZipFile(saved) as opened:
            data = json.loads(opened.read("data.json"))
            assert "my cat is called Miso" in json.dumps(data)
            [reminder] = data["reminders"]  # cancelled, and still hers to see
            assert reminder["text"] == "call the dentist" and reminder["cancelled_at"]
        assert f"Saved everything Violet keeps for you in {saved.name} (" in exported.stdout

    typed = "/delete-everything\n\ndelete everything\nthis line is never read\n"
    deleting = chat_as("ivy", typed, environment, tmp_path)
    assert deleting.returncode == 0, deleting.stderr
    assert '"delete everything"' in deleting.stdout  # what to type, asked for
    assert "Everything of yours was deleted from Violet" in deleting.stdout
    assert "this line is never read" not in deleting.stdout

    with connect(f"ws://{environment['VIOLET_GATEWAY_ADDR']}/v1/live") as socket:
        socket.send(json.dumps({"type": "hello", "token": old_token, "since": 0}))
        assert json.loads(socket.recv(timeout=20))["code"] == "unauthorized"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            socket.recv(timeout=20)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401

    time.sleep(1.1)  # a sign-in in the second of the deletion counts as before it
    back = chat_as("ivy", "", environment, tmp_path)
    assert back.returncode == 0 and "Miso" not in back.stdout  # a new, empty conversation


def test_token_prints_a_device_token_and_with_internal_an_internal_one(
    environment: dict[str, str],
) -> None:
    from violet.identity import Unauthorized, resolve_secret, verify_internal_token, verify_token

    def printed(*options: str) -> str:
        return subprocess.run(
            [VIOLET, "token", *options, "sam"],
            env=environment,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()

    device, internal = printed(), printed("--internal")
    secret = resolve_secret("", Path(environment["VIOLET_HOME"]))
    assert verify_token(device, secret).person == "sam"
    assert verify_internal_token(internal, secret).person == "sam"
    with pytest.raises(Unauthorized):
        verify_internal_token(device, secret)
    with pytest.raises(Unauthorized):
        verify_token(internal, secret)


def test_chat_says_plainly_when_violet_is_not_running(environment: dict[str, str]) -> None:
    began = time.monotonic()
    chat = subprocess.run(
        [VIOLET, "chat"],
        input="hi\n",
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert chat.returncode == 1
    assert "can't be reached" in chat.stderr
    assert time.monotonic() - began < 30


def test_run_says_plainly_when_an_address_is_taken(environment: dict[str, str]) -> None:
    host, _, port = environment["VIOLET_GATEWAY_ADDR"].rpartition(":")
    with socket.socket() as squatter:
        squatter.bind((host, int(port)))
        squatter.listen()
        refused = subprocess.run(
            [VIOLET, "run"], env=environment, capture_output=True, text=True, timeout=60
        )
    assert refused.returncode == 1
    assert f"{host}:{port} (gateway) is already in use" in refused.stderr


def test_devices_are_listed_and_signed_out_by_the_person_and_by_the_operator(
    running: subprocess.Popen[str], environment: dict[str, str], tmp_path: Path
) -> None:
    from violet.identity import issue_token, resolve_secret

    assert running.stdout is not None
    assert "Violet is ready" in running.stdout.readline()
    secret = resolve_secret("", Path(environment["VIOLET_HOME"]))
    live = f"ws://{environment['VIOLET_GATEWAY_ADDR']}/v1/live"
    lost = issue_token("jo", secret, ttl_s=3600)  # a phone of Jo's, signed in earlier
    with connect(live) as socket:
        socket.send(json.dumps({"type": "hello", "token": lost, "since": 0}))
        assert json.loads(socket.recv(timeout=20))["type"] == "welcome"

    listed = chat_as("jo", "/devices\n/signout 2\n", environment, tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "Your devices, most recently used first:" in listed.stdout
    assert "(this one)" in listed.stdout
    with connect(live) as socket:
        socket.send(json.dumps({"type": "hello", "token": lost, "since": 0}))
        assert json.loads(socket.recv(timeout=20))["code"] == "unauthorized"

    shown = subprocess.run(
        [VIOLET, "person", "devices", "jo"], env=environment, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    (device,) = json.loads(shown.stdout.splitlines()[-1])["devices"]  # the chat's own
    assert set(device) == {"device", "agent", "first_seen", "last_seen"}
    out = subprocess.run(
        [VIOLET, "person", "signout", "jo", "--all"],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "Every device of jo's is signed out" in out.stdout
    assert json.loads(out.stdout.splitlines()[-1]) == {"devices": []}
