"""The passages every capture pass stores, embedded together.

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

import numpy as np
from numpy.typing import NDArray

from violet.embedder import TextEmbedder, embed_in_thread

# Texts per engine call from the queue: requests of several people fill one batch.
BATCH_TEXTS = 32
# Texts waiting at most; a larger request is taken alone once the queue is empty.
CAPACITY_TEXTS = 512


@dataclass
class _Request:
    texts: list[str]
    vectors: asyncio.Future[NDArray[np.float32]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class PassageQueue:
    """Embeds stored passages for many callers at once; `embed` is the embedder's, awaited."""

    def __init__(
        self,
        embedder: TextEmbedder,
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

    async def embed(self, texts: Sequence[str], urgent: bool = False) -> NDArray[np.float32]:
        """Vectors of passages to be stored, shape (len(texts), dim), as `Embedder.embed`.

        An `urgent` request (one a person waits for, such as a forget on the memory page) goes
        before all the others and never waits for room."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        request = _Request(list(texts))
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
        wanted = [request for request in batch if not request.vectors.done()]
        texts = [text for request in wanted for text in request.texts]
        try:
            vectors = await embed_in_thread(self._embedder, texts) if texts else None
        except Exception as error:  # each caller's pass decides what a failure means
            for request in wanted:
                if not request.vectors.done():
                    request.vectors.set_exception(error)
            return
        start = 0
        for request in wanted:
            end = start + len(request.texts)
            if not request.vectors.done() and vectors is not None:
                request.vectors.set_result(vectors[start:end])
            start = end
