"""A stack's secret files: made once, owner-only from the start, never seen half written."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from violet.identity import resolve_secret
from violet.secret_files import made_once


def test_a_secret_file_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    before = os.umask(0o000)  # a umask that would leave it readable by everyone
    try:
        made = made_once(tmp_path / "home" / "secret", lambda: "s3cret")
    finally:
        os.umask(before)
    path = tmp_path / "home" / "secret"
    assert made == "s3cret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["secret"]  # nothing left aside


def test_many_starting_at_once_agree_on_one_text_and_none_reads_it_half_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "secret"
    texts = [f"candidate-{n}-" + "x" * 10_000 for n in range(16)]
    with ThreadPoolExecutor(16) as pool:
        read = list(pool.map(lambda text: made_once(path, lambda: text), texts))
    assert len(set(read)) == 1 and read[0] in texts


def test_the_stack_secret_is_made_once_and_kept(tmp_path: Path) -> None:
    first = resolve_secret("", tmp_path)
    assert resolve_secret("", tmp_path) == first and len(first) >= 32
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
