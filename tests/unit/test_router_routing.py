"""Two-stage routing on real stores (SQLite, the embedded vector store) with a small stand-in
embedder and hand-set weights, so that each rule can be shown on its own."""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from qdrant_client import AsyncQdrantClient

from router.cards import Card
from router.features import SENTENCE_MODELS
from router.index import CardIndex
from router.routing import Router
from router.runtime import migrate
from router.scoring import Scorer, Weights
from router.settings import RouterSettings
from router.store import CardStore, DecisionLog
from violet import database
from violet.models import OfflineModelClient
from violet.vectors import QdrantVectorStore, VectorStore, open_vector_store

NOW = datetime(2024, 10, 16, 12, 0, tzinfo=UTC)
DIMENSION = 64


class WordsEmbedder:
    """Hashed bag of words: texts sharing words are close."""

    dim = DIMENSION

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.embed_query(t) for t in texts]) if texts else np.zeros((0, 64))

    def embed_query(self, text: str) -> NDArray[np.float32]:
        vector = np.zeros(DIMENSION, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[zlib.crc32(word.encode()) % DIMENSION] += 1.0
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector + DIMENSION**-0.5


# The whole card's cosine decides; new work wins only over cards sharing no words.
WEIGHTS = Weights(
    embedders=["words", "words"],
    dimension=2 * DIMENSION,
    features=["cos_card"],
    mean=[0.0],
    scale=[1.0],
    card=[10.0],
    new=[2.0, 0.0],
    # Both models' request vectors end to end, two word counts, the constant.
    opening=[0.0] * (2 * DIMENSION + 3),
)


class ScriptedModel(OfflineModelClient):
    """Answers every structured call with one fixed answer, and counts the calls."""

    def __init__(self, answer: dict | None = None) -> None:
        super().__init__()
        self.answer = answer
        self.calls = 0

    async def structured(self, **call) -> dict:  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.answer is None:
            return await super().structured(**call)
        return dict(self.answer)


class Harness:
    def __init__(self, router: Router, model: ScriptedModel, spans: InMemorySpanExporter):
        self.router = router
        self.model = model
        self.spans = spans

    async def card(self, person: str, topic: str, text: str, days_ago: float = 0.1) -> None:
        await self.router.update_card(
            person,
            Card(
                topic=topic,
                title=text,
                summary=text,
                entities=(),
                last_request=text,
                last_outcome=f"Here is what I found about {text}.",
                last_active=NOW - timedelta(days=days_ago),
            ),
        )


async def vector_store(engine: str, settings: RouterSettings) -> VectorStore:
    if engine == "edge":
        return await open_vector_store(settings, DIMENSION, "router")
    # qdrant-client's local mode speaks the API of a Qdrant server.
    return await QdrantVectorStore.open(
        AsyncQdrantClient(location=":memory:"), DIMENSION, "violet_router"
    )


@pytest.fixture(params=["edge", "qdrant-client"])
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    settings = RouterSettings(home=tmp_path, database_url="", qdrant_url="")
    migrate(settings)
    engine = database.open_engine(database.sync_url(settings, "router"))
    vectors = await vector_store(request.param, settings)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedModel()
    # Both of the router's sentence models stand in as the same bag of words.
    embedders = dict.fromkeys(SENTENCE_MODELS, WordsEmbedder())
    router = Router(
        CardStore(engine),
        CardIndex(vectors, embedders),
        embedders,
        Scorer(WEIGHTS, ["words", "words"], 2 * DIMENSION),
        model,
        DecisionLog(engine),
        tracer=provider.get_tracer("test"),
    )
    try:
        yield Harness(router, model, exporter)
    finally:
        await vectors.close()
        await engine.dispose()


async def test_a_close_active_card_is_picked(harness: Harness) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    await harness.card("ada", "music", "songs by Joe Bonamassa")
    decision = await harness.router.route("ada", "flights to Seattle on Friday", now=NOW)
    assert decision.candidates[0] == "flights"
    assert decision.topic == decision.pick == "flights"
    assert decision.confidence >= 0.5


async def test_cards_older_than_seven_days_are_never_candidates(harness: Harness) -> None:
    await harness.card("ada", "old-flights", "flights to Seattle", days_ago=7.5)
    await harness.card("ada", "music", "songs by Joe Bonamassa", days_ago=6.9)
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert decision.candidates == ["music"]
    assert decision.topic == ""


async def test_with_only_old_cards_new_work_opens_without_a_model_call(harness: Harness) -> None:
    await harness.card("ada", "old-flights", "flights to Seattle", days_ago=8)
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert (decision.topic, decision.pick, decision.candidates) == ("", "new", [])
    assert harness.model.calls == 0


async def test_another_persons_cards_are_never_candidates(harness: Harness) -> None:
    await harness.card("bob", "flights", "flights to Seattle")
    await harness.card("bob", "shared-id", "songs by Joe Bonamassa")
    await harness.card("ada", "shared-id", "a table for two tonight")
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert decision.candidates == ["shared-id"]
    assert decision.topic == ""
    assert "flights" not in {d.topic for d in await harness.router.decisions("ada", 10)}


@pytest.mark.expects_fallbacks
@pytest.mark.parametrize(
    "answer",
    [
        {"choice": "someone-elses-topic", "confidence": 0.9, "reason": "made up"},
        {"choice": "flights", "confidence": 1.7, "reason": "too sure"},
    ],
)
async def test_a_pick_that_is_neither_a_candidate_nor_new_is_rejected(
    harness: Harness, answer: dict
) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    harness.model.answer = answer
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert (decision.topic, decision.pick) == ("", "new")
    assert decision.reason.startswith("no pick")


async def test_confidence_below_half_opens_new_work(harness: Harness) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    harness.model.answer = {"choice": "flights", "confidence": 0.49, "reason": "unsure"}
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert (decision.topic, decision.pick) == ("", "new")
    assert decision.candidates == ["flights"]
    harness.model.answer = {"choice": "flights", "confidence": 0.5, "reason": "sure enough"}
    assert (await harness.router.route("ada", "flights to Seattle", now=NOW)).topic == "flights"


async def test_the_model_may_choose_new_work(harness: Harness) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    harness.model.answer = {"choice": "new", "confidence": 0.8, "reason": "a fresh request"}
    decision = await harness.router.route("ada", "flights to Seattle", now=NOW)
    assert (decision.topic, decision.pick, decision.confidence) == ("", "new", 0.8)


async def test_every_decision_is_logged_and_on_its_span(harness: Harness) -> None:
    second = timedelta(seconds=1)
    made = [await harness.router.route("ada", "flights to Seattle", now=NOW)]
    await harness.card("ada", "flights", "flights to Seattle")
    await harness.card("ada", "music", "songs by Joe Bonamassa")
    made.append(await harness.router.route("ada", "flights to Seattle", now=NOW + second))
    harness.model.answer = {"choice": "music", "confidence": 0.2, "reason": "a guess"}
    made.append(await harness.router.route("ada", "some songs", now=NOW + 2 * second))

    logged = await harness.router.decisions("ada", 10)
    assert logged == list(reversed(made))
    assert await harness.router.decisions("bob", 10) == []

    spans = [s for s in harness.spans.get_finished_spans() if s.name == "router.route"]
    assert len(spans) == len(made)
    for span, decision in zip(spans, made, strict=True):
        attributes = dict(span.attributes or {})
        assert list(attributes["violet.route.candidates"]) == decision.candidates
        assert list(attributes["violet.route.scores"]) == pytest.approx(decision.scores)
        assert attributes["violet.route.pick"] == decision.pick
        assert attributes["violet.route.confidence"] == pytest.approx(decision.confidence)
        assert attributes["violet.route.reason"] == decision.reason
    assert made[1].candidates == ["flights", "music"]
    assert made[2].pick == "new" and "below 0.5" in made[2].reason


async def test_an_updated_card_is_matched_on_what_it_now_says(harness: Harness) -> None:
    await harness.card("ada", "trip", "flights to Seattle")
    await harness.card("ada", "other", "songs by Joe Bonamassa")
    await harness.card("ada", "trip", "a hotel in Lisbon")
    decision = await harness.router.route("ada", "hotel in Lisbon", now=NOW)
    assert decision.candidates[0] == "trip"


async def test_a_question_reaches_the_nearest_topic_besides_the_askers_own(
    harness: Harness,
) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    await harness.card("ada", "music", "songs by Joe Bonamassa")
    await harness.card("ada", "asker", "flights to Seattle, a packing list")
    found = await harness.router.nearest("ada", "flights to Seattle", besides="asker", now=NOW)
    assert found.topic == "flights" and found.score >= 0.5
    assert harness.model.calls == 0  # the scores alone answer: there is no pick

    spans = [s for s in harness.spans.get_finished_spans() if s.name == "router.nearest"]
    attributes = dict(spans[-1].attributes or {})
    assert attributes["violet.ask.topic"] == "flights"
    assert attributes["violet.ask.score"] == pytest.approx(found.score)
    assert "asker" not in attributes["violet.ask.candidates"]


async def test_a_question_sharing_nothing_with_any_other_topic_reaches_none(
    harness: Harness,
) -> None:
    await harness.card("ada", "flights", "flights to Seattle")
    await harness.card("ada", "asker", "a table for two tonight")
    found = await harness.router.nearest("ada", "a table for two", besides="asker", now=NOW)
    assert (found.topic, found.score) == ("", 0.0)


async def test_a_question_never_reaches_another_persons_topic(harness: Harness) -> None:
    await harness.card("bob", "flights", "flights to Seattle")
    await harness.card("ada", "music", "songs by Joe Bonamassa")
    found = await harness.router.nearest("ada", "flights to Seattle", besides="", now=NOW)
    assert found.topic == ""
