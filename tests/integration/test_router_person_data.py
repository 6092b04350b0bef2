"""PersonData on the router, served over gRPC beside Router on real stores: SQLite and PostgreSQL
(as the router's own role, under row-level security), the embedded vector store and qdrant-client.
A small stand-in embedder keeps it fast. The router exports nothing; erasing a person removes
every row and vector of theirs, stops a write racing it, and leaves others' untouched."""

from __future__ import annotations

import asyncio
import contextlib
import re
import warnings
import zlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import numpy as np
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from numpy.typing import NDArray
from qdrant_client import AsyncQdrantClient
from sqlalchemy import Engine, create_engine, func, select

from router.cards import Card
from router.features import SENTENCE_MODELS
from router.index import CardIndex
from router.routing import Router
from router.runtime import migrate
from router.scoring import Scorer, Weights
from router.service import RouterService
from router.settings import RouterSettings
from router.store import CardStore, DecisionLog, PersonErased
from router.tables import decisions, metadata
from tests.support.postgres import fresh_schema
from violet import database
from violet.identity import acting_for, issue_internal_token, issue_token
from violet.models import OfflineModelClient
from violet.person_data import Horizon, PersonDataService
from violet.v1 import persons_pb2, persons_pb2_grpc, router_pb2, router_pb2_grpc
from violet.vectors import EdgeVectorStore, QdrantVectorStore, VectorStore

SECRET = "router-person-data-test-secret-of-32-bytes"
DIMENSION = 32
# The whole card's cosine decides, as in tests/unit/test_router_routing.py.
WEIGHTS = Weights(
    embedders=["words", "words"],
    dimension=2 * DIMENSION,
    features=["cos_card"],
    mean=[0.0],
    scale=[1.0],
    card=[10.0],
    new=[2.0, 0.0],
    opening=[0.0] * (2 * DIMENSION + 3),
)
PICK = {"choice": "new", "confidence": 0.9, "reason": "a new errand"}


class WordsEmbedder:
    """Hashed bag of words: texts sharing words are close."""

    dim = DIMENSION

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.stack([self.embed_query(t) for t in texts])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        vector = np.zeros(DIMENSION, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vector[zlib.crc32(word.encode()) % DIMENSION] += 1.0
        norm = np.linalg.norm(vector)
        return vector / norm if norm else vector + DIMENSION**-0.5


class PickingModel(OfflineModelClient):
    """Picks new work; with `during_pick` set, runs it first (an erasure racing the route)."""

    def __init__(self) -> None:
        super().__init__()
        self.during_pick: Router | None = None

    async def structured(self, **call) -> dict:  # type: ignore[no-untyped-def]
        if self.during_pick is not None:
            await self.during_pick.erasure.erase(call["person"])
        return dict(PICK)


@dataclass
class Served:
    router: Router
    model: PickingModel
    vectors: VectorStore
    cards: CardStore
    index: CardIndex
    rows: Engine  # sees every person's rows: the test's own view, past row-level security
    routing: router_pb2_grpc.RouterStub
    person_data: persons_pb2_grpc.PersonDataStub


async def vector_store(kind: str, home: Path) -> VectorStore:
    if kind == "edge":
        return EdgeVectorStore(home / "router-vectors", DIMENSION)
    with warnings.catch_warnings():  # local mode says payload indexes need a server
        warnings.simplefilter("ignore", UserWarning)
        return await QdrantVectorStore.open(
            AsyncQdrantClient(location=":memory:"), DIMENSION, "violet_router"
        )


@pytest.fixture(params=["sqlite-edge", "sqlite-qdrant", "postgres-edge", "postgres-qdrant"])
async def served(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Served]:
    sql, vectors_kind = request.param.split("-")
    async with contextlib.AsyncExitStack() as cleanup:
        url = cleanup.enter_context(fresh_schema()) if sql == "postgres" else ""
        settings = RouterSettings(home=tmp_path, database_url=url, qdrant_url="")
        migrate(settings)
        rows = create_engine(database.sync_url(settings, "router"))
        cleanup.callback(rows.dispose)
        engine = database.service_engine(settings, "router")
        cleanup.push_async_callback(engine.dispose)
        vectors = await vector_store(vectors_kind, tmp_path)
        cleanup.push_async_callback(vectors.close)
        embedders = dict.fromkeys(SENTENCE_MODELS, WordsEmbedder())
        cards, index, model = CardStore(engine), CardIndex(vectors, embedders), PickingModel()
        router = Router(
            cards,
            index,
            embedders,
            Scorer(WEIGHTS, ["words", "words"], 2 * DIMENSION),
            model,
            DecisionLog(engine),
        )
        server = grpc.aio.server()
        router_pb2_grpc.add_RouterServicer_to_server(RouterService(router, SECRET), server)
        persons_pb2_grpc.add_PersonDataServicer_to_server(
            PersonDataService(router.erasure, SECRET), server
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        cleanup.push_async_callback(server.stop, None)
        channel = await cleanup.enter_async_context(grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
        yield Served(
            router,
            model,
            vectors,
            cards,
            index,
            rows,
            router_pb2_grpc.RouterStub(channel),
            persons_pb2_grpc.PersonDataStub(channel),
        )


def as_(person: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {issue_internal_token(person, SECRET)}"),)


def card(topic: str, title: str) -> router_pb2.TopicCard:
    at = Timestamp()
    at.FromDatetime(datetime.now(UTC) - timedelta(minutes=5))
    return router_pb2.TopicCard(
        topic=topic,
        title=title,
        summary=f"The person wants to {title.lower()}.",
        entities=["Seattle"],
        last_request=title,
        last_outcome="Which day do you fly?",
        last_active=at,
    )


async def fill(served: Served, person: str, titles: dict[str, str], request: str) -> None:
    for topic, title in titles.items():
        await served.routing.UpdateCard(card(topic, title), metadata=as_(person), timeout=30)
    await served.routing.Route(
        router_pb2.RouteRequest(request=request), metadata=as_(person), timeout=30
    )


def rows_of(served: Served, person: str) -> dict[str, int]:
    """The person's rows in every table of the router, by every column that names them."""
    found: dict[str, int] = {}
    with served.rows.connect() as db:
        for table in metadata.sorted_tables:
            query = select(func.count()).select_from(table).where(table.c.person == person)
            found[table.name] = int(db.execute(query).scalar_one())
    return found


async def erase(served: Served, person: str) -> persons_pb2.EraseReply:
    return await served.person_data.Erase(
        persons_pb2.EraseRequest(), metadata=as_(person), timeout=30
    )


async def test_the_router_exports_nothing_of_a_person(served: Served) -> None:
    await fill(served, "ada", {"ws_flights": "Book flights to Seattle"}, "I fly on Friday.")
    records = served.person_data.Export(persons_pb2.ExportRequest(), metadata=as_("ada"))
    assert [record async for record in records] == []


async def test_export_and_erase_need_an_internal_token(served: Served) -> None:
    device = (("authorization", f"Bearer {issue_token('ada', SECRET)}"),)
    for metadata_ in ((), device):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await served.person_data.Erase(persons_pb2.EraseRequest(), metadata=metadata_)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            exported = served.person_data.Export(persons_pb2.ExportRequest(), metadata=metadata_)
            [record async for record in exported]
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_erasing_removes_every_row_and_vector_of_the_person_and_nothing_else(
    served: Served,
) -> None:
    ada = {"ws_flights": "Book flights to Seattle", "ws_music": "Play songs by Joe Bonamassa"}
    await fill(served, "ada", ada, "I fly on Friday, to Seattle.")
    await fill(served, "bob", {"ws_flights": "Book a table for two"}, "Tonight at eight.")
    bobs_rows, bobs_vectors = rows_of(served, "bob"), await served.vectors.scroll("bob")
    adas_vectors = len(await served.vectors.scroll("ada"))
    assert sum(rows_of(served, "ada").values()) == 4 and adas_vectors > 0

    erased = await erase(served, "ada")

    # Two cards, a decision, and the lifetime they were written in.
    assert (erased.rows, erased.vectors, erased.files) == (4, adas_vectors, 0)
    assert rows_of(served, "ada") == dict.fromkeys(metadata.tables, 0)
    assert await served.vectors.scroll("ada") == []
    assert rows_of(served, "bob") == bobs_rows
    assert {p.id for p in await served.vectors.scroll("bob")} == {p.id for p in bobs_vectors}

    again = await erase(served, "ada")
    assert (again.rows, again.vectors, again.files) == (0, 0, 0)


async def test_after_erasing_a_person_starts_from_empty(served: Served) -> None:
    await fill(served, "ada", {"ws_flights": "Book flights to Seattle"}, "I fly on Friday.")
    await erase(served, "ada")

    decision = await served.routing.Route(
        router_pb2.RouteRequest(request="Flights to Seattle on Friday"), metadata=as_("ada")
    )
    assert (decision.pick, list(decision.candidates)) == ("new", [])
    listed = await served.routing.ListDecisions(
        router_pb2.ListDecisionsRequest(), metadata=as_("ada")
    )
    assert [d.request for d in listed.decisions] == ["Flights to Seattle on Friday"]

    await served.routing.UpdateCard(card("ws_tea", "Order green tea"), metadata=as_("ada"))
    again = await served.routing.Route(
        router_pb2.RouteRequest(request="Order more green tea"), metadata=as_("ada")
    )
    assert list(again.candidates) == ["ws_tea"]


async def test_a_route_racing_the_erasure_is_refused_and_logs_nothing(served: Served) -> None:
    await fill(served, "ada", {"ws_flights": "Book flights to Seattle"}, "I fly on Friday.")
    served.model.during_pick = served.router  # the erasure runs while the pick is awaited

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await served.routing.Route(
            router_pb2.RouteRequest(request="Flights to Seattle"), metadata=as_("ada")
        )

    assert refused.value.code() == grpc.StatusCode.ABORTED
    assert rows_of(served, "ada") == dict.fromkeys(metadata.tables, 0)
    assert await served.vectors.scroll("ada") == []


async def test_an_update_holding_the_lifetime_is_erased_with_the_rest(served: Served) -> None:
    """The erasure waits for a write under way to commit, then removes it too."""
    flights = Card("ws_flights", "Flights", "To Seattle", (), "Book flights", "", datetime.now(UTC))
    with acting_for("ada"):
        lifetime = await served.cards.lifetimes.current("ada")
        embedded = await served.index.embed("ada", flights)
        async with served.cards.lifetimes.claimed("ada", lifetime) as db:
            await served.cards.put(db, "ada", flights)
            erasing = asyncio.create_task(served.router.erasure.erase("ada"))
            done, _ = await asyncio.wait({erasing}, timeout=0.3)
            assert not done, "the erasure went ahead of a write holding the lifetime"
            await served.index.put(embedded)
        erased = await erasing

    assert erased.rows == 2 and erased.vectors == len(embedded.points)
    assert rows_of(served, "ada") == dict.fromkeys(metadata.tables, 0)
    assert await served.vectors.scroll("ada") == []


async def test_a_write_begun_before_the_erasure_writes_nothing(served: Served) -> None:
    with acting_for("ada"):
        lifetime = await served.cards.lifetimes.current("ada")
        await served.router.erasure.erase("ada")
        with pytest.raises(PersonErased):
            async with served.cards.lifetimes.claimed("ada", lifetime):
                pytest.fail("a write of an erased lifetime went ahead")
        assert await served.cards.lifetimes.current("ada") != lifetime


async def test_trimming_forgets_decisions_older_than_the_transcript_kept(served: Served) -> None:
    """Each decision holds the words it routed: it goes once the transcript no longer holds
    them; the cards (the topics as they are now) and another person's decisions stay."""
    await fill(served, "ada", {"ws_flights": "Book flights to Seattle"}, "I fly on Friday.")
    await fill(served, "bob", {"ws_tea": "Order green tea"}, "Two boxes, please.")
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with served.rows.begin() as db:
        db.execute(decisions.update().values(at=long_ago))
    await served.routing.Route(
        router_pb2.RouteRequest(request="Flights on Friday, window seat"), metadata=as_("ada")
    )
    horizon = Horizon(transcript_before=datetime.now(UTC) - timedelta(days=30))

    trimmed = await served.person_data.Trim(horizon.request(), metadata=as_("ada"), timeout=30)

    assert (trimmed.rows, trimmed.vectors, trimmed.files) == (1, 0, 0)
    listed = await served.routing.ListDecisions(
        router_pb2.ListDecisionsRequest(), metadata=as_("ada")
    )
    assert [d.request for d in listed.decisions] == ["Flights on Friday, window seat"]
    assert rows_of(served, "ada")["topic_cards"] == 1
    assert rows_of(served, "bob")["route_decisions"] == 1
    again = await served.person_data.Trim(horizon.request(), metadata=as_("ada"), timeout=30)
    assert again.rows == 0
    nothing = await served.person_data.Trim(Horizon().request(), metadata=as_("bob"), timeout=30)
    assert nothing.rows == 0 and rows_of(served, "bob")["route_decisions"] == 1
