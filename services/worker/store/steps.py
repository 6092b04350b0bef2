"""The steps of a work session's turn. Each is one transaction over the parts it changes (the
model conversation, the request, an approval, the outbox), so a worker that stops between two
steps loses nothing and one that stops inside a step leaves no half of it.

Each step first counts its change on the work session's row, which holds that row until the
step ends: a step of a work session that another replica changed, or whose person's data was
erased meanwhile, writes nothing (`worker.store.erasures`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from violet.clock import Clock
from violet.models import ContentBlock, JsonObject, ModelMessage
from worker.store.approvals import Approval, Approvals, new_approval
from worker.store.outbox import Outbox, Send
from worker.store.requests import Request, Requests
from worker.store.work_sessions import HeldResult, WorkSession, WorkSessions


class Steps:
    def __init__(
        self,
        database: async_sessionmaker[AsyncSession],
        clock: Clock,
        work_sessions: WorkSessions,
        requests: Requests,
        approvals: Approvals,
        outbox: Outbox,
    ) -> None:
        self._database = database
        self._clock = clock
        self._work_sessions = work_sessions
        self._requests = requests
        self._approvals = approvals
        self._outbox = outbox

    @contextlib.asynccontextmanager
    async def _step(self, work_session: WorkSession) -> AsyncIterator[AsyncSession]:
        async with self._database() as tx, tx.begin():
            await self._work_sessions.bump(tx, work_session)
            yield tx

    async def begin(
        self, work_session: WorkSession, request: Request, message: ModelMessage
    ) -> None:
        async with self._step(work_session) as tx:
            await self._work_sessions.append(tx, work_session, [message], request.id)
            await self._requests.change(tx, request.id, status="running")

    async def record_reply(
        self, work_session: WorkSession, request: Request, content: list[ContentBlock]
    ) -> None:
        async with self._step(work_session) as tx:
            reply: ModelMessage = {"role": "assistant", "content": content}
            await self._work_sessions.append(tx, work_session, [reply], request.id)
            await self._requests.change(tx, request.id, steps=request.steps + 1)

    async def hold_result(
        self, work_session: WorkSession, tool_use_id: str, result: HeldResult
    ) -> None:
        async with self._step(work_session) as tx:
            await self._work_sessions.hold(
                tx, work_session, {**work_session.held, tool_use_id: result}
            )

    async def hold_for_approval(
        self,
        work_session: WorkSession,
        request: Request,
        tool_use_id: str,
        action: str,
        payload: JsonObject,
        question: str,
        card: JsonObject,
    ) -> Approval:
        approval = new_approval(
            work_session.id, work_session.person, request.id, tool_use_id, action, payload, question
        )
        async with self._step(work_session) as tx:
            await self._approvals.add(tx, approval)
            await self._requests.change(tx, request.id, status="waiting")
            approval_update = {"approval": approval.id, "question": question}
            # The card goes first: the person's answer to what they are told must find the
            # topic as it now stands.
            await self._outbox.enqueue(tx, work_session, Send("card", "", card))
            await self._outbox.enqueue(
                tx, work_session, Send("approval", f"approval:{approval.id}", approval_update)
            )
        return approval

    async def settle(
        self, work_session: WorkSession, approval: Approval, result: HeldResult
    ) -> None:
        """The held action's outcome becomes its tool result, and the approval is done."""
        async with self._step(work_session) as tx:
            await self._approvals.mark_done(tx, approval)
            await self._work_sessions.hold(
                tx, work_session, {**work_session.held, approval.tool_use_id: result}
            )

    async def record_results(
        self, work_session: WorkSession, request: Request, message: ModelMessage
    ) -> None:
        async with self._step(work_session) as tx:
            await self._work_sessions.append(tx, work_session, [message], request.id)
            await self._work_sessions.hold(tx, work_session, {})
            await self._requests.change(tx, request.id, status="running")

    async def finish(
        self,
        work_session: WorkSession,
        request: Request,
        outcome: str,
        deeds: list[JsonObject],
        card: JsonObject,
        closing: list[ModelMessage],
        sources: list[JsonObject] | None = None,
    ) -> None:
        """Ends the request: its closing messages, its outcome, the result (with what Violet did,
        as `violet.v1.Deed` JSON objects, and where it came from, as `violet.v1.Source` ones) and
        the card to send."""
        async with self._step(work_session) as tx:
            if closing:
                await self._work_sessions.append(tx, work_session, closing, request.id)
            await self._requests.change(
                tx, request.id, status="done", outcome=outcome, finished_at=self._clock()
            )
            payload = {"text": outcome, "deeds": deeds, "sources": sources or []}
            result = Send("result", f"result:{request.id}", payload)
            # The card goes before the result, so that a request the person makes on reading the
            # result is routed with the topic as it now stands.
            await self._outbox.enqueue(tx, work_session, Send("card", "", card))
            await self._outbox.enqueue(tx, work_session, result)
