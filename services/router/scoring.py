"""Stage one's score: the trained weights, shipped as `weights.json`, applied to a request.

Each active card gets a utility from its features (a conditional logit); "new work" gets one
from the opening classifier's logit. Cards are ranked by utility, and a card's score is the
chance that the request continues it rather than opening new work:
sigmoid(utility(card) - utility(new)). A score of at least 0.5 thus means the card beats "new",
which is what the pick's threshold reads.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from router import lexical
from router.cards import Card
from router.features import CARD_FEATURES, Request, card_features, opening_features
from router.learning import sigmoid
from violet.models import JsonObject

# Shipped inside the package; `python -m router train FILE` rewrites it.
SHIPPED_WEIGHTS = Path(__file__).with_name("weights.json")


_BM25 = CARD_FEATURES.index("bm25")
_ENTITY_HITS = CARD_FEATURES.index("entity_hits")


class WeightsMismatch(RuntimeError):
    """The shipped weights were trained with other sentence models or another feature set."""


@dataclass(frozen=True)
class Weights:
    # The sentence models of features.SENTENCE_MODELS, in order; the opening classifier reads
    # their request vectors end to end, `dimension` numbers.
    embedders: list[str]
    dimension: int
    features: list[str]
    mean: list[float]
    scale: list[float]
    card: list[float]
    # The utility of new work: a constant, then the factor of the opening logit.
    new: list[float]
    opening: list[float]
    # How it was trained and what it scored in cross-validation; not used for scoring.
    report: JsonObject = field(default_factory=dict)
    # The fingerprints of the cases trained on (cases.fingerprint), so that an evaluation can
    # tell whether its figures are in-sample.
    seen: list[str] = field(default_factory=list)

    def cases_seen(self, fingerprints: Collection[str]) -> int:
        """How many of `fingerprints` belong to cases the weights were trained on."""
        known = set(self.seen)
        return sum(f in known for f in fingerprints)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(_rounded(asdict(self)), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path = SHIPPED_WEIGHTS) -> Weights:
        return cls(**json.loads(path.read_text()))


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Scored:
    """The active cards, best first, with their scores; `opening` is P(opens new work)."""

    cards: list[Card]
    scores: list[float]
    opening: float


class Scorer:
    def __init__(self, weights: Weights, embedders: Sequence[str], dimension: int) -> None:
        if (list(weights.embedders), weights.dimension) != (list(embedders), dimension):
            raise WeightsMismatch(
                f"The routing weights were trained with {', '.join(weights.embedders)} "
                f"({weights.dimension} dimensions), but the router runs {', '.join(embedders)} "
                f"({dimension}): retrain them with `python -m router train FILE.jsonl`."
            )
        unknown = set(weights.features) - set(CARD_FEATURES)
        if unknown:
            raise WeightsMismatch(f"The routing weights use unknown features: {sorted(unknown)}")
        self._columns = [CARD_FEATURES.index(name) for name in weights.features]
        self._mean = np.array(weights.mean)
        self._scale = np.array(weights.scale)
        self._card = np.array(weights.card)
        self._new = np.array(weights.new)
        self._opening = np.array(weights.opening)

    def opening_logit(self, request: Request) -> float:
        return float(opening_features(request) @ self._opening)

    def utilities(
        self,
        request: Request,
        cards: Sequence[Card],
        similarities: NDArray[np.float64],
        now: datetime,
        stands_alone: bool = False,
    ) -> tuple[NDArray[np.float64], float, float]:
        """The cards' utilities, the utility of new work, and the opening logit. A request
        that `stands_alone` is never read as a reply, whatever its words."""
        opening = self.opening_logit(request)
        every = card_features(request, cards, similarities, now, opening)
        utilities = ((every[:, self._columns] - self._mean) / self._scale) @ self._card
        if stands_alone or lexical.opens_with_task(request.text):
            # A task of its own ("calculate 1234*2") continues no topic it shares no word or
            # entity with, however recent: recency speaks for replies, not for new tasks.
            unrelated = (every[:, _BM25] == 0) & (every[:, _ENTITY_HITS] == 0)
            utilities = np.where(unrelated, -np.inf, utilities)
        return utilities, float(self._new @ [1.0, opening]), opening

    def score(
        self,
        request: Request,
        cards: Sequence[Card],
        similarities: NDArray[np.float64],
        now: datetime,
        stands_alone: bool = False,
    ) -> Scored:
        utilities, new_utility, opening = self.utilities(
            request, cards, similarities, now, stands_alone
        )
        order = np.argsort(-utilities, kind="stable")
        return Scored(
            cards=[cards[i] for i in order],
            scores=[float(sigmoid(utilities[i] - new_utility)) for i in order],
            opening=float(sigmoid(opening)),
        )
