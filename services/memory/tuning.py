"""Which conversations the shipped ranking choices were tuned on.

An evaluation on a file the weights were chosen on scores in sample and says more about the
fit than about recall on other people. `tuned_on.json` lists the tuning conversations by a
fingerprint of their turns, so an evaluation can tell whether it scores any of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

TUNED_ON = Path(__file__).with_name("tuned_on.json")


def conversation_fingerprint(turns: Iterable[str]) -> str:
    """A short hash of a conversation's turns, in order. The turns alone, not the
    conversation's name: the same conversation under another name is still recognised."""
    digest = hashlib.sha256()
    for turn in turns:
        digest.update(turn.encode())
        digest.update(b"\x1e")
    return digest.hexdigest()[:16]


def tuned_fingerprints(path: Path = TUNED_ON) -> frozenset[str]:
    """The fingerprints of the conversations the shipped ranking choices were tuned on."""
    recorded = json.loads(path.read_text())
    return frozenset(conversation["fingerprint"] for conversation in recorded["conversations"])


def record_tuning(conversations: dict[str, str], path: Path = TUNED_ON) -> None:
    """Writes the tuning conversations, fingerprint by name."""
    listed = [{"name": name, "fingerprint": fp} for name, fp in sorted(conversations.items())]
    path.write_text(json.dumps({"conversations": listed}, indent=1) + "\n")
