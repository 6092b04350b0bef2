"""The images install from requirements.lock: it must pin every runtime dependency, and no torch."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonical(name)] = version
    return pins


def test_every_runtime_dependency_is_pinned_in_the_lock() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {canonical(Requirement(spec).name) for spec in project["dependencies"]}
    pins = locked()
    assert wanted <= set(pins), sorted(wanted - set(pins))
    assert all(pins.values()), "every line pins an exact version"


def test_the_images_carry_no_torch() -> None:
    assert "torch" not in locked()
