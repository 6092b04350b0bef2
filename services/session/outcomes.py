"""What a tool call of the main model came to, as its `tool_result` block says it."""

from __future__ import annotations

from dataclasses import dataclass

from violet.models import ToolCall, ToolResultBlock


@dataclass(frozen=True)
class Outcome:
    content: str
    is_error: bool = False

    def block(self, call: ToolCall) -> ToolResultBlock:
        block: ToolResultBlock = {
            "type": "tool_result",
            "tool_use_id": call.id,
            "content": self.content,
        }
        if self.is_error:
            block["is_error"] = True
        return block
