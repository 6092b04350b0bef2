"""Time, kept in one place: every stored moment is UTC, and the parts that read the time take a
`Clock`, so a test can say what time it is."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, overload

from google.protobuf.timestamp_pb2 import Timestamp
from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def timestamp(moment: datetime) -> Timestamp:
    """The moment as a protobuf Timestamp, for a message."""
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


@overload
def as_utc(moment: datetime) -> datetime: ...
@overload
def as_utc(moment: None) -> None: ...
def as_utc(moment: datetime | None) -> datetime | None:
    """The moment with its zone: SQLite hands datetimes back without one, and every stored
    moment is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A `DateTime(timezone=True)` column whose values always come back with their zone."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return as_utc(value)
