"""The terminal client's reading of typed lines: commands stay local, messages go out once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from violet_cli import chat as chat_module
from violet_cli import tokens
from violet_cli.chat import HELP, Chat, MemoryNumbers, archive_url


class Socket:
    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def send(self, raw: str) -> None:
        self.sent.append(json.loads(raw))


def chat(
    answers: list[str] | None = None, terminal: bool = True, hidden: list[str] | None = None
) -> tuple[Chat, Socket]:
    """A chat on a recording socket; `answers` are typed lines, `hidden` typed unseen ones."""
    socket = Socket()
    replies, hidden_replies = iter(answers or []), iter(hidden or [])

    async def ask(prompt: str) -> str:
        return next(replies)

    async def ask_hidden(prompt: str) -> str:
        return next(hidden_replies)

    client = Chat(
        socket,  # type: ignore[arg-type]
        0,
        ask,
        echoed_by_terminal=terminal,
        ask_hidden=ask_hidden,
    )
    return client, socket


async def test_a_message_is_sent_as_a_say() -> None:
    client, socket = chat()
    await client.send("hello there")
    assert socket.sent[0]["type"] == "say" and socket.sent[0]["text"] == "hello there"


@pytest.mark.parametrize(
    "line", ["/help", "/forget", "/restore", "/forget 7", "/frobnicate", "/key frobnicate"]
)
async def test_commands_and_mistakes_are_never_sent_to_violet(
    line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client, socket = chat()
    await client.send(line)
    assert socket.sent == []
    assert capsys.readouterr().out.strip()


async def test_an_unknown_command_says_how_to_find_the_real_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = chat()
    await client.send("/frobnicate")
    assert "/help" in capsys.readouterr().out


async def test_memory_items_get_short_numbers_that_forget_and_restore_use() -> None:
    client, socket = chat()
    client.show(
        {
            "type": "memory",
            "items": [
                client_item("9f3c0a7e-long-id"),
                {**client_item("11aa22bb-long-id"), "text": "I wrote a note", "origin": "violet"},
            ],
        }
    )
    await client.send("/forget 2")
    client.show({"type": "memory", "items": [client_item("9f3c0a7e-long-id")]})
    await client.send("/restore 2")
    assert socket.sent == [
        {"type": "memory.forget", "item": "11aa22bb-long-id"},
        {"type": "memory.restore", "item": "11aa22bb-long-id"},
    ]


def client_item(item: str) -> dict:
    return {"item": item, "text": "My cat is Miso", "origin": "you", "at": ""}


def test_what_violet_told_is_listed_apart_and_forgotten_by_its_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = chat()
    told = {"item": "t-long-id", "text": "The ferry leaves at 9:40.", "source": "", "at": ""}
    page = {"type": "memory", "items": [client_item("9f3c0a7e-long-id")]}
    client.show({**page, "told": [told, {**told, "item": "t2", "source": "Ferry times"}]})
    shown = capsys.readouterr().out
    remembered, _, said = shown.partition("What I told you:")
    assert "1. My cat is Miso" in remembered and "ferry" not in remembered
    assert "2. The ferry leaves at 9:40.\n" in said
    assert "3. The ferry leaves at 9:40. (from Ferry times)" in said


async def test_forgetting_a_told_item_sends_its_id() -> None:
    client, socket = chat()
    told = {"item": "t-long-id", "text": "The ferry leaves at 9:40.", "source": "", "at": ""}
    client.show({"type": "memory", "items": [], "told": [told]})
    await client.send("/forget 1")
    assert socket.sent == [{"type": "memory.forget", "item": "t-long-id"}]


FERRY = {"name": "note-ferry-times.md", "title": "Ferry times", "at": "", "size": 30}
PICNIC = {"name": "note-picnic.md", "title": "Picnic", "at": "", "size": 12}


class Gateway(Socket):
    """A socket the gateway answers at once: each documents frame with its answer."""

    def __init__(self, client: Chat) -> None:
        super().__init__()
        self.client = client
        self.documents = [FERRY, PICNIC]

    async def send(self, raw: str) -> None:
        await super().send(raw)
        frame = json.loads(raw)
        if frame["type"] == "document.open":
            text = f"# {frame['name']}\n\nleaves at 9:40\n"
            self.client.show(
                {"type": "document", "name": frame["name"], "title": "T", "text": text}
            )
        elif frame["type"].startswith("document"):
            self.client.show({"type": "documents", "items": self.documents})


def documents_chat() -> tuple[Chat, Gateway]:
    client, _ = chat()
    client.socket = gateway = Gateway(client)  # type: ignore[assignment]
    return client, gateway


async def test_documents_are_listed_numbered_and_opened_by_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, socket = documents_chat()
    await client.send("/documents")
    listed = capsys.readouterr().out
    assert "1. Ferry times (note-ferry-times.md)" in listed and "2. Picnic" in listed
    await client.send("/open 2")
    assert socket.sent[-1] == {"type": "document.open", "name": "note-picnic.md"}
    assert "leaves at 9:40" in capsys.readouterr().out


async def test_a_document_is_saved_in_a_file_and_never_over_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    client, socket = documents_chat()
    await client.send("/documents")
    await client.send("/save 1")
    assert (tmp_path / "note-ferry-times.md").read_text().endswith("leaves at 9:40\n")
    await client.send("/save 2 picnic.txt")
    assert (tmp_path / "picnic.txt").exists()
    capsys.readouterr()
    sent = len(socket.sent)
    await client.send("/save 2 picnic.txt")
    assert len(socket.sent) == sent and "there already" in capsys.readouterr().out


async def test_a_deleted_document_comes_back_with_undo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, socket = documents_chat()
    await client.send("/documents")
    await client.send("/delete 1")
    await client.send("/undo")
    assert socket.sent[1:] == [
        {"type": "document.delete", "name": "note-ferry-times.md"},
        {"type": "document.restore", "name": "note-ferry-times.md"},
    ]
    assert "/undo" in capsys.readouterr().out
    await client.send("/undo")
    assert len(socket.sent) == 3 and "nothing to undo" in capsys.readouterr().out


@pytest.mark.parametrize("line", ["/open", "/open 3", "/open x", "/delete 1 2", "/save"])
async def test_a_document_number_not_listed_sends_nothing(
    line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client, socket = documents_chat()
    await client.send("/documents")
    await client.send(line)
    assert socket.sent == [{"type": "documents.list"}]
    assert "/documents" in capsys.readouterr().out


def test_numbers_stay_with_their_items() -> None:
    numbers = MemoryNumbers()
    assert [numbers.number("a"), numbers.number("b"), numbers.number("a")] == [1, 2, 1]
    assert numbers.item("2") == "b"
    assert numbers.item("3") is None and numbers.item("x") is None


async def test_forgetting_everything_asks_first_and_a_no_keeps_it() -> None:
    client, socket = chat(answers=["no\n", "yes\n"])
    await client.send("/forget-all")
    assert socket.sent == []
    await client.send("/forget-all")
    assert socket.sent == [{"type": "memory.forget_all"}]


async def test_key_shows_the_account_and_key_remove_removes_the_key() -> None:
    client, socket = chat()
    await client.send("/key")
    await client.send("/KEY Remove")
    assert socket.sent == [{"type": "account.show"}, {"type": "key.remove"}]


async def test_key_set_asks_for_the_key_unseen_and_sends_it_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, socket = chat(hidden=["  sk-ant-mine-1234\n"])
    await client.send("/key set")
    assert socket.sent == [{"type": "key.set", "key": "sk-ant-mine-1234"}]
    assert "sk-ant-mine-1234" not in capsys.readouterr().out


async def test_key_set_with_nothing_pasted_sends_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, socket = chat(hidden=["\n"])
    await client.send("/key set")
    assert socket.sent == []
    assert "nothing changed" in capsys.readouterr().out


async def test_a_key_typed_on_the_command_line_is_not_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, socket = chat()
    await client.send("/key set sk-ant-mine-1234")
    assert socket.sent == []
    assert "/key set on its own" in capsys.readouterr().out


def test_the_account_is_shown_in_its_words_with_why_a_key_was_not_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = chat()
    state = "You have no Anthropic key of your own here."
    client.show(
        {"type": "account", "key": "none", "ending": "", "month_usd": 0, "text": state, "note": ""}
    )
    assert capsys.readouterr().out == f"{state}\n"
    note = "Anthropic refused that key, so I didn't keep it. Nothing else changed."
    client.show(
        {
            "type": "account",
            "key": "none",
            "ending": "",
            "month_usd": 0,
            "text": state,
            "note": note,
        }
    )
    assert capsys.readouterr().out == f"{note}\n{state}\n"


async def test_a_typed_line_is_not_printed_again(capsys: pytest.CaptureFixture[str]) -> None:
    client, _ = chat(terminal=True)
    await client.send("hello there")
    client.show({"type": "message", "seq": 1, "from": "you", "text": "hello there", "at": ""})
    client.show({"type": "message", "seq": 2, "from": "violet", "text": "Hi!", "at": ""})
    assert capsys.readouterr().out == "Violet: Hi!\n"


async def test_piped_lines_are_shown_as_the_conversation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = chat(terminal=False)
    await client.send("hello there")
    client.show({"type": "message", "seq": 1, "from": "you", "text": "hello there", "at": ""})
    assert capsys.readouterr().out == "you: hello there\n"


def test_the_stack_is_found_beside_the_checkout_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "violet" / "var"
    checkout.mkdir(parents=True)
    (checkout / "secret").write_text("s" * 40)
    monkeypatch.setattr(tokens, "CHECKOUT_HOME", checkout)
    monkeypatch.delenv("VIOLET_HOME", raising=False)
    monkeypatch.delenv("VIOLET_SECRET", raising=False)
    monkeypatch.chdir(tmp_path)
    assert tokens.stack_home(Path("var")) == checkout
    tokens.local_token("sam", create=False)
    assert not (tmp_path / "var").exists()


def test_without_any_stack_chat_says_where_to_run_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "CHECKOUT_HOME", tmp_path / "nowhere")
    monkeypatch.setenv("VIOLET_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("VIOLET_SECRET", raising=False)
    with pytest.raises(tokens.NoLocalStack, match="make run"):
        tokens.local_token("sam", create=False)
    assert not (tmp_path / "home").exists()


class Deleting(Socket):
    """A socket the gateway answers a deletion on, as it does: the answer, and it is over."""

    def __init__(self, client: Chat) -> None:
        super().__init__()
        self.client = client

    async def send(self, raw: str) -> None:
        await super().send(raw)
        if json.loads(raw)["type"] == "account.delete":
            self.client.show({"type": "account.deleted", "text": "Everything was deleted."})


def test_help_lists_the_export_and_deleting_everything() -> None:
    assert "/export [FILE]" in HELP and "/delete-everything" in HELP


@pytest.mark.parametrize("typed", ["delete", "yes", "", "delete everything now"])
async def test_deleting_everything_takes_the_typed_words_alone(
    typed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client, socket = chat(answers=["\n", f"{typed}\n"])
    await client.send("/delete-everything")
    assert socket.sent == [] and not client.over
    shown = capsys.readouterr().out
    assert "every device" in shown and "nothing was deleted" in shown


async def test_deleting_everything_sends_the_words_and_the_chat_is_over(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = chat(answers=["no\n", "  Delete   EVERYTHING \n"])
    client.socket = socket = Deleting(client)  # type: ignore[assignment]
    await client.send("/delete-everything")
    assert socket.sent == [{"type": "account.delete", "confirmation": "delete everything"}]
    assert client.over and "Everything was deleted." in capsys.readouterr().out


async def test_no_deletion_without_the_copy_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(chat_module, "save_archive", refuse_archive)
    client, socket = chat(answers=["yes\n", "delete everything\n"])
    await client.send("/delete-everything")
    assert socket.sent == []
    shown = capsys.readouterr().out
    assert "Violet can't gather it now." in shown and "Nothing was deleted." in shown


async def refuse_archive(url: str, token: str, chosen: Path | None) -> tuple[Path, int]:
    raise chat_module.NotSaved("Violet can't gather it now.")


async def test_export_never_writes_over_a_file_and_takes_one_name_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.zip").write_bytes(b"kept")
    client, _ = chat()
    await client.send("/export mine.zip")
    assert "there already" in capsys.readouterr().out
    assert (tmp_path / "mine.zip").read_bytes() == b"kept"
    await client.send("/export a.zip b.zip")
    assert "one file at most" in capsys.readouterr().out


def test_the_archive_is_fetched_beside_the_websocket() -> None:
    assert archive_url("ws://127.0.0.1:8080/v1/live") == "http://127.0.0.1:8080/v1/export"
    assert archive_url("wss://violet.example/v1/live") == "https://violet.example/v1/export"
