"""Memory in process on real stores (SQLite, the embedded vector store), with a scripted fast
model: the pieces the memory tests share."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.deeds import Deed
from memory.runtime import Memory, migrate, open_memory
from memory.settings import MemorySettings
from memory.store import NewTurn
from violet.models import LEDGER

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


class ScriptedOrigin:
    """A fast model whose origin answers come from `answer`, after `gate` opens."""

    def __init__(self, answer: Callable[[], list[dict]]) -> None:
        self.ledger = LEDGER
        self.answer = answer
        self.gate = asyncio.Event()
        self.gate.set()

    async def structured(self, **_: object) -> dict:
        await self.gate.wait()
        return {"items": self.answer()}

    async def reply(self, **_: object) -> object:
        raise AssertionError("memory never asks for a reply")

    async def aclose(self) -> None:
        pass


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemorySettings:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    chosen = MemorySettings(home=tmp_path, database_url="", qdrant_url="")
    migrate(chosen)
    return chosen


@pytest.fixture
async def memory(settings: MemorySettings) -> AsyncIterator[Memory]:
    async with open_memory(settings) as opened:
        yield opened


def said(text: str, seq: int, answer: str = "Noted.", deeds: tuple[Deed, ...] = ()) -> NewTurn:
    return NewTurn(
        person_message=text,
        violet_answer=answer,
        source_seqs=(seq, seq + 1),
        at=START + timedelta(minutes=seq),
        deeds=deeds,
    )


async def captured(memory: Memory, person: str, *turns: NewTurn) -> None:
    for turn in turns:
        await memory.capturer.accept(person, turn)
    await memory.capturer.settled(person)
