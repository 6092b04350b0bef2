"""The memory service's parts, opened together: stores, embedder, model, and what uses them.

The gRPC service, the nightly sleep pass and `violet eval memory` all run on these same parts.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from memory.capture import Capturer
from memory.consolidation import Consolidator
from memory.page import MemoryPage
from memory.passages import PassageQueue
from memory.person_data import PersonData
from memory.queries import RecentQueries
from memory.recall import Recaller
from memory.settings import MemorySettings
from memory.store import MemoryStore, open_memory_database
from violet import database
from violet.embedder import get_embedder
from violet.models import ModelClient, model_client_for
from violet.vectors import VectorStore, open_vector_store

NAME = "memory"


def migrate(settings: MemorySettings) -> None:
    database.migrate_service(settings, NAME)


@dataclass(frozen=True)
class Memory:
    store: MemoryStore
    vectors: VectorStore
    passages: PassageQueue
    capturer: Capturer
    recaller: Recaller
    page: MemoryPage
    consolidator: Consolidator
    person_data: PersonData


@contextlib.asynccontextmanager
async def open_memory(
    settings: MemorySettings, model: ModelClient | None = None
) -> AsyncIterator[Memory]:
    """The parts on the configured stores; `model` replaces the configured model client."""
    db = open_memory_database(database.service_database(settings, NAME))
    embedder = await asyncio.to_thread(get_embedder)
    vectors = await open_vector_store(settings, embedder.dim, "memory")
    model = model or model_client_for(settings)

    store = MemoryStore(db)
    passages = PassageQueue(embedder)
    queries = RecentQueries(embedder, settings.memory_query_wait_s)
    capturer = Capturer(store, vectors, passages, queries, model)
    recaller = Recaller(store, vectors, queries)
    consolidator = Consolidator(store, vectors, passages, capturer)
    try:
        yield Memory(
            store=store,
            vectors=vectors,
            passages=passages,
            capturer=capturer,
            recaller=recaller,
            page=MemoryPage(store, vectors, passages),
            consolidator=consolidator,
            person_data=PersonData(store, vectors, passages, capturer, consolidator, recaller),
        )
    finally:
        await capturer.stop()
        queries.close()
        await passages.close()
        await vectors.close()
        await model.aclose()
        await db.dispose()
