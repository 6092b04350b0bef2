"""The router's parts, opened together: stores, embedder, weights, model. The gRPC service and
`violet eval routing` run on these same parts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from router.embedding import MODEL_IDS, Embedders, opening_dimension, shipped_embedders
from router.index import CardIndex
from router.routing import Router
from router.scoring import Scorer, Weights
from router.settings import RouterSettings
from router.store import CardStore, DecisionLog
from violet import database
from violet.models import ModelClient, model_client_for
from violet.vectors import open_vector_store

NAME = "router"


def migrate(settings: RouterSettings) -> None:
    database.migrate_service(settings, NAME)


def shared_dimension(embedders: Embedders) -> int:
    """The one vector size of the card store, which holds every model's vectors."""
    sizes = {embedder.dim for embedder in embedders.values()}
    if len(sizes) != 1:
        raise ValueError(f"The router's sentence models differ in size ({sorted(sizes)}).")
    return sizes.pop()


@contextlib.asynccontextmanager
async def open_router(
    settings: RouterSettings,
    embedders: Embedders | None = None,
    model: ModelClient | None = None,
) -> AsyncIterator[Router]:
    """`embedders` replace the shipped ones (evaluation memoises them); they must be the same
    models. `model` replaces the configured model client (the service's pays per person)."""
    if embedders is None:
        embedders = await asyncio.to_thread(shipped_embedders)
    dimension = shared_dimension(embedders)
    scorer = Scorer(Weights.load(), MODEL_IDS, opening_dimension(embedders))
    engine = database.service_engine(settings, NAME)
    vectors = await open_vector_store(settings, dimension, NAME)
    model = model or model_client_for(settings)

    try:
        yield Router(
            CardStore(engine),
            CardIndex(vectors, embedders),
            embedders,
            scorer,
            model,
            DecisionLog(engine),
        )
    finally:
        await vectors.close()
        await model.aclose()
        await engine.dispose()
