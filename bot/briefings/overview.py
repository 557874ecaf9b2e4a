"""The morning briefing at a glance, for the web desk: who gets it when (the schedules, with
how many channels and people share each and when it next goes) and what it would say now,
in one language.

    lines = await briefing_schedule(store, now)
    message = await briefing_preview(store, campaign, now, "es", at=time(7, 0))
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time

from bot.briefings.compose import gather_briefing_inputs
from bot.briefings.queries import schedules
from bot.briefings.times import Schedule, next_briefing_time, window_start
from bot.models import Campaign, Subscription
from bot.plugins.outbound import OutboundMessage
from bot.store import Store


@dataclass(frozen=True, slots=True)
class ScheduleLine:
    """One schedule: a wall time on some days in one zone, how many get it, when next."""

    schedule: Schedule
    subscribers: int
    next_at: datetime | None


async def briefing_schedule(store: Store, now: datetime) -> list[ScheduleLine]:
    """Every distinct schedule of the active channels and people, soonest first."""
    async with store.read() as tx:
        found = await schedules(tx)
    lines = [ScheduleLine(s, n, next_briefing_time(s, now)) for s, n in found.items()]
    return sorted(lines, key=lambda line: (line.next_at is None, line.next_at or now))


async def briefing_preview(
    store: Store, campaign: Campaign, now: datetime, language: str, *, at: time
) -> OutboundMessage:
    """The briefing a channel with the campaign's defaults (its zone, `at`) would get if it
    went now, in `language`."""
    channel = Subscription(
        id=0,
        platform="preview",
        workspace="preview",
        channel="default",
        language=language,
        briefing_time=at,
        timezone=campaign.timezone,
    )
    async with store.read() as tx:
        inputs = await gather_briefing_inputs(tx, campaign, now)
    return inputs.compose(campaign, channel, now, language, since=window_start(channel, now))
