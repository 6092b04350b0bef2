"""A turn's context vector, derived from vectors already made.

A turn is recalled better read after the turn before it: "Sure, at eight!" says little alone and
much after "Dinner on Friday?". Each turn used to be embedded a second time for that, with the
turn before it, as a passage: more than half of the memory service's CPU per turn. Now nothing
more is embedded. Each turn's own vector is its message read as a query (the vector recall
already made of it, `memory.queries`), and the context vector is a linear map of the two turns'
own vectors: fitted by ridge regression to give what e5 gives for the two read together as a
passage, on the turns of the LoCoMo dev conversations the ranking was tuned on
(`memory.tuning`). Measured in docs/memory.md ("One embedding per turn").

The map belongs to the embedding model it was fitted for (`violet.embedder.MODEL_ID`): with
another model the context is the normalised sum of the two vectors, and a warning says the map
should be fitted again (`python -m memory fit-context FILE`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from memory.ranking import contextual_text
from memory.tuning import conversation_fingerprint, tuned_fingerprints
from violet.embedder import MODEL_ID

log = logging.getLogger(__name__)

Vectors = NDArray[np.float32]

CONTEXT_MAP = Path(__file__).with_name("context_map.npz")
# Chosen among 0.1, 0.3, 1 and 3 by recall@3, each of the four tuning conversations scored with
# the map and the ranking weights fitted on the other three.
RIDGE = 0.3
# A turn is read after the turn before it when that one was said this recently.
CONTEXT_GAP = timedelta(hours=3)


@dataclass(frozen=True)
class ContextMap:
    """The context vector of a turn read after another, from the two turns' own vectors."""

    # Shape (2 * dim + 1, dim): rows for the previous turn's vector, the turn's own, and 1.
    weights: NDArray[np.float32] | None
    model: str = MODEL_ID

    def of(self, previous: Vectors, own: Vectors) -> Vectors:
        """Unit context vectors, one row per row of `previous` and `own` (same shapes)."""
        previous = np.atleast_2d(np.asarray(previous, dtype=np.float32))
        own = np.atleast_2d(np.asarray(own, dtype=np.float32))
        if self.weights is None:
            made = previous + own
        else:
            dim = own.shape[1]
            w = self.weights
            made = previous @ w[:dim] + own @ w[dim : 2 * dim] + w[2 * dim]
        norms = np.linalg.norm(made, axis=1, keepdims=True)
        return (made / np.maximum(norms, np.finfo(np.float32).tiny)).astype(np.float32)

    def save(self, path: Path = CONTEXT_MAP) -> None:
        if self.weights is None:
            raise ValueError("the plain sum has no weights to save")
        with path.open("wb") as out:
            np.savez_compressed(out, weights=self.weights.astype(np.float16), model=self.model)


SUMMED = ContextMap(None)


@cache
def shipped_map(dim: int) -> ContextMap:
    """The map fitted for the shipped embedding model; the plain sum for another model."""
    if CONTEXT_MAP.exists():
        with np.load(CONTEXT_MAP) as saved:
            weights = saved["weights"].astype(np.float32)
            model = str(saved["model"])
        if model == MODEL_ID and weights.shape == (2 * dim + 1, dim):
            return ContextMap(weights, model)
    log.warning(
        "no context map fits this embedding model: contexts are plain sums, which recall worse; "
        "fit one with `python -m memory fit-context FILE`",
        extra={"model": MODEL_ID, "dim": dim},
    )
    return SUMMED


def fit(previous: Vectors, own: Vectors, context: Vectors, ridge: float = RIDGE) -> ContextMap:
    """The ridge regression from (previous, own, 1) to the context vectors given."""
    inputs = np.hstack([previous, own, np.ones((len(own), 1), dtype=np.float32)]).astype(np.float64)
    gram = inputs.T @ inputs + ridge * np.eye(inputs.shape[1])
    weights = np.linalg.solve(gram, inputs.T @ np.asarray(context, dtype=np.float64))
    return ContextMap(weights.astype(np.float32))


@dataclass(frozen=True)
class TurnPair:
    previous: str
    text: str


def locomo_pairs(path: Path, fingerprints: frozenset[str]) -> list[TurnPair]:
    """The turns read after another (said within `CONTEXT_GAP` of it) in the conversations of a
    LoCoMo file listed by `fingerprints`, each turn's text as `violet eval memory` captures it."""
    pairs: list[TurnPair] = []
    for sample in json.loads(path.read_text()):
        turns = list(_locomo_turns(sample["conversation"]))
        if conversation_fingerprint(text for text, _ in turns) not in fingerprints:
            continue
        for (before, said), (text, at) in zip(turns, turns[1:], strict=False):
            if text.strip() and before.strip() and at - said <= CONTEXT_GAP:
                pairs.append(TurnPair(before.strip(), text.strip()))
    return pairs


def _locomo_turns(talk: dict[str, object]) -> Iterator[tuple[str, datetime]]:
    numbers = sorted(
        int(key.removeprefix("session_"))
        for key, value in talk.items()
        if key.startswith("session_")
        and key.removeprefix("session_").isdigit()
        and isinstance(value, list)
    )
    for number in numbers:
        began = datetime.strptime(
            str(talk[f"session_{number}_date_time"]).strip(), "%I:%M %p on %d %B, %Y"
        ).replace(tzinfo=UTC)
        session = talk[f"session_{number}"]
        assert isinstance(session, list)
        for i, turn in enumerate(session):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            yield text, began + i * timedelta(seconds=30)


class PairEmbedder(Protocol):
    """What fitting needs of the embedder (`violet.embedder.Embedder`)."""

    def embed(self, texts: Sequence[str]) -> Vectors: ...

    def embed_as_queries(self, texts: Sequence[str]) -> Vectors: ...


def fit_on_file(path: Path, embedder: PairEmbedder, ridge: float = RIDGE) -> tuple[ContextMap, int]:
    """The map fitted on the tuning conversations of a LoCoMo file, and how many pairs it saw:
    each turn's own vector read as a query, the pair read together as a passage."""
    pairs = locomo_pairs(path, tuned_fingerprints())
    if not pairs:
        raise ValueError(f"{path} holds none of the conversations the ranking was tuned on")
    texts = list(dict.fromkeys(t for pair in pairs for t in (pair.previous, pair.text)))
    own = dict(zip(texts, embedder.embed_as_queries(texts), strict=True))
    together = embedder.embed([contextual_text(pair.previous, pair.text) for pair in pairs])
    previous = np.stack([own[pair.previous] for pair in pairs])
    said = np.stack([own[pair.text] for pair in pairs])
    return fit(previous, said, together, ridge), len(pairs)
