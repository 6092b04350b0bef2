"""What memory gives of a person's data: every table decided, and each record as the export's
schema says."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from jsonschema import Draft202012Validator

from memory.person_data import CHECKLIST, remembered, told
from memory.sources import Source
from memory.store import FACT, TOLD, Item
from memory.tables import metadata
from violet.person_data import when

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
AT = datetime(2026, 12, 3, 10, 0, 0, 250_000, tzinfo=UTC)


def item(kind: str, text: str, quote: str = "") -> Item:
    return Item(
        id="00000000-0000-0000-0000-000000000001",
        person="ann",
        kind=kind,
        text=text,
        origin="violet" if kind == TOLD else "you",
        quote=quote or text,
        speaker="",
        source_seqs=(1, 2),
        turn_items=(),
        previous_item=None,
        subject=None,
        subject_value=None,
        created_at=AT,
        updated_at=AT,
    )


def errors(section: str, record: dict[str, object]) -> list[str]:
    schema = {"$defs": SCHEMA["$defs"], **SCHEMA["properties"][section]["items"]}
    return [error.message for error in Draft202012Validator(schema).iter_errors(record)]


def test_every_table_is_either_exported_or_said_to_be_internal() -> None:
    assert set(CHECKLIST) == set(metadata.tables)
    assert all(reason.strip() for reason in CHECKLIST.values())


def test_times_are_rfc_3339_in_utc_with_a_z() -> None:
    assert when(AT) == "2026-12-03T10:00:00.250000Z"
    east = datetime(2026, 12, 3, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert when(east) == "2026-12-03T10:00:00Z"


def test_a_remembered_fact_is_its_words_and_when() -> None:
    record = remembered(item(FACT, "My cat is called Miso"))
    assert record == {
        "text": "My cat is called Miso",
        "remembered_at": "2026-12-03T10:00:00.250000Z",
    }
    assert errors("remembered", record) == []


def test_a_told_record_names_each_source_as_a_page_or_a_document_with_its_title() -> None:
    sources = [
        Source(page="https://ferry.example/times", title="Ferry times").as_dict(),
        Source(document="notes-ferry.md").as_dict(),
    ]
    record = told(item(TOLD, "The ferry leaves at 9:40.", json.dumps(sources)))
    assert record["sources"] == [
        {"page": "https://ferry.example/times", "title": "Ferry times"},
        {"document": "notes-ferry.md", "title": ""},
    ]
    assert errors("told", record) == []
    assert told(item(TOLD, "I worked it out: 391."))["sources"] == []
