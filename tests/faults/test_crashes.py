"""The fault suite: the whole stack killed with SIGKILL at named moments of a turn and of
background work, started again on the same data, and the phone resending what was not acked:
every say is answered once, every job reported once, every approved email sent once.

The moments are fault points (`violet.faults`): the process that reaches the armed one kills
itself with SIGKILL, and the suite kills every other service at once, so each crash falls at
the same place on every run. Each crash is one phase of one person's conversation on one
evolving stack, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.phone import Phone
from tests.support.smtp import SmtpSink
from tests.support.stack import Stack, running_stack
from tests.support.waiting import eventually_blocking

PHASE_TIMEOUT_S = 90.0
# Short leases, so the restarted stack takes over a turn or a work session a crash left held.
QUICK_RECOVERY = {
    "VIOLET_LOCK_LEASE_S": "2",
    "VIOLET_SWEEP_S": "0.5",
    "VIOLET_WORK_LEASE_S": "2",
    "VIOLET_WORK_SWEEP_S": "0.5",
    "VIOLET_SAYS_PER_MINUTE": "1000",
    "VIOLET_SAY_BURST": "100",
}


SENT = "Sent the email to "


@dataclass(frozen=True)
class Crash:
    point: str
    service: str  # the service that dies at the point
    say: str
    told: str  # words of the later message the say leads to
    email: str = ""  # an email asked about first, and sent after the say ("yes")


CRASHES = [
    Crash("session.answer_ready", "session", "calculate 17*23", "is 391"),
    Crash("session.work_started", "session", "calculate 6*7", "is 42"),
    Crash("session.answer_stored", "session", "calculate 5*5+1", "is 26"),
    Crash("worker.tool_ran", "worker", "write a note packing: passport", '"Packing"'),
    Crash("worker.result_stored", "worker", "calculate 8*8", "is 64"),
    Crash("worker.update_delivered", "worker", "calculate 9*9", "is 81"),
    Crash("session.telling_ready", "session", "calculate 7*7", "is 49"),
    Crash(
        "worker.email_approved", "worker", "yes", SENT + "before@example.org", "before@example.org"
    ),
    Crash("worker.email_sent", "worker", "yes", SENT + "after@example.org", "after@example.org"),
]


@pytest.fixture
def sink() -> Iterator[SmtpSink]:
    started = SmtpSink().start()
    yield started
    started.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def crashing(request: pytest.FixtureRequest, tmp_path: Path, sink: SmtpSink) -> Iterator[Stack]:
    fault_file = tmp_path / "fault"
    env = {**QUICK_RECOVERY, "VIOLET_SMTP_URL": sink.url, "VIOLET_FAULT_FILE": str(fault_file)}
    with running_stack(tmp_path / "home", request.param, env=env) as stack:
        yield stack


def wait_until_settled(stack: Stack) -> None:
    eventually_blocking(
        lambda: not stack.unfinished(),
        "nothing left to answer, tell, run or send",
        timeout_s=PHASE_TIMEOUT_S,
        every_s=0.1,
    )


def arm(stack: Stack, point: str | None) -> None:
    fault_file = Path(stack.extra_env["VIOLET_FAULT_FILE"])
    if point:
        fault_file.write_text(point)
    else:
        fault_file.unlink()


async def crash_at(stack: Stack, phone: Phone, crash: Crash) -> str:
    """Arms the point, says what leads there, and returns once the stack is down."""
    await asyncio.to_thread(arm, stack, crash.point)
    said = await phone.say(crash.say)
    died = await asyncio.to_thread(stack.kill_all_when_one_dies, PHASE_TIMEOUT_S)
    await asyncio.to_thread(arm, stack, None)
    await phone.drop()
    assert died == crash.service, stack.log(died)[-3000:]
    assert f"fault point {crash.point} reached" in stack.log(died)
    return said


async def test_every_say_answered_every_job_reported_and_every_email_sent_once_across_crashes(
    crashing: Stack, sink: SmtpSink
) -> None:
    phone = Phone(crashing.live_url, crashing.token("crash-test"))
    await phone.connect()
    said: list[str] = []
    for crash in CRASHES:
        if crash.email:
            said.append(await phone.say(f"send an email to {crash.email} saying hello"))
            asked = f"send an email to {crash.email}"
            await phone.until(lambda p, a=asked: p.later(a), PHASE_TIMEOUT_S)
        said.append(await crash_at(crashing, phone, crash))
        await asyncio.to_thread(crashing.start)
        await phone.connect()
        await phone.until(lambda p, c=crash: p.later(c.told) and not p.unacked, PHASE_TIMEOUT_S)
        await phone.until(lambda p: all(p.answers_to(i) for i in said), PHASE_TIMEOUT_S)
        await asyncio.to_thread(wait_until_settled, crashing)

    everything = Phone(crashing.live_url, crashing.token("crash-test"))
    await everything.connect()
    newest = max(phone.shown)
    await everything.until(lambda p: newest in p.shown, PHASE_TIMEOUT_S)
    assert sorted(everything.shown) == list(range(1, newest + 1))
    assert all(len(everything.answers_to(i)) == 1 for i in said)
    for crash in CRASHES:
        assert len(everything.later(crash.told)) == 1, crash
        if crash.email:
            (sent,) = sink.to(crash.email)
            assert sent.message["Message-ID"].startswith("<ap_")  # the approval's own
            assert len(everything.later(f"send an email to {crash.email}")) == 1, crash
    requests = crashing.rows("worker", "SELECT text FROM work_requests")
    assert sorted(row.text for row in requests) == sorted(
        crash.say if not crash.email else f"send an email to {crash.email} saying hello"
        for crash in CRASHES
    )


@dataclass(frozen=True)
class CaptureCrash:
    point: str
    service: str  # the service that dies at the point
    fact: str
    question: str
    value: str


# Between a turn's answer and memory having its words: the session dies with the capture owed
# and unsent; memory dies with the capture stored and its background pass not begun.
CAPTURE_CRASHES = [
    CaptureCrash(
        "session.answer_stored",
        "session",
        "My locker number is 4817.",
        "What is my locker number?",
        "4817",
    ),
    CaptureCrash(
        "memory.capture_stored",
        "memory",
        "My bike lock code is 5520.",
        "What is my bike lock code?",
        "5520",
    ),
]


async def test_every_fact_said_is_recalled_once_across_crashes_between_answer_and_memory(
    crashing: Stack,
) -> None:
    someone = "capture-crash-test"
    phone = Phone(crashing.live_url, crashing.token(someone))
    await phone.connect()
    for crash in CAPTURE_CRASHES:
        await asyncio.to_thread(arm, crashing, crash.point)
        said = await phone.say(crash.fact)
        died = await asyncio.to_thread(crashing.kill_all_when_one_dies, PHASE_TIMEOUT_S)
        await asyncio.to_thread(arm, crashing, None)
        await phone.drop()
        assert died == crash.service, crashing.log(died)[-3000:]
        await asyncio.to_thread(crashing.start)
        await phone.connect()
        await phone.until(lambda p, s=said: p.answers_to(s) and not p.unacked, PHASE_TIMEOUT_S)
        await asyncio.to_thread(wait_until_settled, crashing)
        await asyncio.to_thread(
            eventually_blocking,
            lambda: (
                not crashing.rows(
                    "memory", "SELECT 1 FROM captured_turns WHERE extracted_at IS NULL"
                )
            ),
            "memory's passes done",
            timeout_s=PHASE_TIMEOUT_S,
        )

    for crash in CAPTURE_CRASHES:
        asked = await phone.say(crash.question)
        await phone.until(lambda p, a=asked: p.answers_to(a), PHASE_TIMEOUT_S)
        (answer,) = phone.answers_to(asked)
        assert crash.value in answer["text"], crash
    items = crashing.rows(
        "memory",
        "SELECT kind, text FROM memory_items WHERE person = :p AND superseded_by IS NULL",
        p=someone,
    )
    for crash in CAPTURE_CRASHES:
        made = [row.kind for row in items if crash.value in row.text]
        assert sorted(made) == ["fact", "turn"], (crash, made)  # each made once
