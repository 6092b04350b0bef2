"""Training the routing weights on routing cases: `python -m router train FILE.jsonl`.

Two models, both small:
- The opening classifier, a logistic regression over the request's embedding (plus two word
  counts): does this request open new work? It learns without gold labels, from the cards
  alone: the opening requests that card summaries quote (`first asking: "..."`) against the
  cards' later requests.
- The choice model, a conditional logit over each case's active cards and "new", with the card
  features of `features.py` and, for "new", a constant and the opening logit. The opening
  logits it learns from are cross-fitted (each person's from a classifier trained without them),
  so that it weighs them as they behave on people it has not seen.

Every figure reported is cross-validated by person: each person's cases are scored by models
trained on the other people only. People held out (`--held-out`) take no part in choosing
anything: they are scored once by models trained on everyone else, and the shipped weights are
then trained on every case.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from router import lexical
from router.cards import ACTIVE_FOR, Card
from router.cases import NEW, Case, fingerprint
from router.embedding import (
    MODEL_IDS,
    Embedders,
    Vector,
    card_vectors,
    opening_dimension,
    opening_vector,
    request_vectors,
    similarities,
)
from router.features import (
    CARD_FEATURES,
    SENTENCE_MODELS,
    Request,
    card_features,
    opening_features,
)
from router.learning import Choice, fit_choice, fit_logistic, softmax
from router.scoring import Weights
from violet.embedder import TextEmbedder
from violet.models import JsonObject

# The dialogue features are many sparse indicators: a firm penalty keeps the choice model from
# leaning on the few cases each one marks (docs/routing.md, the ridge strengths tried).
CHOICE_RIDGE = 10.0
OPENING_RIDGE = 0.03
CALIBRATION_BINS = 10
_QUOTED_OPENING = re.compile(r'first asking: "(?P<opening>.*)"\s*$')

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    **{
        f"{model} cosines": tuple(
            f for f in CARD_FEATURES if f.startswith("cos_") and (model in f) == (model != "e5")
        )
        for model in SENTENCE_MODELS
    },
    "all cosines": tuple(f for f in CARD_FEATURES if f.startswith("cos_")),
    "bm25": ("bm25", "bm25_relative"),
    "entity hits": ("entity_hits",),
    "recency": (
        "most_recent",
        "log_recency_rank",
        "log_age_hours",
        "most_recent_x_reply",
        "most_recent_x_opening",
    ),
    "most recent x reply/opening": ("most_recent_x_reply", "most_recent_x_opening"),
    "outcome cues": tuple(f for f in CARD_FEATURES if "outcome_" in f and "cos" not in f),
}
BASELINES: dict[str, tuple[str, ...]] = {
    "recency alone": ("most_recent", "log_recency_rank", "log_age_hours"),
    "e5 cosine whole card alone": ("cos_card",),
    "minilm cosine whole card alone": ("cos_minilm_card",),
    "bm25 alone": ("bm25", "bm25_relative"),
}


@dataclass(frozen=True)
class Prepared:
    """One case, ready to fit: card features at opening logit 0, and their slope in it."""

    person: str
    base: NDArray[np.float64]
    slope: NDArray[np.float64]
    opening: NDArray[np.float64]
    # Index of the gold card among the active cards; -1 for new work.
    gold: int
    # The request starts with a task verb: the scorer's rule for cards it shares nothing with.
    task: bool = False

    def features(self, opening_logit: float, columns: list[int]) -> NDArray[np.float64]:
        return (self.base + opening_logit * self.slope)[:, columns]


@dataclass(frozen=True)
class OpeningExample:
    person: str
    features: NDArray[np.float64]
    opens: bool


class Memo:
    """The embedder, embedding each distinct text once (cases repeat cards a lot)."""

    def __init__(self, embedder: TextEmbedder) -> None:
        self._embedder = embedder
        self.dim = embedder.dim
        self._stored: dict[str, Vector] = {}
        self._queries: dict[str, Vector] = {}

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._stored))
        if missing:
            self._stored.update(zip(missing, self._embedder.embed(missing), strict=True))
        return (
            np.stack([self._stored[t] for t in texts])
            if texts
            else np.zeros((0, self.dim), dtype=np.float32)
        )

    def embed_query(self, text: str) -> Vector:
        if text not in self._queries:
            self._queries[text] = self._embedder.embed_query(text)
        return self._queries[text]


def active_cards(case: Case) -> list[Card]:
    return [c for c in case.cards if case.now - ACTIVE_FOR <= c.last_active]


def prepare(cases: Sequence[Case], embedders: Embedders) -> list[Prepared]:
    prepared = []
    for case in cases:
        cards = active_cards(case)
        vectors = request_vectors(embedders, case.request)
        request = Request(case.request, opening_vector(vectors))
        sims = similarities(vectors, card_vectors(embedders, cards))
        base = card_features(request, cards, sims, case.now, opening=0.0)
        slope = card_features(request, cards, sims, case.now, opening=1.0) - base
        topics = [c.topic for c in cards]
        gold = topics.index(case.gold) if case.gold in topics else -1
        if case.gold != NEW and gold < 0:
            continue  # the gold card is not active: no ranking can find it
        task = lexical.opens_with_task(case.request)
        prepared.append(Prepared(case.person, base, slope, opening_features(request), gold, task))
    return prepared


def opening_examples(cases: Sequence[Case], embedders: Embedders) -> list[OpeningExample]:
    """Quoted opening requests (opens) and later requests of the same cards (does not)."""
    labelled: dict[tuple[str, str], bool] = {}
    for case in cases:
        for card in case.cards:
            quoted = _QUOTED_OPENING.search(card.summary)
            if not quoted:
                continue
            labelled[(case.person, quoted.group("opening"))] = True
            labelled.setdefault((case.person, card.last_request), False)
    return [
        OpeningExample(
            person,
            opening_features(Request(text, opening_vector(request_vectors(embedders, text)))),
            opens,
        )
        for (person, text), opens in labelled.items()
    ]


class OpeningFits:
    """Opening classifiers trained without given people, each fitted once."""

    def __init__(self, examples: Sequence[OpeningExample]) -> None:
        self._examples = examples
        self._fitted: dict[frozenset[str], NDArray[np.float64]] = {}

    def without(self, people: frozenset[str]) -> NDArray[np.float64]:
        if people not in self._fitted:
            kept = [e for e in self._examples if e.person not in people]
            features = np.stack([e.features for e in kept])
            labels = np.array([e.opens for e in kept])
            self._fitted[people] = fit_logistic(features, labels, OPENING_RIDGE)
        return self._fitted[people]


@dataclass(frozen=True)
class Fitted:
    columns: list[int]
    mean: NDArray[np.float64]
    scale: NDArray[np.float64]
    card: NDArray[np.float64]
    new: NDArray[np.float64]
    opening: NDArray[np.float64]

    def decide(self, case: Prepared) -> tuple[NDArray[np.float64], float, float]:
        """The cards' utilities, new work's utility, and the opening logit, as the scorer
        computes them (its rule for tasks included)."""
        logit = float(case.opening @ self.opening)
        x = (case.features(logit, self.columns) - self.mean) / self.scale
        utilities = x @ self.card
        if case.task:
            every = case.features(logit, list(range(len(CARD_FEATURES))))
            utilities = np.where(unrelated(every), -np.inf, utilities)
        return utilities, float(self.new @ [1.0, logit]), logit


def unrelated(every: NDArray[np.float64]) -> NDArray[np.bool_]:
    """The cards (rows of CARD_FEATURES) that share no word and no entity with the request."""
    return (every[:, _BM25] == 0) & (every[:, _ENTITY_HITS] == 0)


_BM25 = CARD_FEATURES.index("bm25")
_ENTITY_HITS = CARD_FEATURES.index("entity_hits")


def fit(
    cases: Sequence[Prepared],
    openings: OpeningFits,
    excluded: frozenset[str],
    features: Sequence[str],
    use_opening: bool = True,
) -> Fitted:
    """Both models, trained on `cases` and on the opening examples of everyone not excluded."""
    columns = [CARD_FEATURES.index(f) for f in features]
    opening = openings.without(excluded)
    logits = [
        float(case.opening @ openings.without(excluded | {case.person})) if use_opening else 0.0
        for case in cases
    ]
    if not use_opening:
        opening = np.zeros_like(opening)
    matrices = [case.features(logit, columns) for case, logit in zip(cases, logits, strict=True)]
    stacked = np.concatenate(matrices)
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0) + 1e-9
    count = len(columns)
    choices = []
    for case, x, logit in zip(cases, matrices, logits, strict=True):
        z = np.zeros((len(x) + 1, count + 2))
        z[:-1, :count] = (x - mean) / scale
        z[-1, count:] = [1.0, logit]
        choices.append(Choice(z, case.gold if case.gold >= 0 else len(x)))
    ridge = np.full(count + 2, CHOICE_RIDGE)
    ridge[count] = 0.0  # new work's constant is free
    weights = fit_choice(choices, ridge)
    return Fitted(columns, mean, scale, weights[:count], weights[count:], opening)


@dataclass
class Tally:
    """Decisions on scored cases, for the figures."""

    ranks: list[int] = field(default_factory=list)
    # (decided new, gold new, decided right)
    outcomes: list[tuple[bool, bool, bool]] = field(default_factory=list)
    opening_scores: list[tuple[float, bool]] = field(default_factory=list)
    # The model's chance of the alternative it decided on (a card or new work), for calibration.
    confidences: list[float] = field(default_factory=list)

    def count(self, fitted: Fitted, case: Prepared) -> None:
        utilities, new_utility, logit = fitted.decide(case)
        order = list(np.argsort(-utilities, kind="stable"))
        best = order[0]
        # The offline pick: the best card when its score, sigmoid(utility - new's), is >= 0.5.
        decided_new = bool(utilities[best] < new_utility)
        if case.gold >= 0:
            self.ranks.append(order.index(case.gold))
        right = decided_new if case.gold < 0 else (not decided_new and best == case.gold)
        self.outcomes.append((decided_new, case.gold < 0, right))
        self.opening_scores.append((logit, case.gold < 0))
        chances = softmax(np.append(utilities, new_utility))
        self.confidences.append(float(chances[-1] if decided_new else chances[best]))

    def figures(self, use_opening: bool = True) -> dict[str, float]:
        figures = _figures(self.ranks, self.outcomes, self.opening_scores if use_opening else [])
        rights = [right for _, _, right in self.outcomes]
        figures["calibration_error"] = round(calibration_error(self.confidences, rights), 3)
        return figures


def calibration_error(confidences: Sequence[float], rights: Sequence[bool]) -> float:
    """Expected calibration error over 10 equal bins of confidence: how far, on average over
    decisions, the chance the model gave its decision lies from how often such decisions were
    right."""
    chances, right = np.asarray(confidences), np.asarray(rights, dtype=np.float64)
    bins = np.minimum((chances * CALIBRATION_BINS).astype(int), CALIBRATION_BINS - 1)
    error = 0.0
    for b in np.unique(bins):
        inside = bins == b
        error += inside.mean() * abs(chances[inside].mean() - right[inside].mean())
    return float(error)


def cross_validate(
    cases: Sequence[Prepared],
    openings: OpeningFits,
    features: Sequence[str],
    use_opening: bool = True,
    kept_apart: frozenset[str] = frozenset(),
) -> dict[str, float]:
    """Leave-one-person-out figures: pre-filter top-1/top-3 over cases whose gold is a card;
    pick top-1 over all cases (the offline pick: a card wins over new when its score is at
    least 0.5); new-work precision and recall; the opening classifier's AUROC for gold new.
    The opening examples of `kept_apart` people are never learned from."""
    tally = Tally()
    for person in sorted({c.person for c in cases}):
        fitted = fit(
            [c for c in cases if c.person != person],
            openings,
            frozenset({person}) | kept_apart,
            features,
            use_opening,
        )
        for case in (c for c in cases if c.person == person):
            tally.count(fitted, case)
    return tally.figures(use_opening)


def held_out_figures(
    train_on: Sequence[Prepared],
    held_out: Sequence[Prepared],
    openings: OpeningFits,
    features: Sequence[str],
) -> dict[str, float]:
    """The held-out people's figures, scored by models trained on `train_on` alone."""
    people = frozenset(c.person for c in held_out)
    fitted = fit(train_on, openings, people, features)
    tally = Tally()
    for case in held_out:
        tally.count(fitted, case)
    return tally.figures()


def _figures(
    ranks: list[int],
    outcomes: list[tuple[bool, bool, bool]],
    opening_scores: list[tuple[float, bool]],
) -> dict[str, float]:
    ranked = np.array(ranks)
    decided_new = np.array([o[0] for o in outcomes])
    gold_new = np.array([o[1] for o in outcomes])
    both = float((decided_new & gold_new).sum())
    figures = {
        "prefilter_top1": float((ranked == 0).mean()),
        "prefilter_top3": float((ranked < 3).mean()),
        "pick_top1": float(np.mean([o[2] for o in outcomes])),
        "new_precision": both / max(float(decided_new.sum()), 1.0),
        "new_recall": both / max(float(gold_new.sum()), 1.0),
    }
    if opening_scores:
        figures["opening_auroc"] = auroc(
            [s for s, _ in opening_scores], [n for _, n in opening_scores]
        )
    return {name: round(value, 3) for name, value in figures.items()}


def auroc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    values, labels = np.asarray(scores), np.asarray(positive, dtype=bool)
    ranks = np.empty(len(values))
    ranks[values.argsort(kind="stable")] = np.arange(1, len(values) + 1)
    count, others = int(labels.sum()), int((~labels).sum())
    if not count or not others:
        return float("nan")
    return float((ranks[labels].sum() - count * (count + 1) / 2) / (count * others))


def train(
    cases: Sequence[Case],
    embedders: Embedders,
    held_out: frozenset[str] = frozenset(),
    ablations: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> Weights:
    """The weights for all of `cases`, with figures cross-validated by person over everyone
    but `held_out`, and the held-out people's figures, in the report."""
    memos = {model: Memo(embedders[model]) for model in SENTENCE_MODELS}
    progress("embedding the cases")
    prepared = prepare(cases, memos)
    examples = opening_examples(cases, memos)
    openings = OpeningFits(examples)
    chosen_on = [c for c in prepared if c.person not in held_out]
    features = list(CARD_FEATURES)
    progress("cross-validating by person")
    report: JsonObject = {
        "cases": len(prepared),
        "people": len({c.person for c in prepared}),
        "opening_examples": len(examples),
        "choice_ridge": CHOICE_RIDGE,
        "opening_ridge": OPENING_RIDGE,
        "held_out_people": sorted(held_out),
        "cross_validated_by_person": cross_validate(
            chosen_on, openings, features, kept_apart=held_out
        ),
    }
    if held_out:
        progress("scoring the held-out people")
        kept_apart = [c for c in prepared if c.person in held_out]
        report["held_out"] = held_out_figures(chosen_on, kept_apart, openings, features)
    if ablations:
        report["without"] = {}
        for name, group in FEATURE_GROUPS.items():
            progress(f"without {name}")
            kept = [f for f in features if f not in group]
            report["without"][name] = cross_validate(chosen_on, openings, kept, kept_apart=held_out)
        progress("without the opening classifier")
        report["without"]["opening classifier"] = cross_validate(
            chosen_on, openings, features, use_opening=False, kept_apart=held_out
        )
        report["alone"] = {}
        for name, group in BASELINES.items():
            progress(f"{name}")
            report["alone"][name] = cross_validate(
                chosen_on, openings, group, use_opening=False, kept_apart=held_out
            )
    fitted = fit(prepared, openings, frozenset(), features)
    return Weights(
        embedders=list(MODEL_IDS),
        dimension=opening_dimension(embedders),
        features=features,
        mean=fitted.mean.tolist(),
        scale=fitted.scale.tolist(),
        card=fitted.card.tolist(),
        new=fitted.new.tolist(),
        opening=fitted.opening.tolist(),
        report=report,
        seen=[fingerprint(case) for case in cases],
    )
