"""A device's stream of its conversation (`SessionService.Follow`) on a real transcript: a device
far behind gets every message at once, page after page, and then what this replica stores."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from session import service as service_module
from session.erasure import Standing
from session.feed import Feed
from session.notify.presence import Presence
from session.service import SessionService
from session.store import ConversationStore
from tests.support.fakes import session_tables
from violet.identity import acting_for, service_identity
from violet.v1 import session_pb2

SECRET = "a secret only this test knows"
# Longer than the test: only a wake-up, or a full page read, makes the stream look again.
NEVER_S = 3600.0


class Context:
    """The call's context as the stream uses it: its token, and how it ends."""

    def __init__(self, person: str) -> None:
        self._metadata = service_identity(person, SECRET).metadata()

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise AssertionError(f"the stream ended: {code} {details}")


async def next_seq(stream: AsyncIterator[session_pb2.ConversationEvent]) -> int:
    event = await asyncio.wait_for(anext(stream), 5)
    return event.message.seq


async def test_a_device_far_behind_gets_every_page_at_once_then_what_is_stored_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service_module, "SINCE_PAGE", 3)
    async with session_tables(tmp_path) as db:
        store = ConversationStore.open(db, notify=False)
        feed = Feed(NEVER_S, NEVER_S)
        with acting_for("ana"):
            conversation = await store.conversations.conversation_of("ana")
            for number in range(7):
                await store.transcript.append_say(conversation, f"d{number}", f"line {number}")
        service = SessionService(
            store,
            None,  # type: ignore[arg-type]  # following starts no turn
            feed,
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            SECRET,
            Standing(db, SECRET),
            None,  # type: ignore[arg-type]
            Presence(db),
        )
        stream = service.Follow(
            session_pb2.FollowRequest(since=0),
            Context("ana"),  # type: ignore[arg-type]
        )
        try:
            # 7 messages, pages of 3: all of them, with no wake-up between the pages.
            assert [await next_seq(stream) for _ in range(7)] == list(range(1, 8))
            with acting_for("ana"):
                appended = await store.transcript.append_say(conversation, "d7", "line 7")
            feed.publish(conversation.id, appended.stored)
            assert await next_seq(stream) == 8
        finally:
            await stream.aclose()
