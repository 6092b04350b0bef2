"""`violet eval routing FILE`: routing accuracy on JSONL cases (CONTRACTS section 6).

Each case runs through the router's own parts (the ones the service runs, in this process, on
fresh stores in a temporary VIOLET_HOME), as its own person: its cards go in through
`update_card` (SQL and the vector store, embedded with the real embedder), then the request is
routed at the case's `now`: the 7-day filter, the trained pre-filter, then the pick (the fast
model when ANTHROPIC_API_KEY is set, else the offline stand-in).

Figures:
- prefilter_top1 / prefilter_top3: over cases whose gold is a card, the gold is the first / among
  the 3 candidates; recency_top1 / recency_top3: the same for the most recently active cards.
- pick_top1: over all cases, the routing decision (a card, or new work) is the gold one.
- new_precision / new_recall: of the decisions to open new work, and of the gold new cases.
- p50_ms: median time of one routing decision, request embedding and pick included.
- weights_saw_file / cases_seen: whether the shipped weights were trained on any case of the
  file, and on how many (by the fingerprints they record): figures on such a file are partly or
  wholly in-sample, not those of unseen people.
The last stdout line is the JSON object of these figures.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import dataclass, field

from router.cards import ACTIVE_FOR
from router.cases import NEW, Case, fingerprint, load_cases
from router.embedding import shipped_embedders
from router.features import SENTENCE_MODELS
from router.runtime import migrate, open_router
from router.scoring import Weights
from router.settings import RouterSettings
from router.training import Memo
from violet.models import JsonObject
from violet_cli.evaluation import on_fresh_stores

PROGRESS_EVERY = 100


@dataclass
class Tally:
    card_cases: int = 0
    prefilter_top1: int = 0
    prefilter_top3: int = 0
    recency_top1: int = 0
    recency_top3: int = 0
    right: int = 0
    decided_new: int = 0
    gold_new: int = 0
    both_new: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def count(self, case: Case, candidates: list[str], topic: str) -> None:
        decided = topic or NEW
        self.right += decided == case.gold
        self.decided_new += decided == NEW
        if case.gold == NEW:
            self.gold_new += 1
            self.both_new += decided == NEW
            return
        self.card_cases += 1
        self.prefilter_top1 += candidates[:1] == [case.gold]
        self.prefilter_top3 += case.gold in candidates[:3]
        recent = most_recent_first(case)
        self.recency_top1 += recent[:1] == [case.gold]
        self.recency_top3 += case.gold in recent[:3]

    def report(self, cases: int) -> JsonObject:
        def share(part: int, whole: int) -> float:
            return round(part / whole, 3) if whole else 0.0

        return {
            "cases": cases,
            "prefilter_top1": share(self.prefilter_top1, self.card_cases),
            "prefilter_top3": share(self.prefilter_top3, self.card_cases),
            "pick_top1": share(self.right, cases),
            "recency_top1": share(self.recency_top1, self.card_cases),
            "recency_top3": share(self.recency_top3, self.card_cases),
            "new_precision": share(self.both_new, self.decided_new),
            "new_recall": share(self.both_new, self.gold_new),
            "p50_ms": round(statistics.median(self.latencies_ms), 1) if self.latencies_ms else 0.0,
        }


def most_recent_first(case: Case) -> list[str]:
    active = [c for c in case.cards if case.now - ACTIVE_FOR <= c.last_active]
    return [c.topic for c in sorted(active, key=lambda c: c.last_active, reverse=True)]


async def _evaluate(cases: list[Case], settings: RouterSettings) -> JsonObject:
    tally = Tally()
    # Cases repeat the same cards many times: each distinct text is embedded once.
    shipped = await asyncio.to_thread(shipped_embedders)
    embedders = {model: Memo(shipped[model]) for model in SENTENCE_MODELS}
    async with open_router(settings, embedders) as router:
        for done, case in enumerate(cases, start=1):
            person = f"{case.person}/{case.case_id}"
            for card in case.cards:
                await router.update_card(person, card)
            began = time.perf_counter()
            decision = await router.route(person, case.request, now=case.now)
            tally.latencies_ms.append((time.perf_counter() - began) * 1000)
            tally.count(case, decision.candidates, decision.topic)
            if done % PROGRESS_EVERY == 0:
                print(f"{done}/{len(cases)} cases routed", file=sys.stderr)
    return tally.report(len(cases)) | in_sample(cases, Weights.load())


def in_sample(cases: list[Case], weights: Weights) -> JsonObject:
    """Whether the weights were trained on any of `cases`, and on how many."""
    seen = weights.cases_seen([fingerprint(case) for case in cases])
    return {"weights_saw_file": seen > 0, "cases_seen": seen}


def eval_routing(path: str) -> JsonObject:
    """Runs the evaluation on fresh stores; prints the report as the last stdout line."""
    cases = load_cases(path)
    return on_fresh_stores(
        "routing", RouterSettings, migrate, lambda settings: _evaluate(cases, settings)
    )
