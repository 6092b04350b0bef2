"""The live window: how much of the conversation the main model holds, and where a fold cuts.

Pure rules over transcript messages, so they are easy to state and test:
- the model never holds more than `size` live messages;
- once the live messages reach `size`, the older ones are folded into the summary and the last
  `size/2` carried into a new model conversation; between folds the model's view only grows at
  its end, so a fold comes about once every `size/4` turns;
- carried and visible messages start with one of the person's messages (the transcript holds
  words only, so no cut can fall inside a tool exchange);
- if folding keeps failing, the rollover happens anyway at `2 x size`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from session.transcript import Message

MIN_WINDOW, MAX_WINDOW = 20, 50


def _from_first_person_message(messages: Sequence[Message]) -> list[Message]:
    for index, message in enumerate(messages):
        if message.author == "you":
            return list(messages[index:])
    return []


@dataclass(frozen=True)
class Window:
    size: int

    def __post_init__(self) -> None:
        if not MIN_WINDOW <= self.size <= MAX_WINDOW:
            raise ValueError(f"the window must be from {MIN_WINDOW} to {MAX_WINDOW} messages")

    @property
    def carried(self) -> int:
        return self.size // 2

    def fold_due(self, live: int) -> bool:
        return live >= self.size

    def rollover_forced(self, live: int) -> bool:
        return live >= 2 * self.size

    def visible(self, live: Sequence[Message]) -> list[Message]:
        """What the main model is handed: at most `size` messages, opening with the person."""
        return _from_first_person_message(live[-self.size :])

    def split(self, live: Sequence[Message]) -> tuple[list[Message], list[Message]]:
        """(to fold, to carry): the last `size/2` are carried, less any leading Violet lines."""
        carried = _from_first_person_message(live[-self.carried :])
        return list(live[: len(live) - len(carried)]), carried
