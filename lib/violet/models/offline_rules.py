"""The offline model's conversation rules (CONTRACTS section 5): given a request as the Messages
API would receive it, the assistant blocks to answer with. Deterministic, case-insensitive, and
blind to instructions inside tool results: those are only ever quoted back.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field

from violet.language import ENGLISH, detect, phrase
from violet.models import offline_phrases as say
from violet.models import offline_reports as r
from violet.models import tools as t
from violet.models.base import Tier
from violet.models.messages import ContentBlock, JsonObject, ModelMessage, TextBlock, ToolUseBlock
from violet.models.offline_asking import answer_asked
from violet.models.offline_schedule import after_reminder_tools, person_words, reminder_turn
from violet.models.offline_structured import facts
from violet.models.offline_text import (
    block_text,
    content_words,
    first_sentence,
    json_object,
    sentences,
    shorten,
    squash,
    stable_index,
    strip_lead,
)
from violet.statements import states
from violet.text import document_title
from violet.told import asks_what_was_told

WORK_VERB = re.compile(
    r"^(?:look up|find|check|research|plan|fetch|calculate|write|send)\b", re.IGNORECASE
)
_URL = re.compile(r"https?://[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
_CALCULATE = re.compile(r"^calculate\s+(?P<expr>.+)$", re.IGNORECASE | re.DOTALL)
_WRITE = re.compile(
    r"^write\s+an?\s+(?P<kind>note|list)\b[\s:,-]*(?P<rest>.*)$", re.IGNORECASE | re.DOTALL
)
_EMAIL = re.compile(
    r"^send\s+(?:an?\s+)?e-?mail\s+to\s+(?P<to>[^\s@]+@[^\s@]+?)[\s,:]+"
    r"(?:saying|that says)\s*:?\s*(?P<text>.+)$",
    re.IGNORECASE | re.DOTALL,
)
# Questions about the person: what/where/when/who/how is my X, what/how/where/when do I ... (or
# does my X ...), do you (still) remember/know/have my X, (can you) tell me (what) my X (is).
_MEMORY_QUESTION = re.compile(
    r"^(?:(?:what|where|when|who|how|which)(?:\s+is|\s+are|\s+was|'s|’s|s)\s+my\s+"
    r"|(?:what|how|where|when|which|who)\b(?:\s+[\w'’-]+){0,3}?\s+(?:do\s+i|did\s+i|does\s+my)\s+"
    r"|(?:do|did)\s+you\s+(?:still\s+)?(?:remember|know|have)\s+(?:what\s+|where\s+|when\s+)?"
    r"(?:my|i)\s+"
    r"|tell\s+me\s+(?:again\s+)?(?:what\s+|where\s+|when\s+)?my\s+)"
    r"\S.*$",
    re.IGNORECASE | re.DOTALL,
)
_ASKING = re.compile(
    r"\?\s*$|^(?:what|who|whom|whose|where|when|why|how|which|is|are|am|do|does|did|can"
    r"|could|would|will|should|shall|have|has)\b",
    re.IGNORECASE,
)
_DOCUMENT_NAME = re.compile(
    r"\bmy\s+(?:document|note|list|file)\s+[\"'“]?(?P<name>[\w][\w .-]*?\.(?:md|txt|csv))\b",
    re.IGNORECASE,
)
_SEARCH_VERB = re.compile(
    r"^(?:look up|find out|find|check|research|fetch|plan)\b\s*(?:about\b|for\b)?\s*",
    re.IGNORECASE,
)
# A request for what other work of the person's found: `check what you found about X`, `ask
# what we know about X`.
_ASK_OTHER_WORK = re.compile(
    r"^(?:check|ask|find out)\s+what\s+(?:you|we|i)\s+(?:have\s+)?(?:found|know|learned)"
    r"(?:\s+out)?\s+(?:about|on|for)\s+(?P<question>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_PROMISE_LINE = re.compile(r"^-\s*(promise|approval)\s+(\S+?):\s*(.*)$", re.IGNORECASE)
_UPDATE_SPLIT = re.compile(r"(?im)^\s*\[update\]\s*")
# Yes and no in each language Violet follows (`violet.language`).
_YES = frozenset(
    {"yes", "yeah", "yep", "sure", "ok", "okay", "sim", "claro", "sí", "si", "vale", "oui", "ja"}
)
_NO = frozenset({"no", "nope", "não", "nao", "non", "nein"})

FINISHED = "That's finished."
# A page's first lines without an end stop and this short are its headings, not its sentences.
_HEADING_MAX_WORDS = 8
_ENDS_SENTENCE = re.compile(r"[.!?…:;\"”)]$")
_TITLE_LEAD = re.compile(r"^(?:of|about|for|on|called|named)\s+", re.IGNORECASE)


@dataclass
class Turn:
    """The end of a conversation: the person's newest words, or the results of the tools the
    assistant called last."""

    text: str | None
    calls: list[ToolUseBlock] = field(default_factory=list)
    results: dict[str, tuple[str, bool]] = field(default_factory=dict)


def respond(
    *, tier: Tier, system: str, messages: list[ModelMessage], offered: Collection[str]
) -> list[ContentBlock]:
    ids = _ToolIds(messages)
    turn = last_turn(messages)
    language = person_language(messages)
    if tier == "work":
        asked = t.question_from_other_work(messages)
        if asked is not None:
            return [_text(answer_asked(asked, messages, language))]
        if turn.text is None:
            return [_text(work_result(turn, language))]
        return work_step(turn.text, offered, ids)
    if turn.text is None:
        asked = strip_lead(person_words(messages))
        told = after_reminder_tools(turn.calls, turn.results, asked, ids.call, language)
        return told or [_text(after_tools(turn, language))]
    return answer_person(turn.text, reading(system, messages), offered, ids, language)


def person_language(messages: list[ModelMessage]) -> str:
    """The language of the person's own words in the conversation: update notes, memory notes
    and tool results are not theirs."""
    said = [
        _UPDATE_SPLIT.split(t.without_said_at(block["text"]))[0]
        for message in messages
        if message["role"] == "user"
        for block in _blocks(message)
        if block["type"] == "text" and not t.is_memory_note(block)
    ]
    return detect(said)


def reading(system: str, messages: list[ModelMessage]) -> str:
    """The sections the main model reads besides the conversation: the system prompt's, and the
    memory note after the person's newest words."""
    notes = [
        b["text"] for b in _blocks(messages[-1]) if b["type"] == "text" and t.is_memory_note(b)
    ]
    return "\n\n".join([system, *notes])


def last_turn(messages: list[ModelMessage]) -> Turn:
    if not messages or messages[-1].get("role") != "user":
        return Turn(text="")
    content = messages[-1].get("content")
    if isinstance(content, str):
        return Turn(text=t.without_said_at(content))
    blocks = [b for b in content or [] if isinstance(b, dict) and not t.is_memory_note(b)]
    results_end = max(
        (i for i, b in enumerate(blocks) if b.get("type") == "tool_result"), default=-1
    )
    after = t.without_said_at(block_text(blocks[results_end + 1 :]))
    if results_end < 0 or after.strip():
        return Turn(text=after)
    results = {
        b.get("tool_use_id", ""): (block_text(b.get("content", "")), bool(b.get("is_error")))
        for b in blocks
        if b["type"] == "tool_result"
    }
    calls: list[ToolUseBlock] = []
    if len(messages) > 1 and messages[-2].get("role") == "assistant":
        calls = [b for b in _blocks(messages[-2]) if b["type"] == "tool_use"]
    return Turn(text=None, calls=calls, results=results)


def _blocks(message: ModelMessage) -> list[ContentBlock]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text(text: str) -> TextBlock:
    return {"type": "text", "text": text}


class _ToolIds:
    """Tool-use ids that are stable for the same conversation and unique within it."""

    def __init__(self, messages: list[ModelMessage]) -> None:
        self._seed = hashlib.sha256(
            json.dumps(messages, sort_keys=True, default=str).encode()
        ).hexdigest()
        self._count = 0

    def call(self, name: str, tool_input: JsonObject) -> ToolUseBlock:
        self._count += 1
        digest = hashlib.sha256(f"{self._seed}:{self._count}".encode()).hexdigest()[:24]
        return {"type": "tool_use", "id": f"toolu_{digest}", "name": name, "input": tool_input}


# --- the main conversation -------------------------------------------------------------------


def answer_person(
    text: str, system: str, offered: Collection[str], ids: _ToolIds, language: str = "en"
) -> list[ContentBlock]:
    if _UPDATE_SPLIT.search(text):
        return [_text(retell(text))]
    words = strip_lead(text)
    approvals = [(key, line) for kind, key, line in open_items(system) if kind == "approval"]
    answer = yes_or_no(words)
    if answer and approvals and t.ANSWER_APPROVAL in offered:
        return [ids.call(t.ANSWER_APPROVAL, {"approval_id": approvals[-1][0], "answer": answer})]
    scheduled = reminder_turn(words, system, offered, ids.call, language)
    if scheduled is not None:
        return scheduled
    if WORK_VERB.match(words) and t.START_WORK in offered:
        blocks: list[ContentBlock] = [ids.call(t.START_WORK, {"request": text.strip()})]
        if t.RECORD_PROMISE in offered:
            promise = shorten(squash(words).rstrip("?.! "), 80)
            blocks.append(ids.call(t.RECORD_PROMISE, {"text": promise}))
        return blocks
    if asks_what_was_told(words):
        return [_text(told_answer(words, system, language))]
    if _MEMORY_QUESTION.match(words):
        return [_text(recall_answer(words, system, language))]
    if facts(text):
        return [_text(phrase(say.WILL_REMEMBER, language))]
    replies = phrase(say.ASKED if _ASKING.search(words) else say.FRIENDLY, language)
    return [_text(replies[stable_index(squash(words).lower(), len(replies))])]


def retell(text: str) -> str:
    """Update notes from background work, told in Violet's voice; a question is asked as is.
    Words before the first note (an earlier message merged into the same turn) are left out."""
    told = []
    for note in _UPDATE_SPLIT.split(text)[1:]:
        note = re.sub(r"^done\b\W*", "", squash(note), flags=re.IGNORECASE)
        if note:
            told.append(note[:1].upper() + note[1:])
    return "\n".join(told) or FINISHED


def yes_or_no(words: str) -> str | None:
    lowered = words.lower().strip()
    if lowered.startswith("go ahead"):
        return "yes"
    tokens = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", lowered)
    if not tokens or len(tokens) > 6:
        return None
    if tokens[0] in _YES:
        return "yes"
    if tokens[0] in _NO:
        return "no"
    return None


def open_items(system: str) -> list[tuple[str, str, str]]:
    """(kind, id, text) of each open item, oldest first."""
    found = []
    for line in t.section(system, t.PINNED_HEADING):
        match = _PROMISE_LINE.match(line)
        if match:
            found.append((match.group(1).lower(), match.group(2), match.group(3)))
    return found


def remembered(system: str) -> list[str]:
    return [
        line[1:].strip() for line in t.section(system, t.MEMORY_HEADING) if line.startswith("-")
    ]


def recall_answer(asked: str, system: str, language: str = "en") -> str:
    """Quotes the remembered item that shares most words with the question, counting only its
    sentences that state something. When memory could not be checked, says so: that is not
    the same as not knowing."""
    if t.memory_unchecked(system):
        return phrase(say.CANT_CHECK, language)
    wanted = content_words(asked)
    best, overlap = "", 0
    for item in remembered(system):
        shared = max((len(wanted & content_words(said)) for said in told(item)), default=0)
        if shared > overlap:
            best, overlap = item, shared
    if not best:
        return phrase(say.DONT_KNOW, language)
    return f'{phrase(say.REMEMBERED, language)}"{best}".'


def told_answer(asked: str, system: str, language: str = "en") -> str:
    """Quotes what Violet told before that shares most words with the question (the first
    recalled, memory's best, among equals), with its day and where it came from. Only told
    records answer: never what Violet remembers about the person."""
    records = t.told_records(system)
    if not records:
        if t.memory_unchecked(system):
            return phrase(say.CANT_CHECK, language)
        return phrase(say.NOT_TOLD, language)
    wanted = content_words(asked)
    best = max(
        enumerate(records),
        key=lambda pair: (len(wanted & content_words(pair[1]["text"])), -pair[0]),
    )[1]
    answer = phrase(say.TOLD_BEFORE, language).format(day=best["day"], text=best["text"])
    if best["source"]:
        answer += phrase(say.TOLD_FROM, language).format(source=best["source"])
    return answer


def told(item: str) -> list[str]:
    """The sentences of a remembered item that tell something: an earlier question, a request
    to Violet, or words denied, reported or supposed answer nothing."""
    return [
        said for said in sentences(item) if states(said) and not WORK_VERB.match(strip_lead(said))
    ]


def after_tools(turn: Turn, language: str = "en") -> str:
    """The short answer once the main conversation's tool calls have their results."""
    by_name = {call.get("name"): call for call in turn.calls}

    def failed(name: str) -> bool:
        return turn.results.get(by_name[name].get("id", ""), ("", False))[1]

    if t.START_WORK in by_name:
        return phrase(say.START_FAILED if failed(t.START_WORK) else say.ON_IT, language)
    if t.ANSWER_APPROVAL in by_name:
        if failed(t.ANSWER_APPROVAL):
            return phrase(say.PASS_FAILED, language)
        yes = by_name[t.ANSWER_APPROVAL].get("input", {}).get("answer") == "yes"
        return phrase(say.GOING_AHEAD if yes else say.WONT, language)
    if t.KEEP_PROMISE in by_name:
        return phrase(say.TAKEN_CARE_OF, language)
    if t.RECORD_PROMISE in by_name:
        return phrase(say.KEEP_IN_MIND, language)
    return phrase(say.ALL_RIGHT, language)


# --- work sessions ---------------------------------------------------------------------------


def work_step(request: str, offered: Collection[str], ids: _ToolIds) -> list[ContentBlock]:
    """The one tool call a request needs."""
    words = strip_lead(request)
    if not words:
        return [_text("There is nothing to work on yet.")]
    name, tool_input = plan(words)
    if name not in offered:
        return [_text(f"I can't do that from here: {shorten(squash(request), 120)}")]
    return [ids.call(name, tool_input)]


def plan(words: str) -> tuple[str, JsonObject]:
    email = _EMAIL.match(words)
    if email:
        body = squash(email.group("text")).strip("\"'“”‘’ ")
        subject = shorten(first_sentence(body, 60).rstrip(".!?"), 60)
        return t.SEND_EMAIL, {"to": email.group("to"), "subject": subject, "body": body}
    calculate = _CALCULATE.match(words)
    if calculate:
        return t.RUN_PYTHON, {"code": f"print({calculate.group('expr').strip().rstrip('?!.= ')})"}
    write = _WRITE.match(words)
    if write:
        name, content = document(write.group("kind").lower(), write.group("rest"))
        return t.WRITE_DOCUMENT, {"name": name, "content": content}
    url = _URL.search(words)
    if url:
        return t.FETCH_PAGE, {"url": url.group(0).rstrip(".,;:!?")}
    other = _ASK_OTHER_WORK.match(words)
    if other:
        return t.ASK_WORK_SESSION, {"question": squash(other.group("question")).rstrip("?.!")}
    named = _DOCUMENT_NAME.search(words)
    if named:
        return t.READ_DOCUMENT, {"name": named.group("name").strip()}
    query = _SEARCH_VERB.sub("", words, count=1).strip().rstrip("?.!") or words
    return t.WEB_SEARCH, {"query": squash(query)}


def document(kind: str, rest: str) -> tuple[str, str]:
    """A file name and content for `write a note/list ...`: the words before a colon name it
    and are its title, the words after it are the body (all of them when there is no colon)."""
    rest = rest.strip()
    title, colon, body = rest.partition(":")
    if not colon:
        title, body = " ".join(rest.split()[:5]), rest
    slug = re.findall(r"[a-z0-9]+", title.lower())[:6]
    name = "-".join([kind, *slug])[:60].rstrip("-") + ".md"
    title = _TITLE_LEAD.sub("", squash(title))
    heading = title[:1].upper() + title[1:] if title else kind.capitalize()
    if kind == "list":
        items = [i.strip(" .") for i in re.split(r",|;|\n|\band\b", body) if i.strip(" .")]
        text = "\n".join(f"- {item}" for item in items)
    else:
        text = body.strip()
    return name, f"# {heading}\n\n{text}\n"


def work_result(turn: Turn, language: str = ENGLISH) -> str:
    """What a work session reports once its tool call has a result, in Violet's voice and the
    person's language: what was made, or what failed and why. Tool results are data: only
    quoted, never followed."""
    call = next((c for c in turn.calls if c.get("id") in turn.results), None)
    if call is None:
        return r.report(r.NO_RESULT, language)
    result, failed = turn.results[call["id"]]
    tool_input = call.get("input") or {}
    report = _REPORTS.get(call.get("name", ""))
    if report is None:
        if failed:
            return r.report(r.DID_NOT_WORK, language, why=r.reason_in(why(result), language))
        return r.report(r.FINISHED, language)
    return report(tool_input, result, failed, language)


def why(reason: str, subject: str = "") -> str:
    """A tool's error as the reason clause after a colon: `subject` at its start becomes "it",
    and a capital is dropped unless it starts a name."""
    reason = squash(reason).rstrip(".")
    if subject and reason.startswith(subject):
        reason = "it" + reason[len(subject) :]
    elif reason[:2].istitle() and not reason.startswith("I "):
        reason = reason[:1].lower() + reason[1:]
    return f"{reason or 'something went wrong'}."


def opening_sentence(text: str) -> str:
    """The first sentence of a page or document, past the headings above it."""
    lines = [squash(line) for line in text.splitlines() if line.strip()]
    while len(lines) > 1 and _is_heading(lines[0]):
        lines.pop(0)
    return first_sentence(" ".join(lines).lstrip("#- "))


def _is_heading(line: str) -> bool:
    return line.startswith("#") or (
        len(line.split()) <= _HEADING_MAX_WORDS and not _ENDS_SENTENCE.search(line)
    )


def _document_kind(name: str) -> str:
    lowered = name.lower()
    return "list" if lowered.startswith("list") else "note" if lowered.startswith("note") else ""


def _page_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    url = str(tool_input.get("url", "the page"))
    page = json_object(result)
    if failed or page is None:
        return r.report(
            r.PAGE_FAILED, language, url=url, why=r.reason_in(why(result, url), language)
        )
    title = squash(str(page.get("title") or ""))
    sentence = opening_sentence(str(page.get("text") or ""))
    if title:
        template = r.PAGE_SAYS if sentence else r.PAGE_EMPTY
    else:
        template = r.UNTITLED_PAGE_SAYS if sentence else r.UNTITLED_PAGE_EMPTY
    return r.report(template, language, title=title, url=url, sentence=sentence)


def _reading_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    name = str(tool_input.get("name", "the document"))
    document = json_object(result)
    if failed or document is None:
        reason = r.reason_in(why(result, f'"{name}"'), language)
        return r.report(r.READING_FAILED, language, title=document_title(name), why=reason)
    found = str(document.get("name") or name)
    text = str(document.get("text") or "")
    kind = _document_kind(found) or "document"
    title = document_title(found, text)
    sentence = opening_sentence(text.split("\n", 1)[1] if text.startswith("#") else text)
    template = r.DOCUMENT_SAYS if sentence else r.DOCUMENT_EMPTY
    return r.document_told(template, language, kind, title=title, sentence=sentence)


def _python_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    code = tool_input.get("code", "")
    expr = code[6:-1] if code.startswith("print(") and code.endswith(")") else code
    run = json_object(result)
    output = str(run.get("stdout", "")) if run else result
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if failed and not run:
        return r.report(
            r.CALCULATION_FAILED, language, expr=expr, why=r.reason_in(why(result), language)
        )
    if failed or (run and run.get("exit_code", 0) != 0) or not lines:
        problem = str(run.get("stderr", "")) if run else ""
        reason = (
            "it divides by zero."
            if "ZeroDivisionError" in problem
            else "it isn't a sum I can work out."
        )
        return r.report(
            r.CALCULATION_FAILED, language, expr=expr, why=r.reason_in(reason, language)
        )
    return r.report(r.CALCULATED, language, expr=expr, value=lines[-1])


def _document_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    saved = json_object(result) or {}
    name = str(saved.get("name") or tool_input.get("name", "the document"))
    content = str(tool_input.get("content", ""))
    kind = _document_kind(name) or _document_kind(str(tool_input.get("name", ""))) or "note"
    title = document_title(name, content)
    if failed:
        reason = r.reason_in(why(result), language)
        return r.document_told(r.WRITING_FAILED, language, kind, title=title, why=reason)
    return r.document_told(r.WROTE, language, kind, title=title)


def _email_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    to = str(tool_input.get("to", "them"))
    reply = json_object(result)
    if failed:
        return r.report(
            r.SENDING_FAILED, language, to=to, why=r.reason_in(why(result, to), language)
        )
    sent = (
        reply.get("sent") is True if reply and "sent" in reply else "not sent" not in result.lower()
    )
    return r.report(r.SENT if sent else r.NOT_SENT, language, to=to)


def _search_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    query = str(tool_input.get("query", ""))
    if failed:
        return r.report(
            r.SEARCH_FAILED, language, query=query, why=r.reason_in(why(result), language)
        )
    found = json_object(result)
    hits = found.get("results") if found else None
    top = next((h for h in hits or [] if isinstance(h, dict)), None)
    if top is None:
        return r.report(r.FOUND_NOTHING, language, query=query)
    title = squash(str(top.get("title") or "")) or "a page"
    summary = first_sentence(str(top.get("snippet") or ""))
    where = f" ({top['url']})" if top.get("url") else ""
    ending = f": {summary}" if summary else "."
    return r.report(r.FOUND, language, query=query, title=title, where=where, ending=ending)


def _ask_report(tool_input: JsonObject, result: str, failed: bool, language: str) -> str:
    answer = json_object(result)
    if failed or answer is None:
        return r.report(r.ASK_FAILED, language, why=r.reason_in(why(result), language))
    told = r.report(
        r.OTHER_WORK_ANSWERED,
        language,
        source=squash(str(answer.get("from") or "")),
        answer=squash(str(answer.get("answer") or "")),
    )
    return told + (
        r.report(r.OTHER_WORK_UNDER_WAY, language) if answer.get("still_working") else ""
    )


_REPORTS = {
    t.FETCH_PAGE: _page_report,
    t.RUN_PYTHON: _python_report,
    t.WRITE_DOCUMENT: _document_report,
    t.READ_DOCUMENT: _reading_report,
    t.SEND_EMAIL: _email_report,
    t.WEB_SEARCH: _search_report,
    t.ASK_WORK_SESSION: _ask_report,
}
