"""SQLite as the services open it: a new file put in WAL mode also while another replica opens
it at the same moment."""

from __future__ import annotations

import sqlite3

import pytest

from violet.database import into_wal


class LockedCursor:
    """A cursor whose switch to WAL finds the file locked `times` times, as a replica opening the
    same new file at the same moment makes it."""

    def __init__(self, times: int, error: str = "database is locked") -> None:
        self.times, self.error, self.asked = times, error, 0

    def execute(self, statement: str) -> None:
        self.asked += 1
        if self.asked <= self.times:
            raise sqlite3.OperationalError(self.error)


def test_a_new_file_locked_by_another_replica_is_put_in_wal_mode_once_free() -> None:
    cursor = LockedCursor(times=3)
    into_wal(cursor, pause_s=0)
    assert cursor.asked == 4


def test_a_file_locked_for_good_or_broken_otherwise_fails_plainly() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        into_wal(LockedCursor(times=99), tries=5, pause_s=0)
    broken = LockedCursor(times=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk"):
        into_wal(broken, pause_s=0)
    assert broken.asked == 1
