"""The person's folder: safe document names, no way out of the folder, notes and lists kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.folders import DocumentError, Documents, Folders, document_name, folder_name


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
