"""What every `violet eval` shares: a run on fresh stores, its report printed last."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from violet.models import JsonObject
from violet.settings import VectorSettings

S = TypeVar("S", bound=VectorSettings)


def on_fresh_stores(
    name: str,
    settings_class: type[S],
    migrate: Callable[[S], None],
    evaluate: Callable[[S], Coroutine[Any, Any, JsonObject]],
) -> JsonObject:
    """Runs `evaluate` on a SQLite database and a local vector store in a temporary home;
    prints the report as the last stdout line."""
    with tempfile.TemporaryDirectory(prefix=f"violet-eval-{name}-") as home:
        settings = settings_class(home=Path(home), database_url="", qdrant_url="")
        migrate(settings)
        report = asyncio.run(evaluate(settings))
    print(json.dumps(report))
    return report
