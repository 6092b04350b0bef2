"""`violet eval memory` on a small hand-made LoCoMo conversation, with the real capture path,
embedder and stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from violet_cli.eval_memory import eval_memory

TALK = [
    ("Mia", "I adopted a grey cat called Pepper last spring."),
    ("Leo", "That's lovely! How is she settling in?"),
    ("Mia", "Great. I also started pottery classes on Thursdays."),
    ("Leo", "I'm training for the Lisbon marathon in October."),
]


def locomo(path: Path) -> None:
    turns = [
        {"speaker": who, "dia_id": f"D1:{n}", "text": said}
        for n, (who, said) in enumerate(TALK, start=1)
    ]
    sample = {
        "sample_id": "hand-made",
        "conversation": {
            "speaker_a": "Mia",
            "speaker_b": "Leo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [
            {"question": "What is the name of Mia's cat?", "evidence": ["D1:1"], "category": 4},
            {"question": "When are Mia's pottery classes?", "evidence": ["D1:3"], "category": 2},
            {"question": "Which race is Leo training for?", "evidence": ["D1:4"], "category": 1},
            {"question": "Who has no evidence?", "evidence": [], "category": 4},
            {"question": "An adversarial one", "evidence": ["D1:2"], "category": 5},
        ],
    }
    path.write_text(json.dumps([sample]))


def test_eval_memory_prints_the_contract_figures_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.json"
    locomo(data)
    report = eval_memory(str(data))
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last_line) == report
    assert list(report)[:4] == ["questions", "recall_at_1", "recall_at_3", "recall_at_5"]
    # Only questions with evidence in categories 1 to 4 are asked.
    assert report["questions"] == 3
    assert report["recall_at_5"] == 1.0  # four turns: every evidence turn is among the top five
    assert report["recall_at_1"] <= report["recall_at_3"] <= report["recall_at_5"]
    assert sum(c["questions"] for c in report["by_category"].values()) == 3
    assert report["p50_ms"] > 0
    # A conversation the shipped ranking was not tuned on: the figures are out of sample.
    assert report["weights_saw_file"] is False
    assert report["conversations_seen"] == 0
