"""The pure parts of `violet bench`'s load sections: counting answers per say, reading CPU time
from /proc stat text, percentiles, the scripts, and the document's sections."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from violet_cli.bench import SECTIONS, Distribution, merge, missing_data, parts_of, selected
from violet_cli.bench_cpu import (
    CpuReading,
    CpuUse,
    cpu_between,
    cpu_seconds,
    parent_pid,
    tree_cpu_seconds,
)
from violet_cli.bench_first import Answers, FirstFigures, render_first
from violet_cli.bench_load import (
    BURST_PAUSE_S,
    BURST_SAYS,
    CHATS,
    CLIENT,
    FACT_PHRASINGS,
    QUESTION_PHRASINGS,
    RECALLABLE_ATTRIBUTE,
    SERVICE_ORDER,
    IdleFigures,
    LoadFigures,
    Tally,
    add,
    answer_to_recallable,
    burst_goal_rows,
    burst_scripts,
    cpu_goal_rows,
    recalled,
    render_burst,
    render_cpu,
    render_goal,
    render_idle,
    render_load,
    scripts,
    tally,
    turn_goal_rows,
)
from violet_cli.main import main


def stat(pid: int, command: str, parent: int, user: int, system: int, cu: int, cs: int) -> str:
    """A /proc/PID/stat line: fields 14 to 17 are utime, stime, cutime and cstime, in ticks."""
    rest = [0] * 30
    fields = ["S", parent, 1, 1, 0, -1, 4194304, 10, 0, 0, 0, user, system, cu, cs, *rest]
    return f"{pid} ({command}) " + " ".join(str(f) for f in fields) + "\n"


# --- counting answers ---------------------------------------------------------------------------


def test_each_say_answered_once_is_counted_as_such() -> None:
    counted = tally(["a", "b", "c"], ["b", "a", "c"])
    assert counted == Tally(said=3, answered=3, duplicates=0, missing=0, strays=0)
    assert counted.each_once


def test_a_second_answer_to_the_same_say_is_a_duplicate() -> None:
    counted = tally(["a", "b"], ["a", "b", "a", "a"])
    assert (counted.answered, counted.duplicates, counted.missing) == (2, 2, 0)
    assert not counted.each_once


def test_a_say_without_answer_is_missing() -> None:
    counted = tally(["a", "b", "c"], ["c"])
    assert (counted.answered, counted.duplicates, counted.missing) == (1, 0, 2)
    assert not counted.each_once


def test_an_answer_to_no_say_is_a_stray_not_an_answer() -> None:
    counted = tally(["a"], ["a", "zz"])
    assert (counted.answered, counted.strays) == (1, 1)
    assert not counted.each_once


def test_tallies_of_several_people_add_up() -> None:
    total = add([tally(["a", "b"], ["a", "a"]), tally(["c"], [])])
    assert total == Tally(said=3, answered=1, duplicates=1, missing=2, strays=0)


@pytest.mark.parametrize(
    ("answer", "value", "expected"),
    [
        ("Your locker number is 4817.", "4817", True),
        ("You told me: my locker number is 4817", "4817", True),
        ("I don't know that yet. If you tell me, I'll remember it.", "4817", False),
        ("Your locker number is 48170.", "4817", False),
        ("Your locker number is 14817.", "4817", False),
    ],
)
def test_a_fact_is_recalled_when_the_answer_quotes_its_value_as_a_whole_number(
    answer: str, value: str, expected: bool
) -> None:
    assert recalled(answer, value) is expected


# --- the scripts --------------------------------------------------------------------------------


def test_each_person_tells_a_value_of_their_own_chats_then_asks_it_back() -> None:
    made = scripts(40, seed=3)
    assert len({s.value for s in made}) == 40
    assert len({s.person for s in made}) == 40
    for script in made:
        fact, *chat, question = script.lines
        assert fact.startswith("My ") and fact.endswith(f" is {script.value}.")
        thing = fact.removeprefix("My ").removesuffix(f" is {script.value}.")
        assert question == f"What is my {thing}?"
        assert len(chat) == CHATS and not any(script.value in line for line in chat)


def test_scripts_are_the_same_for_the_same_seed() -> None:
    assert [s.lines for s in scripts(5, seed=9)] == [s.lines for s in scripts(5, seed=9)]


def test_people_in_bursts_each_say_chat_lines_nobody_else_says() -> None:
    made = burst_scripts(300, seed=4)
    assert len({s.value for s in made}) == 300
    chat = [line for s in made for line in s.lines[1:-1]]
    assert len(chat) == 300 * (BURST_SAYS - 2) and len(set(chat)) == len(chat)
    for script, plain in zip(made, scripts(300, seed=4), strict=True):
        assert len(script.lines) == BURST_SAYS
        thing = plain.lines[-1].removeprefix("What is my ").removesuffix("?")
        fact, question = script.lines[0], script.lines[-1]
        assert thing in fact and script.value in fact
        assert thing in question and script.value not in question
        assert not any(script.value in line for line in script.lines[1:-1])
    # In the words people use: every phrasing of the fact and of the question comes up.
    facts = {s.lines[0].replace(s.value, "V") for s in made}
    assert len({f for f in facts if "locker number" in f}) == len(FACT_PHRASINGS)
    asked = {s.lines[-1] for s in made if "locker number" in s.lines[-1]}
    assert len(asked) == len(QUESTION_PHRASINGS)


def test_a_burst_says_each_next_thing_a_pause_in_range_after_the_previous_answer() -> None:
    made = burst_scripts(200, seed=6)
    least, most = BURST_PAUSE_S
    pauses = [pause for s in made for pause in s.pauses_s]
    assert all(len(s.pauses_s) == BURST_SAYS - 1 for s in made)
    assert all(least <= pause <= most for pause in pauses)
    assert min(pauses) < least + 1 and max(pauses) > most - 1  # spread over the range
    assert all(sum(s.pauses_s) >= 56.0 for s in made)  # the question a minute after the fact
    script = made[0]
    assert script.due(0, began=100.0, answered_at=0.0) == 100.0 + script.start_s
    assert script.due(3, began=100.0, answered_at=150.0) == 150.0 + script.pauses_s[2]
    assert burst_scripts(5, seed=6) == burst_scripts(5, seed=6)


def test_a_script_on_a_clock_does_not_wait_for_answers() -> None:
    script = scripts(1, seed=2, gap_s=15.0)[0]
    assert script.pauses_s == ()
    assert script.due(2, began=100.0, answered_at=500.0) == 100.0 + script.start_s + 30.0


# --- CPU time from /proc ------------------------------------------------------------------------


def test_cpu_seconds_add_user_system_and_waited_children_time() -> None:
    text = stat(42, "python", 1, user=250, system=50, cu=100, cs=0)
    assert cpu_seconds(text, ticks_per_second=100) == pytest.approx(4.0)
    assert cpu_seconds(text, ticks_per_second=100, waited_children=False) == pytest.approx(3.0)


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields() -> None:
    text = stat(42, "py (worker) 2", 7, user=100, system=100, cu=0, cs=0)
    assert parent_pid(text) == 7
    assert cpu_seconds(text, ticks_per_second=100) == pytest.approx(2.0)


def test_a_process_tree_counts_live_descendants_but_not_strangers() -> None:
    stats = {
        10: stat(10, "memory", 1, user=100, system=0, cu=0, cs=0),
        11: stat(11, "helper", 10, user=50, system=0, cu=0, cs=0),
        12: stat(12, "grandchild", 11, user=25, system=0, cu=0, cs=0),
        20: stat(20, "someone else", 1, user=1000, system=0, cu=0, cs=0),
    }
    assert tree_cpu_seconds(10, stats, ticks_per_second=100) == pytest.approx(1.75)
    assert tree_cpu_seconds(99, stats, ticks_per_second=100) == 0.0


def test_cpu_use_between_two_readings_per_turn_and_per_core() -> None:
    before = CpuReading(at=100.0, seconds={"memory": 5.0, "session": 1.0})
    after = CpuReading(at=110.0, seconds={"memory": 7.0, "session": 1.5})
    use = cpu_between(before, after)
    assert use.per_turn_ms(100) == pytest.approx({"memory": 20.0, "session": 5.0})
    assert use.core_share() == pytest.approx({"memory": 0.2, "session": 0.05})


# --- percentiles --------------------------------------------------------------------------------


def test_percentiles_pick_the_nearest_rank_of_the_sorted_samples() -> None:
    samples = Distribution([float(n) for n in range(100, 0, -1)])
    assert samples.percentile(50) == 51.0
    assert samples.percentile(99) == 99.0
    assert samples.percentile(0) == 1.0 and samples.percentile(100) == 100.0


# --- the document -------------------------------------------------------------------------------


def figures(
    people: int, tally_: Tally, latencies: list[float], recalled_: int, memory_s: float = 4.0
) -> LoadFigures:
    seconds = {name: 2.0 for name in SERVICE_ORDER} | {"memory": memory_s, CLIENT: 1.0}
    return LoadFigures(
        people=people,
        latency=Distribution(latencies),
        seconds=20.0,
        tally=tally_,
        facts_recalled=recalled_,
        errors=Counter({"unavailable": 2}),
        cpu=CpuUse(seconds, wall_s=40.0),
        settle_s=3.0,
        load_average=1.5,
    )


def test_the_goals_are_judged_on_the_figures() -> None:
    met = figures(300, Tally(1200, 1200, 0, 0, 0), [900.0] * 1200, 300, memory_s=12.0)
    assert [ok for _, _, ok in turn_goal_rows(met)] == [True, True, True]
    # 10 ms a turn for memory, 1.7 for each other service: 16.7 in all
    assert [ok for _, _, ok in cpu_goal_rows(met)] == [True, True, True]
    assert "| memory at most 40 ms of CPU per turn | 10.0 ms | met |" in render_cpu(met)
    slow = [900.0] * 1000 + [4000.0] * 190
    missed = figures(300, Tally(1200, 1190, 1, 10, 0), slow, 290, memory_s=119.0)
    assert [ok for _, _, ok in turn_goal_rows(missed)] == [False, False, False]
    assert [ok for _, _, ok in cpu_goal_rows(missed)] == [False, True, False]  # memory 100 ms
    assert (
        "| every say answered exactly once | 1190 of 1200 answered, 1 duplicates, 10 missing"
        in (render_goal(missed))
    )


def test_the_burst_section_tells_the_offered_rate_recalls_missed_and_the_two_goals() -> None:
    slow = [900.0] * 2300 + [4000.0] * 90
    found = figures(300, Tally(2400, 2390, 1, 10, 0), slow, 280)
    found.saying_s = 100.0
    text = render_burst(found)
    assert text.startswith("## Bursts: 300 people")
    assert "| people | says | says offered/s | p50 ms | p90 ms | p99 ms | answered |" in text
    assert "| 300 | 2400 | 24.0 | 900 | 900 | 4000 | 2390 | 1 | 10 | 280 (93%) | 20 | 20 |" in text
    assert "| p99 say to answer at most 3 s | p99 4000 ms, p50 900 ms | not met |" in text
    assert "| at least 99.5% of facts recalled | 280 of 300 (93.3%), 20 recalls missed |" in text
    assert "memory service CPU" not in text and "cores" in text and "unavailable 2" in text
    assert [ok for _, _, ok in burst_goal_rows(found)] == [False, False, False]
    met = figures(300, Tally(2400, 2400, 0, 0, 0), [2900.0] * 2400, 299)
    met.recallable = Distribution([40.0] * 2370 + [1900.0] * 30)
    assert [ok for _, _, ok in burst_goal_rows(met)] == [True, True, True, True]  # 99.7%
    assert "| 299 of 300 (99.7%), 1 recalls missed | met |" in render_burst(met)
    assert "| p99 answer to recallable at most 2 s | p99 1900 ms, p50 40 ms, over 2400" in (
        render_burst(met)
    )
    met.recallable = Distribution([40.0] * 2370 + [2100.0] * 30)
    assert [ok for _, _, ok in burst_goal_rows(met)][-1] is False
    summary = found.as_dict()
    assert (summary["says_offered_per_s"], summary["recalls_missed"]) == (24.0, 20)
    assert summary["p90_ms"] == 900


def test_answer_to_recallable_is_read_off_memorys_capture_spans(tmp_path: Path) -> None:
    spans = [
        {
            "name": "/violet.v1.Memory/Capture",
            "service": "memory",
            "attributes": {RECALLABLE_ATTRIBUTE: 12.5},
        },
        {
            "name": "/violet.v1.Memory/Capture",
            "service": "memory",
            "attributes": {RECALLABLE_ATTRIBUTE: 30},
        },
        {"name": "/violet.v1.Memory/Capture", "service": "memory", "attributes": {}},  # a repeat
        {"name": "capture", "service": "session", "attributes": {"violet.capture.owed_ms": 3}},
    ]
    traces = tmp_path / "spans.jsonl"
    traces.write_text("".join(json.dumps(span) + "\n" for span in spans))
    assert answer_to_recallable(traces).samples_ms == [12.5, 30.0]


def test_the_load_table_has_a_row_per_size_with_counts_and_recall() -> None:
    text = render_load(
        [
            figures(50, Tally(200, 200, 0, 0, 0), [100.0] * 200, 50),
            figures(500, Tally(2000, 1990, 0, 10, 0), [5000.0] * 1990, 450),
        ]
    )
    assert text.startswith("## People at once")
    assert "| 50 | 200 | 100 | 100 | 100 | 10.0 | 200 | 0 | 0 | 50 (100%) | 20 |" in text
    assert "| 500 | 2000 | 5000 | 5000 | 5000 | 99.5 | 1990 | 0 | 10 | 450 (90%) | 20 |" in text
    assert "unavailable 4" in text and "cores" in text


def test_cpu_and_idle_tables_name_every_service_and_the_client() -> None:
    found = figures(50, Tally(200, 200, 0, 0, 0), [100.0] * 200, 50)
    cpu = render_cpu(found)
    assert "| memory | 20.0 | 33% | 10% |" in cpu  # 4 s over 200 turns, of 12 s, over 40 s
    assert f"| {CLIENT} | 5.0 |" in cpu
    idle = render_idle(IdleFigures(500, found.cpu, 0.5))
    assert "| session | 5.0% |" in idle and "(met)" in idle
    assert all(f"| {name} |" in idle for name in (*SERVICE_ORDER, CLIENT))


def test_only_names_sections_in_the_documents_order_and_nothing_means_all() -> None:
    assert [s.name for s in selected("idle, load")] == ["load", "idle"]
    assert selected("") == list(SECTIONS)
    with pytest.raises(ValueError, match="no benchmark section nonsense"):
        selected("load,nonsense")


def test_a_partial_run_replaces_its_sections_and_keeps_the_others() -> None:
    previous = (
        "# Benchmarks\n\nWritten long ago.\n\n"
        "## Turns over the phone protocol\n\nold turns\n\n"
        "## Routing (`violet eval routing`)\n\nold routing\n\n"
        "## Memory trust (planted)\n\nold trust\n\n### by carrier\n\nrows\n"
    )
    assert set(parts_of(previous)) == {"turns", "routing", "trust"}
    fresh = {"turns": "## Turns over the phone protocol\n\nnew turns", "idle": "## Idle cost\n\nx"}
    document = merge(previous, fresh)
    assert "new turns" in document and "old turns" not in document
    assert "old routing" in document and "### by carrier\n\nrows" in document
    assert "Written long ago" not in document and "(turns, idle)" in document
    order = ["## Turns", "## Idle cost", "## Routing", "## Memory trust"]
    assert [document.index(h) for h in order] == sorted(document.index(h) for h in order)


def test_a_part_written_by_hand_stays_after_its_section_when_that_section_is_rerun() -> None:
    previous = (
        "# Benchmarks\n\n"
        "## CPU per turn\n\nold cpu\n\n"
        "## Where the CPU goes\n\nprofiles by hand\n\n### session\n\nrows\n\n"
        "## Idle cost\n\nold idle\n"
    )
    assert parts_of(previous)["after:cpu"].startswith("## Where the CPU goes")
    document = merge(previous, {"cpu": "## CPU per turn\n\nnew cpu"})
    assert "old cpu" not in document and "profiles by hand\n\n### session\n\nrows" in document
    order = ["new cpu", "## Where the CPU goes", "## Idle cost"]
    assert [document.index(h) for h in order] == sorted(document.index(h) for h in order)


def test_violet_bench_refuses_an_unknown_section_before_running_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["bench", "--only", "load,everything"])
    assert exited.value.code == 2
    assert "no benchmark section everything" in capsys.readouterr().err


def test_first_answers_are_told_per_kind_of_person_with_their_ratio_to_later_ones() -> None:
    found = FirstFigures(load_average=1.0)
    found.new = Answers(welcome=[20.0, 30.0], first=[100.0, 120.0], later=[50.0, 50.0, 60.0])
    found.at_once = Answers(welcome=[40.0], first=[2000.0], later=[100.0, 100.0])
    found.after_reading = Answers(welcome=[40.0], first=[90.0], later=[100.0, 100.0])
    text = render_first(found)
    assert "| new | first say to answer | 2 | 100 | 120 | 120 |" in text
    assert "| 10,000 items, speaks at once | first say to answer | 1 | 2000 |" in text
    assert "2.00 for new" in text and "20.00 speaking at once" in text and "0.90 after" in text
    assert found.as_dict()["long_memory_after_reading"] == {
        "people": 1,
        "first_p50_ms": 90.0,
        "first_p99_ms": 90.0,
        "later_p50_ms": 100.0,
        "later_p99_ms": 100.0,
    }


def test_the_help_names_every_section(capsys: pytest.CaptureFixture[str]) -> None:
    from violet_cli.main import main

    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    listed = set(re.findall(r"\w+", capsys.readouterr().out))
    assert {section.name for section in SECTIONS} <= listed


def test_a_data_folder_without_a_sections_files_is_named_before_anything_runs(
    tmp_path: Path,
) -> None:
    assert missing_data(str(tmp_path), "calls,routing") == ["locomo_dev.json", "routing_dev.jsonl"]
    assert missing_data(str(tmp_path), "cpu,idle") == []
    (tmp_path / "locomo_dev.json").write_text("[]")
    assert missing_data(str(tmp_path), "calls,routing") == ["routing_dev.jsonl"]
