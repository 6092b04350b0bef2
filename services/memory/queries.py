"""The vectors of recent recall queries, kept a while so that capture can use them again.

A session recalls with the person's message, then captures that same message. A turn item's own
vector is its text read as a query (on LoCoMo dev that holds recall, see docs/memory.md), so the
vector recall made is the turn item's vector: capture takes it and embeds the message no second
time. The vectors live on this replica only; a miss (a restart, another replica) costs one
embedding, nothing else.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from violet.embedder import TextEmbedder, embed_query_in_thread

# Query vectors kept (1.5 KB each); the oldest go first. A captured message's vector is taken
# out at capture, so this bounds the ones never captured and the ones captured elsewhere.
KEPT_QUERIES = 4096


class RecentQueries:
    def __init__(self, embedder: TextEmbedder, kept: int = KEPT_QUERIES) -> None:
        self._embedder = embedder
        self._kept = kept
        self._vectors: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()

    async def vector(self, person: str, text: str) -> NDArray[np.float32]:
        """The query vector of `text`, embedded now and kept for `take`."""
        vector = await embed_query_in_thread(self._embedder, text)
        self._vectors[(person, text)] = vector
        self._vectors.move_to_end((person, text))
        while len(self._vectors) > self._kept:
            self._vectors.popitem(last=False)
        return vector

    def drop(self, person: str) -> None:
        """Lets go of every query vector of the person's."""
        for key in [key for key in self._vectors if key[0] == person]:
            del self._vectors[key]

    def take(self, person: str, text: str) -> NDArray[np.float32] | None:
        """The kept query vector of the person's `text`, once; None when there is none."""
        return self._vectors.pop((person, text), None)
