"""The passage queue: the texts of many capture passes embedded together, each caller given
its own vectors, in bounded room."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from memory.passages import PassageQueue
from tests.support.waiting import eventually


class GatedEmbedder:
    """Records each engine call; the vector of a text holds its length and first letter's code.
    The first call is held until `release` is set, so that requests queue behind it."""

    dim = 2

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.failing: set[str] = set()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.entered.set()
        self.release.wait()
        if self.failing & set(texts):
            raise RuntimeError("the engine failed")
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("the passage queue embeds no queries")


def vectors_of(texts: Sequence[str]) -> np.ndarray:
    return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)


async def held_first_call(queue: PassageQueue, embedder: GatedEmbedder) -> asyncio.Task:
    """Starts a request and waits until the engine holds it."""
    first = asyncio.create_task(queue.embed(["held"]))
    await asyncio.to_thread(embedder.entered.wait)
    return first


async def test_requests_of_several_passes_are_embedded_in_one_call_each_getting_its_own() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder, batch_texts=8)
    held = await held_first_call(queue, embedder)
    asks = [["ann one", "ann two"], ["bob"], ["cy one", "cy two", "cy three"]]
    waiting = [asyncio.create_task(queue.embed(texts)) for texts in asks]
    await eventually(lambda: queue.queued() == 6, "the three requests queued")

    embedder.release.set()
    got = await asyncio.gather(*waiting)
    await held

    assert embedder.calls == [["held"], [text for texts in asks for text in texts]]
    for texts, vectors in zip(asks, got, strict=True):
        np.testing.assert_array_equal(vectors, vectors_of(texts))
    await queue.close()


async def test_a_batch_takes_whole_requests_up_to_its_size() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder, batch_texts=3)
    held = await held_first_call(queue, embedder)
    waiting = [asyncio.create_task(queue.embed(texts)) for texts in (["a1", "a2"], ["b1", "b2"])]
    await eventually(lambda: queue.queued() == 4, "both requests queued")

    embedder.release.set()
    await asyncio.gather(held, *waiting)

    assert embedder.calls == [["held"], ["a1", "a2"], ["b1", "b2"]]
    await queue.close()


async def test_a_full_queue_makes_the_next_pass_wait_for_room() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder, batch_texts=2, capacity_texts=2)
    held = await held_first_call(queue, embedder)
    filling = asyncio.create_task(queue.embed(["f1", "f2"]))
    await eventually(lambda: queue.queued() == 2, "the queue full")
    blocked = asyncio.create_task(queue.embed(["late"]))
    await asyncio.sleep(0)  # lets `blocked` run up to its wait for room

    assert queue.queued() == 2

    embedder.release.set()
    await asyncio.gather(held, filling, blocked)
    assert embedder.calls == [["held"], ["f1", "f2"], ["late"]]
    await queue.close()


async def test_an_urgent_request_goes_before_the_waiting_ones() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder, batch_texts=1, capacity_texts=1)
    held = await held_first_call(queue, embedder)
    background = asyncio.create_task(queue.embed(["background"]))
    await eventually(lambda: queue.queued() == 1, "the background request queued")
    urgent = asyncio.create_task(queue.embed(["forget"], urgent=True))
    await eventually(lambda: queue.queued() == 2, "the urgent request queued, past the capacity")

    embedder.release.set()
    await asyncio.gather(held, background, urgent)

    assert embedder.calls == [["held"], ["forget"], ["background"]]
    await queue.close()


async def test_a_failed_call_fails_its_callers_and_the_queue_goes_on() -> None:
    embedder = GatedEmbedder()
    embedder.failing = {"broken"}
    queue = PassageQueue(embedder)
    held = await held_first_call(queue, embedder)
    doomed = [asyncio.create_task(queue.embed(t)) for t in (["broken"], ["beside it"])]
    await eventually(lambda: queue.queued() == 2, "both requests queued")
    embedder.release.set()
    await held

    for request in doomed:
        with pytest.raises(RuntimeError, match="the engine failed"):
            await request
    np.testing.assert_array_equal(await queue.embed(["after"]), vectors_of(["after"]))
    await queue.close()


async def test_closing_cancels_the_callers_still_waiting() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder)
    held = await held_first_call(queue, embedder)
    waiting = asyncio.create_task(queue.embed(["never embedded"]))
    await eventually(lambda: queue.queued() == 1, "the request queued")

    await queue.close()
    embedder.release.set()

    for request in (held, waiting):
        with pytest.raises(asyncio.CancelledError):
            await request


async def test_no_texts_need_no_call() -> None:
    embedder = GatedEmbedder()
    queue = PassageQueue(embedder)

    assert (await queue.embed([])).shape == (0, embedder.dim)
    assert embedder.calls == []
