"""Two-stage routing of one person's request, logged and put on the trace.

1. Pre-filter: the person's cards active in the last 7 days, scored by the trained weights;
   the 3 best are the candidates, each with the chance it beats opening new work.
2. Pick: the fast model's strict `pick` chooses a candidate or "new", with a confidence. A
   choice that is neither, a failed call, or a confidence below 0.5 opens new work; with no
   candidates there is no model call at all.

A work session's question about another of the person's topics (`nearest`) uses stage one
alone: the best-scored card besides the asker's own, or none.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime

from opentelemetry import trace

from router.cards import ACTIVE_FOR, Card
from router.embedding import Embedders, opening_vector
from router.features import SENTENCE_MODELS, Request
from router.index import CardIndex
from router.person_data import Erasure
from router.scoring import Scored, Scorer
from router.store import CardStore, Decision, DecisionLog
from violet.clock import utc_now
from violet.embedder import embed_query_in_thread
from violet.fallbacks import fallback
from violet.metrics import ROUTES
from violet.models import Candidate, ModelClient, ModelError, PersonGone, Pick, pick
from violet.models.structured import NEW, PICK_THRESHOLD

CANDIDATES = 3


@dataclass(frozen=True)
class Shortlist:
    """The pre-filter's candidates, best first, their scores, and P(request opens new work)."""

    cards: list[Card]
    scores: list[float]
    opening: float


def _decision(
    person: str,
    request: str,
    now: datetime,
    chosen: str,
    confidence: float,
    reason: str,
    shortlist: Shortlist | None = None,
) -> Decision:
    return Decision(
        person=person,
        request=request,
        candidates=[card.topic for card in shortlist.cards] if shortlist else [],
        scores=list(shortlist.scores) if shortlist else [],
        pick=chosen,
        topic="" if chosen == NEW else chosen,
        confidence=confidence,
        reason=reason,
        opening=shortlist.opening if shortlist else 0.0,
        at=now,
    )


@dataclass(frozen=True)
class Nearest:
    """The topic a question is about, with its score; `topic` is empty when none is near."""

    topic: str
    score: float


class PickRejected(ValueError):
    """The pick named something that is neither a candidate nor new work."""


class Router:
    def __init__(
        self,
        cards: CardStore,
        index: CardIndex,
        embedders: Embedders,
        scorer: Scorer,
        model: ModelClient,
        decisions: DecisionLog,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self._cards = cards
        self._lifetimes = cards.lifetimes
        self._index = index
        self._embedders = embedders
        self._scorer = scorer
        self._model = model
        self._decisions = decisions
        self._tracer = tracer or trace.get_tracer(__name__)
        self.erasure = Erasure(cards, index, decisions)

    async def update_card(self, person: str, card: Card) -> None:
        """Raises PersonErased when the person is erased meanwhile: then nothing is kept."""
        lifetime = await self._lifetimes.current(person)
        embedded = await self._index.embed(person, card)
        # The vectors too are written while the lifetime is held, so that an erasure, which
        # waits for it, finds them.
        async with self._lifetimes.claimed(person, lifetime) as db:
            await self._cards.put(db, person, card)
            await self._index.put(embedded)

    async def route(self, person: str, request: str, now: datetime | None = None) -> Decision:
        """Raises PersonErased when the person is erased meanwhile: then nothing is logged."""
        now = now or utc_now()
        lifetime = await self._lifetimes.current(person)
        with self._tracer.start_as_current_span("router.route") as span:
            decision = await self._decide(person, request, now)
            async with self._lifetimes.claimed(person, lifetime) as db:
                await self._decisions.record(db, decision)
            span.set_attributes(
                {
                    "violet.route.candidates": decision.candidates,
                    "violet.route.scores": decision.scores,
                    "violet.route.pick": decision.pick,
                    "violet.route.confidence": decision.confidence,
                    "violet.route.reason": decision.reason,
                }
            )
        ROUTES.add(1, {"violet.route.outcome": "new" if decision.pick == NEW else "existing"})
        return decision

    async def decisions(self, person: str, limit: int) -> list[Decision]:
        return list(await self._decisions.recent(person, limit))

    async def _decide(self, person: str, request: str, now: datetime) -> Decision:
        active = await self._cards.active(person, since=now - ACTIVE_FOR)
        if not active:
            return _decision(person, request, now, NEW, 1.0, "no topic active in the last 7 days")
        scored = await self._scored(person, request, active, now)
        shortlist = Shortlist(
            cards=scored.cards[:CANDIDATES],
            scores=[round(s, 4) for s in scored.scores[:CANDIDATES]],
            opening=round(scored.opening, 4),
        )
        try:
            chosen = await self._pick(person, request, shortlist, now)
        except PersonGone:
            raise
        except (ModelError, PickRejected) as error:
            fallback("pick_failed", f"{error}; the request opens new work")
            return _decision(person, request, now, NEW, 0.0, f"no pick: {error}", shortlist)
        if chosen.choice != NEW and chosen.confidence < PICK_THRESHOLD:
            reason = (
                f"{chosen.reason} (chose {chosen.choice} at confidence "
                f"{chosen.confidence:.2f}, below {PICK_THRESHOLD}: new work)"
            )
            return _decision(person, request, now, NEW, chosen.confidence, reason, shortlist)
        return _decision(
            person, request, now, chosen.choice, chosen.confidence, chosen.reason, shortlist
        )

    async def nearest(
        self, person: str, question: str, besides: str, now: datetime | None = None
    ) -> Nearest:
        """The person's active topic a question from their work on `besides` is about: the
        card the pre-filter's scores rank first among the others, when it scores at least the
        pick's threshold. There is no pick and no new work: a question asks what is known."""
        now = now or utc_now()
        with self._tracer.start_as_current_span("router.nearest") as span:
            since = now - ACTIVE_FOR
            others = [
                c for c in await self._cards.active(person, since=since) if c.topic != besides
            ]
            found = Nearest("", 0.0)
            if others:
                # A question is no reply to the most recent topic: it reaches only a topic it
                # shares a word or a name with.
                scored = await self._scored(person, question, others, now, stands_alone=True)
                best = round(scored.scores[0], 4)
                span.set_attributes(
                    {
                        "violet.ask.candidates": [c.topic for c in scored.cards[:CANDIDATES]],
                        "violet.ask.scores": [round(s, 4) for s in scored.scores[:CANDIDATES]],
                    }
                )
                if best >= PICK_THRESHOLD:
                    found = Nearest(scored.cards[0].topic, best)
            span.set_attributes({"violet.ask.topic": found.topic, "violet.ask.score": found.score})
        return found

    async def _scored(
        self,
        person: str,
        request: str,
        cards: list[Card],
        now: datetime,
        stands_alone: bool = False,
    ) -> Scored:
        """The pre-filter: `cards` scored against the request, best first."""
        # Each model in its own thread: on two cores both run at once.
        embedded = await asyncio.gather(
            *(embed_query_in_thread(self._embedders[m], request) for m in SENTENCE_MODELS)
        )
        vectors = dict(zip(SENTENCE_MODELS, embedded, strict=True))
        known = await self._cards.count(person)
        sims = await self._index.similarities(person, vectors, cards, known)
        request_read = Request(request, opening_vector(vectors))
        return self._scorer.score(request_read, cards, sims, now, stands_alone)

    async def _pick(self, person: str, request: str, shortlist: Shortlist, now: datetime) -> Pick:
        candidates = [
            Candidate(card.topic, card.description(now), score)
            for card, score in zip(shortlist.cards, shortlist.scores, strict=True)
        ]
        chosen = await pick(self._model, request=request, candidates=candidates, person=person)
        allowed = {card.topic for card in shortlist.cards} | {NEW}
        if chosen.choice not in allowed:
            raise PickRejected(f"the pick named {chosen.choice!r}, which is not a candidate")
        if not 0.0 <= chosen.confidence <= 1.0:
            raise PickRejected(f"the pick's confidence {chosen.confidence} is not within 0 to 1")
        return chosen
