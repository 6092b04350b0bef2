"""The texts every capture pass stores, embedded together.

Each person's background pass used to embed its own few texts, one engine call per pass. Here
the passes of all people put their texts in one bounded queue, and one task embeds what waits
in batches, off the event loop: fewer, fuller engine calls, and the embedder's query priority
(`violet.embedder`) still lets a recall's query go between slices of a batch.

A pass waits for its own vectors, so its steps keep their order; when the queue is full, a pass
waits for room before it adds more (capture is background work: it slows down, recall does not).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


class StoringEmbedder(Protocol):
    """The embedder's calls for texts to be stored (`violet.embedder.Embedder`)."""

    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...

    def embed_as_queries(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


# Texts per engine call from the queue: requests of several people fill one batch.
BATCH_TEXTS = 32
# Texts waiting at most; a larger request is taken alone once the queue is empty.
CAPACITY_TEXTS = 512


@dataclass
class _Request:
    texts: list[str]
    as_queries: bool
    vectors: asyncio.Future[NDArray[np.float32]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class PassageQueue:
    """Embeds texts to be stored for many callers at once, off the event loop."""

    def __init__(
        self,
        embedder: StoringEmbedder,
        batch_texts: int = BATCH_TEXTS,
        capacity_texts: int = CAPACITY_TEXTS,
    ) -> None:
        self.dim = embedder.dim
        self._embedder = embedder
        self._batch_texts = batch_texts
        self._capacity_texts = capacity_texts
        self._waiting: deque[_Request] = deque()
        self._embedding: list[_Request] = []
        self._queued_texts = 0
        self._changed: asyncio.Condition | None = None
        self._worker: asyncio.Task[None] | None = None

    async def embed(
        self, texts: Sequence[str], as_queries: bool = False, urgent: bool = False
    ) -> NDArray[np.float32]:
        """Vectors of texts to be stored, shape (len(texts), dim): as `Embedder.embed` gives
        them, or with `as_queries` as `Embedder.embed_as_queries` does.

        An `urgent` request (one a person waits for, such as a forget on the memory page) goes
        before all the others and never waits for room."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        request = _Request(list(texts), as_queries)
        changed = self._condition()
        async with changed:
            if urgent:
                self._waiting.appendleft(request)
            else:
                await changed.wait_for(lambda: self._has_room_for(len(request.texts)))
                self._waiting.append(request)
            self._queued_texts += len(request.texts)
            changed.notify_all()
        self._start_worker()
        return await request.vectors

    def queued(self) -> int:
        """How many texts wait to be embedded."""
        return self._queued_texts

    async def close(self) -> None:
        """Stops embedding; callers still waiting get CancelledError."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        for request in [*self._embedding, *self._waiting]:
            request.vectors.cancel()
        self._waiting.clear()
        self._embedding = []
        self._queued_texts = 0

    def _has_room_for(self, count: int) -> bool:
        return not self._waiting or self._queued_texts + count <= self._capacity_texts

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    def _start_worker(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._embed_what_waits())

    async def _embed_what_waits(self) -> None:
        changed = self._condition()
        while True:
            async with changed:
                await changed.wait_for(lambda: bool(self._waiting))
                self._embedding = self._next_batch()
                self._queued_texts -= sum(len(request.texts) for request in self._embedding)
                changed.notify_all()
            await self._embed_batch(self._embedding)
            self._embedding = []

    def _next_batch(self) -> list[_Request]:
        """Whole requests, oldest first, up to the batch size (or one larger request alone)."""
        batch = [self._waiting.popleft()]
        count = len(batch[0].texts)
        while self._waiting and count + len(self._waiting[0].texts) <= self._batch_texts:
            request = self._waiting.popleft()
            batch.append(request)
            count += len(request.texts)
        return batch

    async def _embed_batch(self, batch: list[_Request]) -> None:
        for as_queries in (False, True):
            wanted = [r for r in batch if r.as_queries == as_queries and not r.vectors.done()]
            if wanted:
                await self._embed_requests(wanted, as_queries)

    async def _embed_requests(self, requests: list[_Request], as_queries: bool) -> None:
        """One engine call for requests of one kind."""
        texts = [text for request in requests for text in request.texts]
        embed = self._embedder.embed_as_queries if as_queries else self._embedder.embed
        try:
            vectors = await asyncio.to_thread(embed, texts)
        except Exception as error:  # each caller's pass decides what a failure means
            for request in requests:
                if not request.vectors.done():
                    request.vectors.set_exception(error)
            return
        start = 0
        for request in requests:
            end = start + len(request.texts)
            if not request.vectors.done():
                request.vectors.set_result(vectors[start:end])
            start = end
