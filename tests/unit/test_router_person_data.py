"""The router's checklist of its tables: each one feeds an archive section or says why not."""

from __future__ import annotations

import json
from pathlib import Path

from router.person_data import CHECKLIST, EXPORTED
from router.tables import metadata

SCHEMA = Path(__file__).parents[2] / "docs" / "export.schema.json"


def test_the_checklist_names_every_table_of_the_router_exactly() -> None:
    assert set(CHECKLIST) == set(metadata.tables)


def test_each_table_feeds_a_section_of_the_archive_or_says_why_it_is_internal() -> None:
    sections = set(json.loads(SCHEMA.read_text())["properties"])
    for table, reason in CHECKLIST.items():
        assert reason in sections or reason.startswith("internal: "), table


def test_the_router_exports_nothing_as_every_table_is_internal() -> None:
    assert all(reason.startswith("internal: ") for reason in CHECKLIST.values())
    assert EXPORTED == ()


def test_every_table_names_its_person_so_erasing_reaches_its_rows() -> None:
    for table in metadata.sorted_tables:
        assert "person" in table.c, table.name
