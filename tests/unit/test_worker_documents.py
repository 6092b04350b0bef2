"""The person's folder: safe document names, no way out of the folder, notes and lists kept."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from worker.folders import (
    DELETED_KEPT,
    DocumentError,
    Documents,
    Folders,
    NameTaken,
    NoSuchDocument,
    document_name,
    folder_name,
)


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("note-shopping.md", "note-shopping.md"),
        ("Shopping list", "Shopping list.md"),
        ("  plan   for monday.txt ", "plan for monday.txt"),
        ("data.CSV", "data.CSV"),
    ],
)
def test_plain_names_are_kept(given: str, kept: str) -> None:
    assert document_name(given) == kept


@pytest.mark.parametrize(
    "name",
    ["../escape.md", "/etc/passwd", "sub/dir.md", ".hidden.md", "a..b.md", "", "x" * 101,
     "script.py", "evil\x00.md", "back\\slash.md"],
)  # fmt: skip
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(DocumentError):
        document_name(name)


def test_folder_names_stay_inside_the_root_whatever_the_person_is_called(tmp_path: Path) -> None:
    folders = Folders(tmp_path)
    for person in ["../../etc", "/root", "alice", "ALICE", "a/b", "..", "😀"]:
        folder = folders.of(person).root
        assert folder.parent == tmp_path
        assert folder.name == folder_name(person)
    assert folder_name("alice") != folder_name("ALICE")


def test_documents_are_written_read_changed_and_listed(tmp_path: Path) -> None:
    documents = Documents(Folders(tmp_path).of("sam").documents)
    assert documents.write("list-groceries", "# List\n\n- milk\n") == "list-groceries.md"
    documents.write("list-groceries.md", "# List\n\n- milk\n- eggs\n")
    assert documents.read("list-groceries.md") == (
        "list-groceries.md",
        "# List\n\n- milk\n- eggs\n",
    )
    assert [d["name"] for d in documents.listing()] == ["list-groceries.md"]
    with pytest.raises(DocumentError, match="no document"):
        documents.read("missing.md")


def test_a_link_planted_in_the_folder_is_not_followed(tmp_path: Path) -> None:
    folders = Folders(tmp_path)
    theirs = folders.of("bob").documents / "secret.md"
    theirs.write_text("bob's secret")
    mine = folders.of("eve").documents
    (mine / "peek.md").symlink_to(theirs)
    documents = Documents(mine)
    with pytest.raises(DocumentError):
        documents.read("peek.md")
    with pytest.raises(DocumentError):
        documents.write("peek.md", "overwrite")
    assert theirs.read_text() == "bob's secret"
    assert documents.names() == []


def test_a_document_too_long_is_refused(tmp_path: Path) -> None:
    documents = Documents(Folders(tmp_path).of("sam").documents)
    with pytest.raises(DocumentError, match="at most"):
        documents.write("big.md", "x" * 200_001)


def test_a_persons_documents_stay_within_their_quota(tmp_path: Path) -> None:
    folders = Folders(tmp_path, quota_bytes=1024 * 1024)
    documents = folders.documents("sam")
    for name in ("a.md", "b.md", "c.md", "d.md", "e.md"):
        documents.write(name, "x" * 200_000)
    documents.write("e.md", "y" * 200_000)  # a document written again counts once
    with pytest.raises(DocumentError, match="may take 1 MB in all"):
        documents.write("f.md", "z" * 100_000)
    assert documents.names() == ["a.md", "b.md", "c.md", "d.md", "e.md"]
    assert folders.documents("kim").write("f.md", "z" * 100_000) == "f.md"


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_documents_are_listed_newest_first_with_the_title_a_person_calls_them(
    tmp_path: Path,
) -> None:
    folders = Folders(tmp_path)
    documents = folders.documents("sam")
    documents.write("note-ferry-times.md", "\n# Ferry times\n\nleaves at 9:40\n")
    documents.write("list-groceries.md", "- milk\n")
    ferry = folders.of("sam").documents / "note-ferry-times.md"
    os.utime(ferry, (1_000_000_000, 1_000_000_000))
    listed = documents.newest_first()
    assert [(d.name, d.title) for d in listed] == [
        ("list-groceries.md", "Groceries"),
        ("note-ferry-times.md", "Ferry times"),
    ]
    assert listed[1].modified == datetime.fromtimestamp(1_000_000_000, UTC)
    assert listed[0].size == len("- milk\n")


def test_a_deleted_document_leaves_the_list_and_comes_back_as_it_was(tmp_path: Path) -> None:
    documents = Folders(tmp_path).documents("sam")
    documents.write("note-a.md", "# A\n")
    before = documents.newest_first()
    assert documents.delete("note-a.md") == "note-a.md"
    assert documents.newest_first() == [] and documents.names() == []
    with pytest.raises(NoSuchDocument):
        documents.read("note-a.md")
    assert documents.restore("note-a.md") == "note-a.md"
    assert documents.newest_first() == before
    with pytest.raises(NoSuchDocument):
        documents.restore("note-a.md")  # nothing deleted is left to bring back


def test_deleted_documents_are_out_of_reach_of_code(tmp_path: Path) -> None:
    folder = Folders(tmp_path).of("sam")
    documents = Documents(folder.documents)
    documents.write("note-a.md", "# A\n")
    documents.delete("note-a.md")
    assert list(folder.documents.iterdir()) == []
    assert [entry.name.endswith("-note-a.md") for entry in folder.deleted.iterdir()] == [True]


def test_restoring_over_a_new_document_of_the_same_name_is_refused(tmp_path: Path) -> None:
    documents = Folders(tmp_path).documents("sam")
    documents.write("note-a.md", "old")
    documents.delete("note-a.md")
    documents.write("note-a.md", "new")
    with pytest.raises(NameTaken):
        documents.restore("note-a.md")
    assert documents.read("note-a.md")[1] == "new"


def test_the_last_deleted_of_a_name_is_the_one_restored(tmp_path: Path) -> None:
    clock = Clock()
    documents = Documents(Folders(tmp_path).of("sam").documents, clock=clock)
    for text in ("first", "second"):
        documents.write("note-a.md", text)
        documents.delete("note-a.md")
        clock.now += timedelta(minutes=1)
    documents.restore("note-a.md")
    assert documents.read("note-a.md")[1] == "second"


def test_deleted_documents_are_purged_after_thirty_days(tmp_path: Path) -> None:
    clock = Clock()
    folders = Folders(tmp_path)
    documents = Documents(folders.of("sam").documents, clock=clock)
    documents.write("note-old.md", "old")
    documents.delete("note-old.md")
    clock.now += DELETED_KEPT - timedelta(minutes=1)
    documents.write("note-new.md", "new")
    documents.delete("note-new.md")
    clock.now += timedelta(minutes=2)
    documents.purge_deleted()
    with pytest.raises(NoSuchDocument):
        documents.restore("note-old.md")
    assert documents.restore("note-new.md") == "note-new.md"


def test_everyones_deleted_documents_are_purged_even_if_they_never_come_back(
    tmp_path: Path,
) -> None:
    folders = Folders(tmp_path)
    long_ago = Clock()
    long_ago.now = datetime.now(UTC) - DELETED_KEPT - timedelta(days=1)
    documents = Documents(folders.of("gone").documents, clock=long_ago)
    documents.write("note-a.md", "a")
    documents.delete("note-a.md")
    folders.purge_deleted()
    assert list(folders.of("gone").deleted.iterdir()) == []


def test_deleted_documents_never_take_more_than_the_quota(tmp_path: Path) -> None:
    clock = Clock()
    documents = Documents(Folders(tmp_path).of("sam").documents, 1024 * 1024, clock=clock)
    for name in ("a.md", "b.md", "c.md", "d.md", "e.md", "f.md"):
        documents.write(name, "x" * 200_000)
        documents.delete(name)
        clock.now += timedelta(seconds=1)
    with pytest.raises(NoSuchDocument):
        documents.restore("a.md")  # the oldest made room
    assert documents.restore("f.md") == "f.md"


@pytest.mark.parametrize("name", ["../escape.md", "/etc/passwd", "../.deleted/x-note.md", ""])
def test_unsafe_names_are_refused_for_delete_and_restore(tmp_path: Path, name: str) -> None:
    documents = Folders(tmp_path).documents("sam")
    for change in (documents.delete, documents.restore):
        with pytest.raises(DocumentError) as refused:
            change(name)
        assert not isinstance(refused.value, NoSuchDocument)
