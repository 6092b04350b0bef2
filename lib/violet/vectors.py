"""Vectors (memory items, topic cards), behind one small interface with two engines.

- `EdgeVectorStore`: Qdrant Edge, embedded in the process, under `VIOLET_HOME` (the default).
- `QdrantVectorStore`: qdrant-client, for a Qdrant server (`VIOLET_QDRANT_URL`).

Each service keeps its own store (its own collection, its own embedded folder), named by it.

Each point carries its person in the payload, and every search, delete and scroll filters on it.
A point has two named vectors: "text" (the item alone) and "context" (a turn read after the
turn before it; facts have none). Calls are blocking; async callers run them in a thread.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import qdrant_edge as edge
from numpy.typing import NDArray
from qdrant_client import QdrantClient
from qdrant_client import models as qdrant

TEXT = "text"
CONTEXT = "context"
SCROLL_PAGE = 512

Vector = NDArray[np.float32]


@dataclass(frozen=True)
class VectorPoint:
    id: str
    person: str
    kind: str
    vector: Vector
    context_vector: Vector | None = None


@dataclass(frozen=True)
class StoredVectors:
    id: str
    kind: str
    vector: Vector
    context_vector: Vector | None


@dataclass(frozen=True)
class Neighbour:
    id: str
    score: float


class VectorStoreError(RuntimeError):
    """The vector store cannot be opened or used; the message says what to do."""


class VectorStore(Protocol):
    def upsert(self, points: Sequence[VectorPoint]) -> None: ...

    def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        """The person's k points nearest to `vector` by their "text" vector."""
        ...

    def delete(self, person: str, ids: Sequence[str]) -> None: ...

    def delete_person(self, person: str) -> None: ...

    def scroll(self, person: str) -> list[StoredVectors]:
        """Every point of the person, with its vectors."""
        ...

    def compact(self) -> None: ...

    def close(self) -> None: ...


def _named(point: VectorPoint) -> dict[str, list[float]]:
    vectors = {TEXT: point.vector.tolist()}
    if point.context_vector is not None:
        vectors[CONTEXT] = point.context_vector.tolist()
    return vectors


def _stored(point_id: object, payload: dict | None, vectors: object) -> StoredVectors:
    named = vectors if isinstance(vectors, dict) else {}
    context = named.get(CONTEXT)
    return StoredVectors(
        id=str(point_id),
        kind=str((payload or {}).get("kind", "")),
        vector=np.asarray(named[TEXT], dtype=np.float32),
        context_vector=None if context is None else np.asarray(context, dtype=np.float32),
    )


class EdgeVectorStore:
    """Qdrant Edge in this process. One process at a time may hold its folder."""

    def __init__(self, path: Path, dimension: int) -> None:
        self._lock = threading.Lock()
        params = edge.EdgeVectorParams(size=dimension, distance=edge.Distance.Cosine)
        config = edge.EdgeConfig(vectors={TEXT: params, CONTEXT: params})
        try:
            if (path / "edge_config.json").exists():
                self._shard = edge.EdgeShard.load(str(path), config)
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._shard = edge.EdgeShard.create(str(path), config)
                self._shard.update(
                    edge.UpdateOperation.create_field_index(
                        "person", edge.PayloadSchemaType.Keyword
                    )
                )
        except Exception as error:  # the binding raises plain Exceptions
            raise VectorStoreError(
                f"The memory vector store in {path} cannot be opened ({error}). If another "
                "memory process uses this VIOLET_HOME, stop it or point both at a Qdrant "
                "server with VIOLET_QDRANT_URL."
            ) from error

    @staticmethod
    def _of(person: str, *more: object) -> edge.Filter:
        return edge.Filter(
            must=[edge.FieldCondition(key="person", match=edge.MatchValue(person)), *more]
        )

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        prepared = [
            edge.Point(p.id, _named(p), {"person": p.person, "kind": p.kind}) for p in points
        ]
        with self._lock:
            self._shard.update(edge.UpdateOperation.upsert_points(prepared))

    def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        more = [edge.FieldCondition(key="kind", match=edge.MatchValue(kind))] if kind else []
        request = edge.QueryRequest(
            limit=k,
            query=edge.Query.Nearest(vector.tolist(), using=TEXT),
            filter=self._of(person, *more),
        )
        with self._lock:
            found = self._shard.query(request)
        return [Neighbour(str(point.id), float(point.score)) for point in found]

    def delete(self, person: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        wanted = self._of(person, edge.HasIdCondition(set(ids)))
        with self._lock:
            self._shard.update(edge.UpdateOperation.delete_points_by_filter(wanted))

    def delete_person(self, person: str) -> None:
        with self._lock:
            self._shard.update(edge.UpdateOperation.delete_points_by_filter(self._of(person)))

    def scroll(self, person: str) -> list[StoredVectors]:
        found: list[StoredVectors] = []
        offset = None
        while True:
            request = edge.ScrollRequest(
                offset=offset,
                limit=SCROLL_PAGE,
                filter=self._of(person),
                with_payload=True,
                with_vector=True,
            )
            with self._lock:
                records, offset = self._shard.scroll(request)
            found.extend(_stored(r.id, r.payload, r.vector) for r in records)
            if offset is None:
                return found

    def compact(self) -> None:
        with self._lock:
            self._shard.optimize()
            self._shard.flush()

    def close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


class QdrantVectorStore:
    """A Qdrant server through qdrant-client (or its local mode, which has the same API)."""

    def __init__(self, client: QdrantClient, dimension: int, collection: str) -> None:
        self._client = client
        self._collection = collection
        if not client.collection_exists(collection):
            params = qdrant.VectorParams(size=dimension, distance=qdrant.Distance.COSINE)
            client.create_collection(collection, vectors_config={TEXT: params, CONTEXT: params})
            client.create_payload_index(
                collection,
                "person",
                qdrant.KeywordIndexParams(type=qdrant.KeywordIndexType.KEYWORD, is_tenant=True),
            )
        size = client.get_collection(collection).config.params.vectors[TEXT].size  # type: ignore[index]
        if size != dimension:
            raise VectorStoreError(
                f"The Qdrant collection {collection} holds vectors of size {size}, but the "
                f"embedder makes {dimension}: drop the collection or use another server."
            )

    @staticmethod
    def _of(person: str, *more: qdrant.Condition) -> qdrant.Filter:
        person_is = qdrant.FieldCondition(key="person", match=qdrant.MatchValue(value=person))
        return qdrant.Filter(must=[person_is, *more])

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        self._client.upsert(
            self._collection,
            points=[
                qdrant.PointStruct(
                    id=p.id, vector=_named(p), payload={"person": p.person, "kind": p.kind}
                )
                for p in points
            ],
        )

    def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        more = (
            [qdrant.FieldCondition(key="kind", match=qdrant.MatchValue(value=kind))] if kind else []
        )
        found = self._client.query_points(
            self._collection,
            query=vector.tolist(),
            using=TEXT,
            query_filter=self._of(person, *more),
            limit=k,
        ).points
        return [Neighbour(str(point.id), float(point.score)) for point in found]

    def delete(self, person: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        wanted = self._of(person, qdrant.HasIdCondition(has_id=list(ids)))
        self._client.delete(self._collection, points_selector=qdrant.FilterSelector(filter=wanted))

    def delete_person(self, person: str) -> None:
        selector = qdrant.FilterSelector(filter=self._of(person))
        self._client.delete(self._collection, points_selector=selector)

    def scroll(self, person: str) -> list[StoredVectors]:
        found: list[StoredVectors] = []
        offset = None
        while True:
            records, offset = self._client.scroll(
                self._collection,
                scroll_filter=self._of(person),
                limit=SCROLL_PAGE,
                offset=offset,
                with_payload=True,
                with_vectors=True,
            )
            found.extend(_stored(r.id, r.payload, r.vector) for r in records)
            if offset is None:
                return found

    def compact(self) -> None:
        """A Qdrant server optimises its segments by itself."""

    def close(self) -> None:
        self._client.close()


def open_vector_store(home: Path, qdrant_url: str, dimension: int, name: str) -> VectorStore:
    """The vectors of the service `name`: on the Qdrant server when a URL is given (collection
    `violet_NAME`), else embedded under `home` (folder `NAME-vectors`)."""
    if qdrant_url:
        return QdrantVectorStore(QdrantClient(url=qdrant_url), dimension, f"violet_{name}")
    return EdgeVectorStore(home / f"{name}-vectors", dimension)
