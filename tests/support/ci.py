"""Tests that need a tool of the machine: skipped where it is missing, except in CI."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skips the test with `reason`; under CI=true, where everything must run, it fails."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
