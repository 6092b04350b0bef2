"""The vectors of recent recall queries, kept a while so that capture can use them again.

A session recalls with the person's message, then captures that same message. A turn item's own
vector is its text read as a query (on LoCoMo dev that holds recall, see docs/memory.md), so the
vector recall made is the turn item's vector: capture takes it and embeds the message no second
time. The vectors live on this replica only; a miss (a restart, another replica) costs one
embedding in the background pass, nothing else.

A query is not embedded when the engine is so busy that its vector would come after the
person's answer should: recall then ranks on words alone (`violet.fallbacks`, "recall_by_words"),
and the turn's own vector is made later, in the background.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from violet.embedder import TextEmbedder
from violet.fallbacks import fallback

# Query vectors kept (1.5 KB each); the oldest go first. A captured message's vector is taken
# out at capture, so this bounds the ones never captured and the ones captured elsewhere.
KEPT_QUERIES = 4096
# How long a query may wait for the engine behind other work (`VIOLET_MEMORY_QUERY_WAIT_S`): a
# recall has 5 s in all, and the answer's model call comes after it. An engine that is free is
# never too busy, however slow the machine.
QUERY_WAIT_AT_MOST_S = 1.0
# Queries that may wait for the engine at once on their threads; more wait for a thread. With the
# wait bounded, few more than 1 s / 12 ms are ever asked for at once.
QUERY_THREADS = 32


class QueryEmbedder(TextEmbedder, Protocol):
    def query_wait_s(self, text: str, ahead: int = 0) -> float:
        """About how long the query of `text` asked for now would wait for the engine, in
        seconds, with `ahead` queries asked for before it."""
        ...


class RecentQueries:
    def __init__(
        self,
        embedder: QueryEmbedder,
        wait_at_most_s: float = QUERY_WAIT_AT_MOST_S,
        kept: int = KEPT_QUERIES,
    ) -> None:
        """A query whose vector would take longer than `wait_at_most_s` is not embedded."""
        self._embedder = embedder
        self._wait_at_most_s = wait_at_most_s
        self._kept = kept
        self._vectors: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        # Queries wait for the engine on threads of their own: a queue of them never holds up
        # the threads the rest of the service runs its work on (ranking, the stores).
        self._threads = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="query")
        self._asked = 0

    async def vector(self, person: str, text: str) -> NDArray[np.float32] | None:
        """The query vector of `text`, embedded now and kept for `take`; None when the engine
        is too busy to make it in time."""
        wait_s = self._embedder.query_wait_s(text, self._asked)
        if wait_s > self._wait_at_most_s:
            fallback("recall_by_words", f"the embedder was {wait_s:.1f} s behind", wait_s=wait_s)
            return None
        self._asked += 1
        try:
            loop = asyncio.get_running_loop()
            vector = await loop.run_in_executor(self._threads, self._embedder.embed_query, text)
        finally:
            self._asked -= 1
        self._vectors[(person, text)] = vector
        self._vectors.move_to_end((person, text))
        while len(self._vectors) > self._kept:
            self._vectors.popitem(last=False)
        return vector

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

    def drop(self, person: str) -> None:
        """Lets go of every query vector of the person's."""
        for key in [key for key in self._vectors if key[0] == person]:
            del self._vectors[key]

    def take(self, person: str, text: str) -> NDArray[np.float32] | None:
        """The kept query vector of the person's `text`, once; None when there is none."""
        return self._vectors.pop((person, text), None)
