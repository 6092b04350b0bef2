"""Which conversations the shipped ranking choices were tuned on, and whether an evaluation
file holds any of them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.store import NewTurn
from memory.tuning import (
    TUNED_ON,
    conversation_fingerprint,
    record_tuning,
    tuned_fingerprints,
)
from violet_cli import eval_memory
from violet_cli.eval_memory import Conversation, tuning_seen

TURNS = ["Mia: I adopted a cat.", "Leo: Lovely!", "Mia: She is called Pepper."]


def conversation(name: str, turns: list[str]) -> Conversation:
    at = datetime(2023, 5, 8, tzinfo=UTC)
    said = [NewTurn(t, "", (seq,), at) for seq, t in enumerate(turns, start=1)]
    return Conversation(person=name, turns=said)


def test_a_fingerprint_reads_the_turns_in_order_and_not_the_name() -> None:
    assert conversation("a", TURNS).fingerprint == conversation("b", TURNS).fingerprint
    assert conversation_fingerprint(TURNS) != conversation_fingerprint(TURNS[::-1])
    assert conversation_fingerprint(TURNS) != conversation_fingerprint(TURNS[:2])
    # Turns are kept apart: joining two turns makes another conversation.
    assert conversation_fingerprint(["ab", "c"]) != conversation_fingerprint(["a", "bc"])
    assert len(conversation_fingerprint(TURNS)) == 16


def test_recorded_tuning_conversations_are_read_back(tmp_path: Path) -> None:
    path = tmp_path / "tuned_on.json"
    record_tuning({"one": "aaaa", "two": "bbbb"}, path)
    assert tuned_fingerprints(path) == {"aaaa", "bbbb"}


def test_the_shipped_ranking_was_tuned_on_four_conversations() -> None:
    assert len(tuned_fingerprints(TUNED_ON)) == 4


def test_an_evaluation_says_how_many_of_its_conversations_the_tuning_saw(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = conversation("seen", TURNS)
    unseen = conversation("unseen", ["Ana: Something else entirely."])
    monkeypatch.setattr(eval_memory, "tuned_fingerprints", lambda: frozenset({seen.fingerprint}))

    assert tuning_seen([seen, unseen]) == {"weights_saw_file": True, "conversations_seen": 1}
    assert tuning_seen([unseen]) == {"weights_saw_file": False, "conversations_seen": 0}
