"""Vectors (memory items, topic cards), behind one small async interface with two engines.

- `EdgeVectorStore`: Qdrant Edge, embedded in the process, under `VIOLET_HOME` (the default).
  Its calls block, so each runs in a thread.
- `QdrantVectorStore`: a Qdrant server through qdrant-client's `AsyncQdrantClient`
  (`VIOLET_QDRANT_URL`, with its API key, TLS and timeout settings). Its calls are awaited on the
  event loop: with a thread per call, concurrent searches queue behind the loop's few worker
  threads (which the embedder also uses); see docs/configuration.md for the measurement.

Each service keeps its own store (its own collection, its own embedded folder), named by it.

Each point carries its person in the payload, and every search, delete and scroll filters on it.
A point has two named vectors: "text" (the item alone) and "context" (a turn read after the
turn before it; facts have none).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import os
import shutil
import socket
import ssl
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np
import qdrant_edge as edge
from numpy.typing import NDArray
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qdrant
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from violet.settings import VectorSettings
from violet.unavailable import DependencyUnavailable

log = logging.getLogger(__name__)

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


class VectorStoreError(DependencyUnavailable):
    """The vector store cannot be opened or used; the message says what to do."""


class VectorStore(Protocol):
    async def upsert(self, points: Sequence[VectorPoint]) -> None: ...

    async def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        """The person's k points nearest to `vector` by their "text" vector."""
        ...

    async def delete(self, person: str, ids: Sequence[str]) -> None: ...

    async def delete_person(self, person: str) -> None: ...

    async def scroll(self, person: str) -> list[StoredVectors]:
        """Every point of the person, with its vectors."""
        ...

    async def retrieve(self, person: str, ids: Sequence[str]) -> list[StoredVectors]:
        """The person's points among `ids`, with their vectors (another person's are not)."""
        ...

    async def compact(self) -> None: ...

    async def purge(self) -> None:
        """Removes from disk what deleted points left there (a person was erased)."""
        ...

    async def close(self) -> None: ...


def _named(point: VectorPoint) -> dict[str, Any]:
    """The point's named vectors; `Any` as each client types them its own way."""
    vectors = {TEXT: point.vector.tolist()}
    if point.context_vector is not None:
        vectors[CONTEXT] = point.context_vector.tolist()
    return vectors


def _stored(point_id: object, payload: dict[str, Any] | None, vectors: object) -> StoredVectors:
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
        # Each optimisation rewrites the segments that hold deleted points, whatever their
        # share: an erased person's vectors and payloads do not stay on disk.
        vacuum = edge.EdgeOptimizersConfig(deleted_threshold=0.0, vacuum_min_vector_number=1)
        config = edge.EdgeConfig(vectors={TEXT: params, CONTEXT: params}, optimizers=vacuum)
        self._path, self._config = path, config
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
    def _of(person: str, *more: edge.ConditionType) -> edge.Filter:
        return edge.Filter(
            must=[edge.FieldCondition(key="person", match=edge.MatchValue(person)), *more]
        )

    def _update(self, operation: edge.UpdateOperation) -> None:
        with self._lock:
            self._shard.update(operation)

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        prepared = [
            edge.Point(p.id, _named(p), {"person": p.person, "kind": p.kind}) for p in points
        ]
        await asyncio.to_thread(self._update, edge.UpdateOperation.upsert_points(prepared))

    async def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        more = [edge.FieldCondition(key="kind", match=edge.MatchValue(kind))] if kind else []
        request = edge.QueryRequest(
            limit=k,
            query=edge.Query.Nearest(vector.tolist(), using=TEXT),
            filter=self._of(person, *more),
        )
        found = await asyncio.to_thread(self._query, request)
        return [Neighbour(str(point.id), float(point.score)) for point in found]

    def _query(self, request: edge.QueryRequest) -> list:
        with self._lock:
            return self._shard.query(request)

    async def delete(self, person: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        wanted = self._of(person, edge.HasIdCondition(set(ids)))
        await asyncio.to_thread(self._update, edge.UpdateOperation.delete_points_by_filter(wanted))

    async def delete_person(self, person: str) -> None:
        everything = edge.UpdateOperation.delete_points_by_filter(self._of(person))
        await asyncio.to_thread(self._update, everything)

    async def scroll(self, person: str) -> list[StoredVectors]:
        return await asyncio.to_thread(self._scroll, self._of(person))

    async def retrieve(self, person: str, ids: Sequence[str]) -> list[StoredVectors]:
        if not ids:
            return []
        wanted = self._of(person, edge.HasIdCondition(set(ids)))
        return await asyncio.to_thread(self._scroll, wanted)

    def _scroll(self, wanted: edge.Filter) -> list[StoredVectors]:
        found: list[StoredVectors] = []
        offset = None
        while True:
            request = edge.ScrollRequest(
                offset=offset,
                limit=SCROLL_PAGE,
                filter=wanted,
                with_payload=True,
                with_vector=True,
            )
            with self._lock:
                records, offset = self._shard.scroll(request)
            found.extend(_stored(r.id, r.payload, r.vector) for r in records)
            if offset is None:
                return found

    async def compact(self) -> None:
        await asyncio.to_thread(self._compact)

    def _compact(self) -> None:
        with self._lock:
            self._shard.optimize()
            self._shard.flush()

    async def purge(self) -> None:
        await asyncio.to_thread(self._purge)

    def _purge(self) -> None:
        """Vacuums the segments, then starts the write-ahead log afresh: once the segments are
        flushed it holds nothing they lack, but it keeps every past write, deleted or not."""
        with self._lock:
            self._shard.optimize()
            self._shard.flush()
            self._shard.close()
            shutil.rmtree(self._path / "wal", ignore_errors=True)
            self._shard = edge.EdgeShard.load(str(self._path), self._config)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            self._shard.flush()
            self._shard.close()


class QdrantVectorStore:
    """A Qdrant server through qdrant-client's async client (or its local mode, which has the
    same API). Open it with `QdrantVectorStore.open`, which makes the collection if need be."""

    def __init__(self, client: AsyncQdrantClient, collection: str, server: str) -> None:
        self._client = client
        self._collection = collection
        self._server = server

    @classmethod
    async def open(
        cls, client: AsyncQdrantClient, dimension: int, collection: str, server: str = "local"
    ) -> QdrantVectorStore:
        """`server` names the server in error messages (its URL)."""
        store = cls(client, collection, server)
        with store._reaching():
            await store._check_version()
            await store._ensure_collection(dimension)
        return store

    @contextlib.contextmanager
    def _reaching(self) -> Iterator[None]:
        """Turns the client's transport and HTTP errors into one plain sentence naming the
        server and what to check."""
        try:
            yield
        except UnexpectedResponse as error:
            raise VectorStoreError(self._refused(error)) from error
        except ApiException as error:  # the transport: refused, unresolvable, timed out, TLS
            raise VectorStoreError(
                f"The Qdrant server at {self._server} cannot be reached "
                f"({_reason(error)}). Check VIOLET_QDRANT_URL, that the server runs, and that "
                "this service may reach it."
            ) from error

    def _refused(self, error: UnexpectedResponse) -> str:
        if error.status_code in (401, 403):
            return (
                f"The Qdrant server at {self._server} refused the API key (HTTP "
                f"{error.status_code}): check VIOLET_QDRANT_API_KEY."
            )
        return (
            f"The Qdrant server at {self._server} answered HTTP {error.status_code} "
            f"{error.reason_phrase} on collection {self._collection}."
        )

    async def _check_version(self) -> None:
        """Says so in the log when the server is further from the client than one minor
        version, which qdrant-client does not promise to work with."""
        server = (await self._client.info()).version
        client = importlib.metadata.version("qdrant-client")
        if not _compatible(client, server):
            log.warning(
                "the Qdrant server's version does not match the client's",
                extra={"server": self._server, "server_version": server, "client": client},
            )

    async def _ensure_collection(self, dimension: int) -> None:
        """Makes the collection unless it exists. Replicas starting together may both find it
        missing; the one whose create loses the race finds it made and goes on."""
        if not await self._client.collection_exists(self._collection):
            params = qdrant.VectorParams(size=dimension, distance=qdrant.Distance.COSINE)
            try:
                await self._client.create_collection(
                    self._collection, vectors_config={TEXT: params, CONTEXT: params}
                )
            except (UnexpectedResponse, ValueError):  # ValueError: local mode's "exists"
                if not await self._client.collection_exists(self._collection):
                    raise
        # Asking for an index that exists changes nothing, so every replica may ask.
        await self._client.create_payload_index(
            self._collection,
            "person",
            qdrant.KeywordIndexParams(type=qdrant.KeywordIndexType.KEYWORD, is_tenant=True),
        )
        info = await self._client.get_collection(self._collection)
        named = info.config.params.vectors
        size = named[TEXT].size if isinstance(named, dict) and TEXT in named else None
        if size != dimension:
            raise VectorStoreError(
                f"The Qdrant collection {self._collection} on {self._server} holds vectors of "
                f"size {size}, but the embedder makes {dimension}: drop the collection or use "
                "another server."
            )

    @staticmethod
    def _of(person: str, *more: qdrant.Condition) -> qdrant.Filter:
        person_is = qdrant.FieldCondition(key="person", match=qdrant.MatchValue(value=person))
        return qdrant.Filter(must=[person_is, *more])

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        prepared = [
            qdrant.PointStruct(
                id=p.id, vector=_named(p), payload={"person": p.person, "kind": p.kind}
            )
            for p in points
        ]
        with self._reaching():
            await self._client.upsert(self._collection, points=prepared)

    async def search(
        self, person: str, vector: Vector, k: int, kind: str | None = None
    ) -> list[Neighbour]:
        more = (
            [qdrant.FieldCondition(key="kind", match=qdrant.MatchValue(value=kind))] if kind else []
        )
        with self._reaching():
            found = await self._client.query_points(
                self._collection,
                query=vector.tolist(),
                using=TEXT,
                query_filter=self._of(person, *more),
                limit=k,
            )
        return [Neighbour(str(point.id), float(point.score)) for point in found.points]

    async def delete(self, person: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        wanted = self._of(person, qdrant.HasIdCondition(has_id=list(ids)))
        with self._reaching():
            await self._client.delete(
                self._collection, points_selector=qdrant.FilterSelector(filter=wanted)
            )

    async def delete_person(self, person: str) -> None:
        selector = qdrant.FilterSelector(filter=self._of(person))
        with self._reaching():
            await self._client.delete(self._collection, points_selector=selector)

    async def scroll(self, person: str) -> list[StoredVectors]:
        return await self._scroll(self._of(person))

    async def retrieve(self, person: str, ids: Sequence[str]) -> list[StoredVectors]:
        if not ids:
            return []
        return await self._scroll(self._of(person, qdrant.HasIdCondition(has_id=list(ids))))

    async def _scroll(self, wanted: qdrant.Filter) -> list[StoredVectors]:
        found: list[StoredVectors] = []
        offset = None
        while True:
            with self._reaching():
                records, offset = await self._client.scroll(
                    self._collection,
                    scroll_filter=wanted,
                    limit=SCROLL_PAGE,
                    offset=offset,
                    with_payload=True,
                    with_vectors=True,
                )
            found.extend(_stored(r.id, r.payload, r.vector) for r in records)
            if offset is None:
                return found

    async def purge(self) -> None:
        """A Qdrant server's own optimizer vacuums deleted points out of a segment once their
        share passes its `deleted_threshold`, and rolls its write-ahead log; docs/person-data.md
        says what stays on its disk meanwhile."""

    async def compact(self) -> None:
        """A Qdrant server optimises its segments by itself."""

    async def close(self) -> None:
        await self._client.close()


def _reason(error: ApiException) -> str:
    """Why a call did not get through, in a few words (e.g. "Connection refused")."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, httpx.TimeoutException):
            return "no answer within VIOLET_QDRANT_TIMEOUT_S"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"certificate verify failed: {cause.verify_message}"
        if isinstance(cause, socket.gaierror):
            return str(cause.strerror)
        if isinstance(cause, OSError) and not isinstance(cause, ssl.SSLError) and cause.errno:
            return os.strerror(cause.errno)
        cause = cause.__cause__ or cause.__context__
    return str(error) or type(error).__name__


def _compatible(client: str, server: str) -> bool:
    """qdrant-client's promise: the same major version, minor versions at most one apart."""
    try:
        client_major, client_minor = (int(part) for part in client.split(".")[:2])
        server_major, server_minor = (int(part) for part in server.split(".")[:2])
    except ValueError:
        return False
    return client_major == server_major and abs(client_minor - server_minor) <= 1


def qdrant_client_for(settings: VectorSettings) -> AsyncQdrantClient:
    """The async client for the configured server: its API key, TLS (an https:// URL, checked
    against the system's certificates or `VIOLET_QDRANT_CA_FILE`) and per-call timeout."""
    verify: ssl.SSLContext | bool = True
    if settings.qdrant_ca_file is not None:
        verify = ssl.create_default_context(cafile=str(settings.qdrant_ca_file))
    return AsyncQdrantClient(
        url=settings.qdrant_url,
        api_key=settings.qdrant_api_key or None,
        timeout=settings.qdrant_timeout_s,
        # The store compares versions itself, on the event loop, rather than in a thread.
        check_compatibility=False,
        verify=verify,
    )


async def open_vector_store(settings: VectorSettings, dimension: int, name: str) -> VectorStore:
    """The vectors of the service `name`: on the Qdrant server when a URL is given (collection
    `violet_NAME`), else embedded under the home folder (folder `NAME-vectors`)."""
    if settings.qdrant_url:
        client = qdrant_client_for(settings)
        try:
            return await QdrantVectorStore.open(
                client, dimension, f"violet_{name}", settings.qdrant_url
            )
        except BaseException:
            await client.close()
            raise
    return await asyncio.to_thread(EdgeVectorStore, settings.home / f"{name}-vectors", dimension)
