"""Answers every stored message exactly once, in order, one turn of a person at a time.

A message is stored (acked) before its turn runs, so a turn that never finished, on this
replica or one that died, is found again by the sweep and answered.
"""

from __future__ import annotations

import asyncio
import logging

from session.feed import Feed
from session.transcript import Conversation, Transcript
from session.turn import MainSession
from session.turn_lock import TurnLock

log = logging.getLogger(__name__)

LOCK_RETRY_S = 0.1


class TurnRunner:
    def __init__(
        self,
        transcript: Transcript,
        lock: TurnLock,
        main: MainSession,
        feed: Feed,
        replica: str,
    ) -> None:
        self._transcript = transcript
        self._lock = lock
        self._main = main
        self._feed = feed
        self._replica = replica
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._served: set[str] = set()
        self._stopping = False

    def schedule(self, conversation: Conversation) -> None:
        if self._stopping:
            return  # stored already; another replica's sweep answers it
        if conversation.id in self._tasks:
            self._again.add(conversation.id)
            return
        self._tasks[conversation.id] = asyncio.create_task(self._drain(conversation))

    async def sweep_forever(self, every_s: float) -> None:
        while True:
            try:
                for conversation in await self._transcript.waiting():
                    self.schedule(conversation)
            except Exception:
                log.exception("sweep for unanswered messages failed")
            await asyncio.sleep(every_s)

    async def stop(self, grace_s: float) -> None:
        """Lets turns under way finish (and release their locks) for up to `grace_s`."""
        self._stopping = True
        running = list(self._tasks.values())
        if running:
            await asyncio.wait(running, timeout=grace_s)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def _drain(self, conversation: Conversation) -> None:
        try:
            while True:
                self._again.discard(conversation.id)
                await self._answer_waiting(conversation)
                if conversation.id not in self._again:
                    return
        except Exception:
            log.exception("turn failed; the sweep will try again")
        finally:
            del self._tasks[conversation.id]

    async def _answer_waiting(self, conversation: Conversation) -> None:
        while (
            not self._stopping
            and await self._transcript.next_unanswered(conversation.id) is not None
        ):
            if not await self._lock.try_acquire(conversation.id):
                await asyncio.sleep(LOCK_RETRY_S)  # another replica's turn; it may answer ours
                continue
            async with self._lock.held(conversation.id):
                while message := await self._transcript.next_unanswered(conversation.id):
                    model_conversation = await self._model_conversation(conversation)
                    text = await self._main.answer(conversation, message)
                    await self._transcript.append_answer(
                        conversation, message, text, model_conversation
                    )
                    self._feed.publish(conversation.id)

    async def _model_conversation(self, conversation: Conversation) -> str:
        """The model conversation this turn belongs to; a replica new to the person opens one."""
        current = await self._transcript.current_model_conversation(conversation.id)
        if current is None:
            reason = "first message"
        elif conversation.id not in self._served:
            reason = "moved server"
        else:
            return current
        self._served.add(conversation.id)
        return await self._transcript.start_model_conversation(
            conversation.id, reason, self._replica
        )
