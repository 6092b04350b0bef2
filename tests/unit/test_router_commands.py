"""`violet eval routing` and `python -m router train` on a few hand-made cases, with the real
embedder, stores and weights."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from router.cases import fingerprint, load_cases
from router.embedding import MODEL_IDS
from router.scoring import Weights
from violet_cli.eval_routing import eval_routing, in_sample

CONTRACT_KEYS = [
    "cases",
    "prefilter_top1",
    "prefilter_top3",
    "pick_top1",
    "recency_top1",
    "recency_top3",
    "new_precision",
    "new_recall",
    "p50_ms",
]

TOPICS = {
    "flights": ("Flights: Book a flight", "I need a flight to Seattle.", "Which day?", ["Seattle"]),
    "dinner": ("Restaurants: Book a table", "Find me a sushi place.", "Sushi Ran, 7 pm?", []),
    "music": ("Music: Play songs", "Play something by Adele.", "Playing Hello.", ["Adele"]),
}
REQUESTS = [
    ("flights", "Friday morning, please."),
    ("dinner", "Yes, book Sushi Ran for two."),
    ("new", "I want to rent a car in Denver."),
]


def card(topic: str, hours_ago: int, now_hour: int) -> dict:
    title, opening, outcome, entities = TOPICS[topic]
    return {
        "id": topic,
        "title": title,
        "summary": f'The person wants to {title.split(": ")[1].lower()}, first asking: "{opening}"',
        "entities": entities,
        "last_request": f"More about {topic}, please.",
        "last_outcome": outcome,
        "last_active": f"2024-10-16T{now_hour - hours_ago:02d}:00:00Z",
    }


def write_cases(path: Path, people: int) -> None:
    lines = []
    for person in range(people):
        for n, (gold, request) in enumerate(REQUESTS):
            recent = "dinner" if gold == "dinner" else "music"
            cards = [card(t, 1 if t == recent else 3 + i, 20) for i, t in enumerate(TOPICS)]
            case = {
                "case_id": f"c{person}-{n}",
                "person_id": f"p{person}",
                "now": "2024-10-16T20:00:00Z",
                "request": request,
                "cards": cards,
                "gold": gold,
            }
            lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n")


def test_eval_routing_prints_the_contract_figures_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    write_cases(cases, people=2)
    report = eval_routing(str(cases))
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last_line) == report
    assert list(report)[: len(CONTRACT_KEYS)] == CONTRACT_KEYS
    assert report["weights_saw_file"] is False and report["cases_seen"] == 0
    assert report["cases"] == 6
    assert report["recency_top1"] == 0.5  # the flights cases are led by the music card
    assert all(0.0 <= report[k] <= 1.0 for k in CONTRACT_KEYS[1:-1])
    assert report["prefilter_top3"] == 1.0
    assert report["p50_ms"] > 0


def test_the_train_command_writes_weights_for_the_shared_embedder(tmp_path: Path) -> None:
    cases, out = tmp_path / "cases.jsonl", tmp_path / "weights.json"
    write_cases(cases, people=3)
    done = subprocess.run(
        [sys.executable, "-m", "router", "train", str(cases), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    weights = Weights.load(out)
    assert weights.embedders == list(MODEL_IDS)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == weights.report
    assert report["people"] == 3 and report["cases"] == 9
    assert set(report["cross_validated_by_person"]) >= {"prefilter_top1", "pick_top1"}
    assert set(weights.seen) == {fingerprint(case) for case in load_cases(cases)}


def test_the_eval_tells_how_many_cases_the_weights_were_trained_on(tmp_path: Path) -> None:
    cases_file = tmp_path / "cases.jsonl"
    write_cases(cases_file, people=2)
    cases = load_cases(cases_file)
    weights = Weights.load()
    trained_on_two = replace(weights, seen=[fingerprint(case) for case in cases[:2]])
    assert in_sample(cases, trained_on_two) == {"weights_saw_file": True, "cases_seen": 2}
    assert in_sample(cases, replace(weights, seen=[])) == {
        "weights_saw_file": False,
        "cases_seen": 0,
    }


def test_the_shipped_weights_saw_every_dev_case() -> None:
    dev = Path(__file__).parents[2] / ".." / "shared" / "data" / "routing_dev.jsonl"
    if not dev.exists():
        pytest.skip("the shared dev file is not beside the repository")
    cases = load_cases(dev)
    assert in_sample(cases, Weights.load())["cases_seen"] == len(cases)


def test_a_fingerprint_names_who_asked_what_and_when(tmp_path: Path) -> None:
    cases_file = tmp_path / "cases.jsonl"
    write_cases(cases_file, people=2)
    first, *others = load_cases(cases_file)
    assert fingerprint(first) == fingerprint(replace(first, case_id="renamed", cards=[]))
    assert fingerprint(first) != fingerprint(replace(first, person="someone else"))
    assert fingerprint(first) not in {fingerprint(case) for case in others}
