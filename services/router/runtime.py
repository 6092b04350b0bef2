"""The router's parts, opened together: stores, embedder, weights, model. The gRPC service and
`violet eval routing` run on these same parts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from router.index import CardIndex
from router.routing import Router
from router.scoring import Scorer, Weights
from router.settings import RouterSettings
from router.store import CardStore, DecisionLog
from violet import database
from violet.embedder import MODEL_ID, TextEmbedder, get_embedder
from violet.models import model_client_for
from violet.vectors import open_vector_store

NAME = "router"


def migrate(settings: RouterSettings) -> None:
    database.migrate_service(settings, NAME)


@contextlib.asynccontextmanager
async def open_router(
    settings: RouterSettings, embedder: TextEmbedder | None = None
) -> AsyncIterator[Router]:
    """`embedder` replaces the shared one (evaluation memoises it); it must be the same model."""
    if embedder is None:
        embedder = await asyncio.to_thread(get_embedder)
    scorer = Scorer(Weights.load(), MODEL_ID, embedder.dim)
    engine = database.service_engine(settings, NAME)
    vectors = await open_vector_store(settings, embedder.dim, NAME)
    model = model_client_for(settings)

    try:
        yield Router(
            CardStore(engine),
            CardIndex(vectors, embedder),
            embedder,
            scorer,
            model,
            DecisionLog(engine),
        )
    finally:
        await vectors.close()
        await model.aclose()
        await engine.dispose()
