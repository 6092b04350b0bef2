"""The model interface: the Anthropic client, the offline stand-in, strict structured calls."""

from violet.models.accounting import LEDGER, UsageLedger, UsageTotals
from violet.models.anthropic_client import AnthropicModelClient
from violet.models.base import ModelClient, Reply, System, Tier, Tool, ToolCall, ToolChoice, Usage
from violet.models.errors import (
    ModelContextFull,
    ModelError,
    ModelOutputInvalid,
    ModelRefused,
    ModelRejected,
    ModelUnavailable,
    ModelUnreachable,
    PersonGone,
    SpendLimitReached,
)
from violet.models.factory import (
    DEFAULT_FAST_MODEL,
    DEFAULT_MAIN_MODEL,
    make_model_client,
    model_client_for,
)
from violet.models.messages import (
    ContentBlock,
    JsonObject,
    ModelMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    without_thinking,
)
from violet.models.offline import OFFLINE_MODEL, OfflineModelClient
from violet.models.retry import Backoff
from violet.models.structured import (
    Candidate,
    Fold,
    OriginItem,
    Pick,
    fold,
    origin,
    pick,
)

__all__ = [
    "DEFAULT_FAST_MODEL",
    "DEFAULT_MAIN_MODEL",
    "LEDGER",
    "OFFLINE_MODEL",
    "AnthropicModelClient",
    "Backoff",
    "Candidate",
    "ContentBlock",
    "Fold",
    "JsonObject",
    "ModelClient",
    "ModelContextFull",
    "ModelError",
    "ModelMessage",
    "ModelOutputInvalid",
    "ModelRefused",
    "ModelRejected",
    "SpendLimitReached",
    "ModelUnavailable",
    "PersonGone",
    "ModelUnreachable",
    "OfflineModelClient",
    "OriginItem",
    "Pick",
    "Reply",
    "System",
    "TextBlock",
    "ThinkingBlock",
    "Tier",
    "Tool",
    "ToolCall",
    "ToolChoice",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "UsageLedger",
    "UsageTotals",
    "fold",
    "make_model_client",
    "model_client_for",
    "origin",
    "pick",
    "without_thinking",
]
