"""Both vector stores keep people apart: every search, delete and scroll names its person."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import AsyncQdrantClient

from violet.vectors import (
    EdgeVectorStore,
    QdrantVectorStore,
    VectorPoint,
    VectorStore,
    VectorStoreError,
)

DIMENSION = 4


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


async def local_qdrant(client: AsyncQdrantClient) -> QdrantVectorStore:
    with warnings.catch_warnings():  # local mode says payload indexes need a server
        warnings.simplefilter("ignore", UserWarning)
        return await QdrantVectorStore.open(client, DIMENSION, "violet_test")


@pytest.fixture(params=["edge", "qdrant-client"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    if request.param == "edge":
        opened: VectorStore = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    else:
        opened = await local_qdrant(AsyncQdrantClient(location=":memory:"))
    yield opened
    await opened.close()


def point(person: str, kind: str, vector: np.ndarray, context: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    return VectorPoint(str(uuid.uuid4()), person, kind, vector, context)


async def test_search_finds_only_the_persons_points(store: VectorStore) -> None:
    ann = point("ann", "turn", unit(1, 0, 0, 0))
    bob = point("bob", "turn", unit(1, 0, 0, 0))
    await store.upsert([ann, bob])
    assert [n.id for n in await store.search("ann", unit(1, 0, 0, 0), 5)] == [ann.id]
    assert [n.id for n in await store.search("bob", unit(1, 0, 0, 0), 5)] == [bob.id]
    assert await store.search("carol", unit(1, 0, 0, 0), 5) == []


async def test_search_ranks_by_cosine_and_filters_by_kind(store: VectorStore) -> None:
    near = point("ann", "fact", unit(1, 0.1, 0, 0))
    far = point("ann", "fact", unit(0, 1, 0, 0))
    turn = point("ann", "turn", unit(1, 0, 0, 0))
    await store.upsert([near, far, turn])
    found = await store.search("ann", unit(1, 0, 0, 0), 5, kind="fact")
    assert [n.id for n in found] == [near.id, far.id]
    assert found[0].score == pytest.approx(0.995, abs=1e-3)


async def test_delete_with_another_persons_name_deletes_nothing(store: VectorStore) -> None:
    ann = point("ann", "turn", unit(1, 0, 0, 0))
    await store.upsert([ann])
    await store.delete("bob", [ann.id])
    assert [s.id for s in await store.scroll("ann")] == [ann.id]
    await store.delete("ann", [ann.id])
    assert await store.scroll("ann") == []


async def test_deleting_a_person_leaves_the_others(store: VectorStore) -> None:
    await store.upsert(
        [point("ann", "turn", unit(1, 0, 0, 0)), point("bob", "fact", unit(0, 1, 0, 0))]
    )
    await store.delete_person("ann")
    assert await store.scroll("ann") == []
    assert len(await store.scroll("bob")) == 1


async def test_scroll_returns_both_vectors_of_every_point(store: VectorStore) -> None:
    turn = point("ann", "turn", unit(1, 0, 0, 0), unit(1, 1, 0, 0))
    fact = point("ann", "fact", unit(0, 0, 1, 0))
    many = [point("ann", "turn", unit(1, 1, 1, i + 1)) for i in range(600)]
    await store.upsert([turn, fact, *many])
    stored = {s.id: s for s in await store.scroll("ann")}
    assert len(stored) == 602
    assert np.allclose(stored[turn.id].context_vector, unit(1, 1, 0, 0), atol=1e-6)
    assert stored[fact.id].context_vector is None
    assert stored[fact.id].kind == "fact"


async def test_retrieve_returns_the_persons_points_among_the_ids_only(store: VectorStore) -> None:
    turn = point("ann", "turn", unit(1, 0, 0, 0), unit(1, 1, 0, 0))
    others = [point("ann", "fact", unit(0, 0, 1, i + 1)) for i in range(600)]
    bobs = point("bob", "fact", unit(0, 1, 0, 0))
    await store.upsert([turn, *others, bobs])
    wanted = [turn.id, *(p.id for p in others[:520]), bobs.id, str(uuid.uuid4())]
    found = {s.id: s for s in await store.retrieve("ann", wanted)}
    assert found.keys() == {turn.id, *(p.id for p in others[:520])}
    assert np.allclose(found[turn.id].context_vector, unit(1, 1, 0, 0), atol=1e-6)
    assert await store.retrieve("ann", []) == []


async def test_the_embedded_store_keeps_its_points_across_a_restart(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    kept = point("ann", "turn", unit(1, 0, 0, 0))
    await first.upsert([kept])
    await first.close()
    again = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    assert [s.id for s in await again.scroll("ann")] == [kept.id]
    await again.close()


async def test_the_embedded_store_says_plainly_when_its_folder_is_in_use(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    try:
        with pytest.raises(VectorStoreError, match="VIOLET_QDRANT_URL"):
            EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    finally:
        await first.close()


async def test_a_store_made_for_other_vectors_is_refused(tmp_path: Path) -> None:
    await EdgeVectorStore(tmp_path / "vectors", DIMENSION).close()
    with pytest.raises(VectorStoreError):
        EdgeVectorStore(tmp_path / "vectors", DIMENSION * 2)


async def test_a_collection_made_for_other_vectors_is_refused() -> None:
    client = AsyncQdrantClient(location=":memory:")
    await (await local_qdrant(client)).upsert([point("ann", "turn", unit(1, 0, 0, 0))])
    with pytest.raises(VectorStoreError, match="holds vectors of size 4"):
        await QdrantVectorStore.open(client, DIMENSION * 2, "violet_test")
    await client.close()


class LateToSeeIt:
    """A replica that asked whether the collection exists just before another replica made
    it: the first answer is no, then the client is the real one."""

    def __init__(self, client: AsyncQdrantClient) -> None:
        self._client = client
        self._asked = False

    def __getattr__(self, name: str) -> object:
        return getattr(self._client, name)

    async def collection_exists(self, collection_name: str) -> bool:
        if not self._asked:
            self._asked = True
            return False
        return await self._client.collection_exists(collection_name)


async def test_replicas_starting_together_share_the_collection_one_made() -> None:
    client = AsyncQdrantClient(location=":memory:")
    first = await local_qdrant(client)
    second = await local_qdrant(LateToSeeIt(client))  # type: ignore[arg-type]
    ann = point("ann", "turn", unit(1, 0, 0, 0))
    await first.upsert([ann])
    assert [n.id for n in await second.search("ann", unit(1, 0, 0, 0), 5)] == [ann.id]
    await client.close()
