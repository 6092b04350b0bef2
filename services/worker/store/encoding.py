"""How the worker keeps structured values (messages, payloads) in text columns."""

from __future__ import annotations

import json
from typing import Any


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
