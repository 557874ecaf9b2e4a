"""Time is a parameter: code that needs `now` takes a `Clock` and tests pass a fixed one."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to (tests, previews)."""

    def __init__(self, now: datetime) -> None:
        if now.tzinfo is None:
            raise ValueError("FixedClock needs an aware datetime")
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def shifted_clock(start: datetime | None) -> Clock:
    """Real time, or real time shifted so that it reads `start` now and runs on from there.

    For demos of a past campaign (`strikebot run --now 2019-01-18T10:00-08:00`).
    """
    if start is None:
        return utcnow
    shift = start - utcnow()

    def now() -> datetime:
        return utcnow() + shift

    return now


def parse_moment(text: str) -> datetime:
    """An ISO 8601 moment with its UTC offset, as aware UTC; ValueError says what to write."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date and time; write e.g. 2019-01-18T10:00-08:00"
        ) from None
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no UTC offset; write e.g. 2019-01-18T10:00-08:00")
    return moment.astimezone(UTC)
