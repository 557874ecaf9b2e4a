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


class ShiftedClock:
    """Real time plus a fixed `shift`: it reads `start` when made and runs on from there.

    Whatever keeps its own real-time timers (APScheduler) asks `clock_shift(clock)` and
    translates, so a replay fires what the shifted clock says is due.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ShiftedClock needs an aware datetime")
        self.shift = start - utcnow()

    def __call__(self) -> datetime:
        return utcnow() + self.shift


def shifted_clock(start: datetime | None) -> Clock:
    """Real time, or real time shifted so that it reads `start` now and runs on from there.

    For demos of a past campaign (`strikebot run --now 2019-01-18T10:00-08:00`).
    """
    return utcnow if start is None else ShiftedClock(start)


def clock_shift(clock: Clock) -> timedelta:
    """How far `clock` runs ahead of real time (negative: behind), for code that also keeps
    real-time timers. Zero for real time and for fixed clocks, which tests move by hand."""
    return clock.shift if isinstance(clock, ShiftedClock) else timedelta(0)


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
