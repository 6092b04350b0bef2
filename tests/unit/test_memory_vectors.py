"""Both vector stores keep people apart: every search, delete and scroll names its person."""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient

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


@pytest.fixture(params=["edge", "qdrant-client"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    if request.param == "edge":
        opened: VectorStore = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    else:
        with warnings.catch_warnings():  # local mode says payload indexes need a server
            warnings.simplefilter("ignore", UserWarning)
            opened = QdrantVectorStore(QdrantClient(location=":memory:"), DIMENSION, "violet_test")
    yield opened
    opened.close()


def point(person: str, kind: str, vector: np.ndarray, context: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    return VectorPoint(str(uuid.uuid4()), person, kind, vector, context)


def test_search_finds_only_the_persons_points(store: VectorStore) -> None:
    ann = point("ann", "turn", unit(1, 0, 0, 0))
    bob = point("bob", "turn", unit(1, 0, 0, 0))
    store.upsert([ann, bob])
    assert [n.id for n in store.search("ann", unit(1, 0, 0, 0), 5)] == [ann.id]
    assert [n.id for n in store.search("bob", unit(1, 0, 0, 0), 5)] == [bob.id]
    assert store.search("carol", unit(1, 0, 0, 0), 5) == []


def test_search_ranks_by_cosine_and_filters_by_kind(store: VectorStore) -> None:
    near = point("ann", "fact", unit(1, 0.1, 0, 0))
    far = point("ann", "fact", unit(0, 1, 0, 0))
    turn = point("ann", "turn", unit(1, 0, 0, 0))
    store.upsert([near, far, turn])
    found = store.search("ann", unit(1, 0, 0, 0), 5, kind="fact")
    assert [n.id for n in found] == [near.id, far.id]
    assert found[0].score == pytest.approx(0.995, abs=1e-3)


def test_delete_with_another_persons_name_deletes_nothing(store: VectorStore) -> None:
    ann = point("ann", "turn", unit(1, 0, 0, 0))
    store.upsert([ann])
    store.delete("bob", [ann.id])
    assert [s.id for s in store.scroll("ann")] == [ann.id]
    store.delete("ann", [ann.id])
    assert store.scroll("ann") == []


def test_deleting_a_person_leaves_the_others(store: VectorStore) -> None:
    store.upsert([point("ann", "turn", unit(1, 0, 0, 0)), point("bob", "fact", unit(0, 1, 0, 0))])
    store.delete_person("ann")
    assert store.scroll("ann") == []
    assert len(store.scroll("bob")) == 1


def test_scroll_returns_both_vectors_of_every_point(store: VectorStore) -> None:
    turn = point("ann", "turn", unit(1, 0, 0, 0), unit(1, 1, 0, 0))
    fact = point("ann", "fact", unit(0, 0, 1, 0))
    many = [point("ann", "turn", unit(1, 1, 1, i + 1)) for i in range(600)]
    store.upsert([turn, fact, *many])
    stored = {s.id: s for s in store.scroll("ann")}
    assert len(stored) == 602
    assert np.allclose(stored[turn.id].context_vector, unit(1, 1, 0, 0), atol=1e-6)
    assert stored[fact.id].context_vector is None
    assert stored[fact.id].kind == "fact"


def test_the_embedded_store_keeps_its_points_across_a_restart(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    kept = point("ann", "turn", unit(1, 0, 0, 0))
    first.upsert([kept])
    first.close()
    again = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    assert [s.id for s in again.scroll("ann")] == [kept.id]
    again.close()


def test_the_embedded_store_says_plainly_when_its_folder_is_in_use(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    try:
        with pytest.raises(VectorStoreError, match="VIOLET_QDRANT_URL"):
            EdgeVectorStore(tmp_path / "vectors", DIMENSION)
    finally:
        first.close()


def test_a_store_made_for_other_vectors_is_refused(tmp_path: Path) -> None:
    EdgeVectorStore(tmp_path / "vectors", DIMENSION).close()
    with pytest.raises(VectorStoreError):
        EdgeVectorStore(tmp_path / "vectors", DIMENSION * 2)
