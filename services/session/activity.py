"""The one activity line every device of the person shows while Violet works: passed on to the
replicas that follow the conversation, never stored. A line is 2 to 7 words (in Chinese, Japanese
and Korean, a short phrase), worded as `violet.language` says."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from session.conversations import Conversation
from session.feed import Feed
from session.transcript import Transcript
from violet.language import phrase

THINKING = {
    "en": "Thinking it over",
    "pt": "Pensando nisso",
    "es": "Lo estoy pensando",
    "fr": "Je réfléchis",
    "de": "Ich denke nach",
    "it": "Ci sto pensando",
    "nl": "Ik denk erover na",
    "pl": "Zastanawiam się",
    "tr": "Bir düşüneyim",
    "id": "Sedang memikirkannya",
    "vi": "Để mình nghĩ đã",
    "ru": "Думаю над этим",
    "ar": "أفكّر في الأمر",
    "hi": "सोच रही हूँ",
    "zh": "我想一想",
    "ja": "考えています",
    "ko": "생각하고 있어요",
}
# A quick answer needs no line; one that takes longer than this shows one.
SHOWN_AFTER_S = 1.0


class Activity:
    def __init__(self, transcript: Transcript, feed: Feed) -> None:
        self._transcript = transcript
        self._feed = feed

    async def show(self, conversation: Conversation, line: str) -> None:
        """Shows `line` on every device of the person; `""` clears it."""
        if self._transcript.notifies:  # other replicas' followers hear it through PostgreSQL
            await self._transcript.notify_activity(conversation, line)
        else:
            self._feed.announce(conversation.id, line)

    @contextlib.asynccontextmanager
    async def while_thinking(
        self, conversation: Conversation, language: str
    ) -> AsyncIterator[None]:
        """Shows that Violet is thinking once the block has taken `SHOWN_AFTER_S`, and clears
        the line when it ends (the answer, stored meanwhile, replaces it on the devices)."""

        async def after_a_moment() -> None:
            await asyncio.sleep(SHOWN_AFTER_S)
            await self.show(conversation, phrase(THINKING, language))

        shown = asyncio.create_task(after_a_moment())
        try:
            yield
        finally:
            shown.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await shown
            if shown.done() and not shown.cancelled():
                await self.show(conversation, "")
