"""When each channel's briefing is due: pure maths, a subscription and a moment in, a moment
out, DST-aware.

A briefing belongs to one *local date* of the channel's time zone, and each local date has
exactly one briefing instant:

- a wall time that does not exist (02:30 on spring-forward day in Los Angeles, when clocks
  jump from 02:00 to 03:00) moves forward by the size of the gap: 03:30 PDT;
- a wall time that happens twice (01:30 on fall-back day) means the first one: 01:30 PDT.

The scheduler that fires them lives in `bot.briefings.schedule`; queueing them in
`bot.briefings.runs`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.models import Subscription

log = logging.getLogger("strikebot.schedule")

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
ALL_DAYS: frozenset[int] = frozenset(range(7))


class HasSchedule(Protocol):
    """What the maths reads: a `Subscription`, or the `Schedule` channels share."""

    @property
    def briefing_time(self) -> time | None: ...

    @property
    def timezone(self) -> str: ...

    @property
    def briefing_days(self) -> frozenset[int]: ...


@dataclass(frozen=True, slots=True)
class Schedule:
    """When channels get their briefing: a wall time on some weekdays in one time zone.
    100,000 channels share a few dozen of these; the scheduler keeps one job per schedule."""

    briefing_time: time
    timezone: str
    briefing_days: frozenset[int]

    @classmethod
    def of(cls, sub: Subscription) -> Schedule | None:
        """The channel's schedule, or None if it gets no briefing."""
        if sub.briefing_time is None or not sub.briefing_days:
            return None
        return cls(sub.briefing_time, sub.timezone, sub.briefing_days)

    def __str__(self) -> str:
        return f"{self.briefing_time:%H:%M} {format_days(self.briefing_days)} {self.timezone}"


@dataclass(frozen=True, slots=True, order=True)
class BriefingSlot:
    """One briefing: the channel's local date it belongs to, and the UTC instant it is due."""

    at: datetime
    local_date: date


def slot_on(subscription: HasSchedule, day: date) -> BriefingSlot | None:
    """The briefing due on local date `day`, or None if the channel gets none that day."""
    if subscription.briefing_time is None or day.weekday() not in subscription.briefing_days:
        return None
    return BriefingSlot(_instant(day, subscription.briefing_time, subscription.timezone), day)


def _instant(day: date, at: time, timezone: str) -> datetime:
    # fold=0: a repeated wall time means its first occurrence, and a wall time inside a
    # spring-forward gap is read with the offset before the gap, i.e. moved forward by it.
    local = datetime.combine(day, at.replace(tzinfo=None, fold=0), tzinfo=ZoneInfo(timezone))
    return local.astimezone(UTC)


def next_briefing(subscription: HasSchedule, after: datetime) -> BriefingSlot | None:
    """The first briefing strictly after `after`, or None if the channel has no schedule."""
    if subscription.briefing_time is None or not subscription.briefing_days:
        return None
    start = after.astimezone(ZoneInfo(subscription.timezone)).date() - timedelta(days=1)
    for offset in range(9):
        slot = slot_on(subscription, start + timedelta(days=offset))
        if slot is not None and slot.at > after:
            return slot
    return None


def next_briefing_time(subscription: HasSchedule, after: datetime) -> datetime | None:
    """When the channel's next briefing is due (UTC), strictly after `after`."""
    slot = next_briefing(subscription, after)
    return None if slot is None else slot.at


def latest_briefing(subscription: HasSchedule, at_or_before: datetime) -> BriefingSlot | None:
    """The most recent briefing due at or before the given moment."""
    if subscription.briefing_time is None or not subscription.briefing_days:
        return None
    start = at_or_before.astimezone(ZoneInfo(subscription.timezone)).date() + timedelta(days=1)
    for offset in range(9):
        slot = slot_on(subscription, start - timedelta(days=offset))
        if slot is not None and slot.at <= at_or_before:
            return slot
    return None


def local_date_for(subscription: HasSchedule, moment: datetime) -> date:
    """The local date a briefing sent at `moment` counts for: the slot's date when `moment`
    is a slot, else the calendar date in the channel's zone."""
    slot = latest_briefing(subscription, moment)
    if slot is not None and slot.at == moment:
        return slot.local_date
    return moment.astimezone(ZoneInfo(subscription.timezone)).date()


def window_start(subscription: HasSchedule, slot_at: datetime) -> datetime:
    """Where "what changed" starts for a briefing due at `slot_at`: the channel's previous
    briefing (so Monday's covers the weekend for a Mon-Fri channel), at least 24 hours back,
    at most 7 days."""
    day = timedelta(days=1)
    previous = latest_briefing(subscription, slot_at - timedelta(microseconds=1))
    since = slot_at - day
    if previous is not None:
        since = min(since, previous.at)
    return max(since, slot_at - 7 * day)


def schedulable(
    subscriptions: Iterable[Subscription], warned: set[int] | None = None
) -> list[Subscription]:
    """The subscriptions whose time zone loads. One broken row (a zone name from a newer
    tz database, a hand edit) is logged (once per id in `warned`) and left out; it never
    stops the other channels."""
    usable = []
    for sub in subscriptions:
        try:
            ZoneInfo(sub.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            if warned is None or sub.id not in warned:
                if warned is not None:
                    warned.add(sub.id)
                log.error(
                    "%s has the unknown time zone %r and gets no briefing; set a valid one "
                    "with `strikebot briefing set --channel %d --timezone ...`",
                    sub.address,
                    sub.timezone,
                    sub.id,
                )
            continue
        usable.append(sub)
    return usable


def format_days(days: Iterable[int]) -> str:
    """Weekday numbers -> 'mon-fri', 'daily', 'mon,wed,fri' (as `bot.editorial.parsing.parse_days`
    reads them)."""
    chosen = sorted(set(days))
    if not chosen:
        return "none"
    if len(chosen) == 7:
        return "daily"
    runs: list[list[int]] = []
    for d in chosen:
        if runs and runs[-1][-1] == d - 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    return ",".join(
        DAY_NAMES[r[0]] if len(r) == 1 else f"{DAY_NAMES[r[0]]}-{DAY_NAMES[r[-1]]}" for r in runs
    )
