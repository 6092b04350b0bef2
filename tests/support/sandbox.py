"""The WebAssembly sandbox's compiled interpreter, shared by the tests of a checkout: compiling
it takes seconds, so it is made once, in the virtualenv whose Wasmtime it is compiled for."""

from __future__ import annotations

import sys
from pathlib import Path

SANDBOX_CACHE = Path(sys.prefix) / "violet-sandbox-cache"
