"""The worker's Documents service as a real process over loopback gRPC, on a real folder: each
person reaches their own documents only, by names that cannot leave the folder; a deleted
document comes back until its time is up."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from tests.integration.test_worker_service import WorkerUnderTest, worker_under_test
from violet.v1 import documents_pb2, documents_pb2_grpc
from worker.folders import DELETED_KEPT

FERRY = "# Ferry times\n\nleaves at 9:40\n"


@pytest.fixture(scope="module")
async def worker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[WorkerUnderTest]:
    async with worker_under_test(tmp_path_factory.mktemp("documents")) as started:
        yield started


def person() -> str:
    return "reader-" + uuid.uuid4().hex[:8]


class Shelf:
    """One person's documents, through the service, as that person's token allows."""

    def __init__(self, worker: WorkerUnderTest, person: str) -> None:
        self.folder = worker.folder(person)
        self.metadata = worker.metadata(person)
        channel = grpc.aio.insecure_channel(worker.stack.address("worker"))
        self.stub = documents_pb2_grpc.DocumentsStub(channel)

    def write(self, name: str, text: str) -> None:
        (self.folder / "documents").mkdir(parents=True, exist_ok=True)
        (self.folder / "documents" / name).write_text(text)

    async def names(self) -> list[str]:
        listed = await self.stub.List(
            documents_pb2.ListDocumentsRequest(), metadata=self.metadata, timeout=10
        )
        return [entry.name for entry in listed.documents]

    def request(self, name: str) -> documents_pb2.DocumentRequest:
        return documents_pb2.DocumentRequest(name=name)

    async def refused(self, call: str, name: str) -> grpc.StatusCode:
        with pytest.raises(grpc.aio.AioRpcError) as refusal:
            await getattr(self.stub, call)(self.request(name), metadata=self.metadata, timeout=10)
        assert refusal.value.details()  # plain words, for whoever asked
        return refusal.value.code()


async def test_documents_are_listed_newest_first_and_opened_as_plain_text(
    worker: WorkerUnderTest,
) -> None:
    shelf = Shelf(worker, person())
    shelf.write("list-groceries.md", "- milk\n")
    shelf.write("note-ferry-times.md", FERRY)
    listed = await shelf.stub.List(documents_pb2.ListDocumentsRequest(), metadata=shelf.metadata)
    assert [(d.name, d.title) for d in listed.documents] == [
        ("note-ferry-times.md", "Ferry times"),
        ("list-groceries.md", "Groceries"),
    ]
    assert listed.documents[0].size == len(FERRY) and listed.documents[0].modified.seconds > 0

    opened = await shelf.stub.Open(shelf.request("note-ferry-times.md"), metadata=shelf.metadata)
    assert (opened.name, opened.title, opened.text) == ("note-ferry-times.md", "Ferry times", FERRY)


async def test_one_person_cannot_reach_another_persons_documents(
    worker: WorkerUnderTest,
) -> None:
    owner, stranger = Shelf(worker, person()), Shelf(worker, person())
    owner.write("note-ferry-times.md", FERRY)
    assert await stranger.names() == []
    for call in ("Open", "Delete", "Restore"):
        assert await stranger.refused(call, "note-ferry-times.md") == grpc.StatusCode.NOT_FOUND
    # The way to the owner's folder by a name is refused before the disk is looked at.
    beside = f"../../{owner.folder.name}/documents/note-ferry-times.md"
    assert await stranger.refused("Open", beside) == grpc.StatusCode.INVALID_ARGUMENT
    assert await owner.names() == ["note-ferry-times.md"]


@pytest.mark.parametrize(
    "name",
    ["../secret.md", "/etc/passwd", "documents/../../x.md", ".deleted", "..", "a/b.md", "x.py"],
)
async def test_names_that_would_leave_the_folder_are_refused(
    worker: WorkerUnderTest, name: str
) -> None:
    shelf = Shelf(worker, person())
    for call in ("Open", "Delete", "Restore"):
        assert await shelf.refused(call, name) == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_link_planted_in_the_folder_is_not_followed(worker: WorkerUnderTest) -> None:
    shelf = Shelf(worker, person())
    shelf.write("note-a.md", "a")
    (shelf.folder / "documents" / "peek.md").symlink_to(Path("/etc/hostname"))
    assert await shelf.names() == ["note-a.md"]
    assert await shelf.refused("Open", "peek.md") == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_call_without_the_persons_internal_token_is_refused(
    worker: WorkerUnderTest,
) -> None:
    stub = Shelf(worker, person()).stub
    device_token = (("authorization", f"Bearer {worker.stack.token('someone')}"),)
    for metadata in ((), device_token):
        with pytest.raises(grpc.aio.AioRpcError) as refusal:
            await stub.List(documents_pb2.ListDocumentsRequest(), metadata=metadata, timeout=10)
        assert refusal.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_deleted_document_leaves_the_list_and_is_restored_as_it_was(
    worker: WorkerUnderTest,
) -> None:
    shelf = Shelf(worker, person())
    shelf.write("note-ferry-times.md", FERRY)
    deleted = await shelf.stub.Delete(shelf.request("note-ferry-times.md"), metadata=shelf.metadata)
    assert list(deleted.documents) == []
    assert await shelf.refused("Open", "note-ferry-times.md") == grpc.StatusCode.NOT_FOUND
    assert list((shelf.folder / "documents").iterdir()) == []  # out of code's reach too

    restored = await shelf.stub.Restore(
        shelf.request("note-ferry-times.md"), metadata=shelf.metadata
    )
    assert [entry.name for entry in restored.documents] == ["note-ferry-times.md"]
    opened = await shelf.stub.Open(shelf.request("note-ferry-times.md"), metadata=shelf.metadata)
    assert opened.text == FERRY
    assert await shelf.refused("Restore", "note-ferry-times.md") == grpc.StatusCode.NOT_FOUND

    await shelf.stub.Delete(shelf.request("note-ferry-times.md"), metadata=shelf.metadata)
    shelf.write("note-ferry-times.md", "a new one")
    code = await shelf.refused("Restore", "note-ferry-times.md")
    assert code == grpc.StatusCode.ALREADY_EXISTS


async def test_a_document_deleted_over_thirty_days_ago_is_gone_for_good(
    worker: WorkerUnderTest,
) -> None:
    shelf = Shelf(worker, person())
    shelf.write("note-old.md", "old")
    await shelf.stub.Delete(shelf.request("note-old.md"), metadata=shelf.metadata)
    # Its deletion moved back past the time deleted documents are kept.
    [kept] = (shelf.folder / ".deleted").iterdir()
    deleted_at, _, name = kept.name.partition("-")
    long_ago = int(deleted_at) - int(DELETED_KEPT.total_seconds() * 1_000_000) - 1
    kept.rename(kept.with_name(f"{long_ago}-{name}"))

    assert await shelf.names() == []
    assert list((shelf.folder / ".deleted").iterdir()) == []
    assert await shelf.refused("Restore", "note-old.md") == grpc.StatusCode.NOT_FOUND
