"""The live window's rules: size, when to fold, what is carried, what the model is handed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from session.transcript import Message
from session.window import Window


def conversation(count: int, first: str = "you") -> list[Message]:
    authors = ("you", "violet") if first == "you" else ("violet", "you")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return [Message(seq, authors[(seq - 1) % 2], f"line {seq}", at) for seq in range(1, count + 1)]


@pytest.mark.parametrize("size", [19, 51, 0])
def test_a_window_outside_20_to_50_is_refused(size: int) -> None:
    with pytest.raises(ValueError):
        Window(size)


def test_a_fold_is_due_once_the_live_messages_reach_the_window() -> None:
    window = Window(30)
    assert not window.fold_due(29)
    assert window.fold_due(30)


@pytest.mark.parametrize("size", [20, 30, 50])
def test_a_fold_comes_about_once_every_quarter_window_of_turns(size: int) -> None:
    window, live, folds, turns = Window(size), 0, 0, 400
    for _ in range(turns):
        live += 2  # the person's message and Violet's answer
        if window.fold_due(live):
            _, carried = window.split(conversation(live))
            live, folds = len(carried), folds + 1
    assert turns / folds == pytest.approx(size / 4, rel=0.15)


def test_the_rollover_is_forced_at_twice_the_window() -> None:
    window = Window(20)
    assert not window.rollover_forced(39)
    assert window.rollover_forced(40)


def test_the_model_is_never_handed_more_than_the_window_and_starts_with_the_person() -> None:
    window = Window(20)
    visible = window.visible(conversation(45))
    assert len(visible) <= 20
    assert visible[0].author == "you"
    assert visible[-1].seq == 45


def test_the_carried_half_starts_with_the_person_and_the_rest_is_folded() -> None:
    live = conversation(16)  # ends with Violet's answer, as at the end of a turn
    older, carried = Window(30).split(live)
    assert carried[0].author == "you"
    assert len(carried) == 14  # the 15th from the end is Violet's line: it goes to the summary
    assert older + carried == live


def test_an_odd_tail_carries_exactly_half() -> None:
    live = conversation(17)
    older, carried = Window(30).split(live)
    assert len(carried) == 15 and carried[0].author == "you"
    assert [m.seq for m in older] == [1, 2]
