"""The morning briefing at a glance, for the web desk and the CLI: who gets it when (the
schedules, with how many channels and people share each and when it next goes), what it
would say now in one language (to a channel that follows everything), and what differs per
audience (the updates for some sites or groups in it, and how many briefings tell each).

    lines = await briefing_schedule(store, now)
    message = await briefing_preview(store, campaign, now, "es", at=time(7, 0))
    only = await briefing_audiences(store, campaign, now, at=time(7, 0))
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time

from bot import i18n
from bot.briefings.compose import gather_briefing_inputs
from bot.briefings.queries import briefing_reach, schedules
from bot.briefings.times import Schedule, next_briefing_time, window_start
from bot.messages.fallback import shown_update
from bot.models import Campaign, Site, SiteGroup, Subscription, Update
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
    """The briefing a channel with the campaign's defaults (its zone, `at`) that follows
    everything would get if it went now, in `language`: every update of the window, those
    for some sites or groups too (`briefing_audiences` says who else gets those)."""
    channel = _default_channel(campaign, language, at)
    since = window_start(channel, now)
    async with store.read() as tx:
        inputs = await gather_briefing_inputs(tx, campaign, now)
    told = frozenset(u.id for u in inputs.targeted(since, now))
    return inputs.compose(campaign, channel, now, language, since=since, reached=told)


@dataclass(frozen=True, slots=True)
class AudienceLine:
    """An update for some sites or groups in the briefing's window: only the briefings of
    whoever follows them (a site, its group) or everything tell it."""

    update: Update
    places: tuple[Site | SiteGroup, ...]
    reached: int  # channels and people with a briefing whose briefing tells it
    scheduled: int  # channels and people with a briefing

    def sentence(self, language: str, main: str) -> str:
        """'Only in the briefing of whoever follows Roosevelt High School or everything (3
        of the 40 with a briefing): Breakfast at the north gate'."""
        names = [place.name(language) for place in self.places]
        named = i18n.format_list(names or [self.update.audience.describe()], language)
        return i18n.text(language, "briefings.only_for").format(
            names=named,
            n=i18n.format_number(self.reached, language),
            total=i18n.format_number(self.scheduled, language),
            headline=shown_update(self.update, language, main).headline,
        )


async def briefing_audiences(
    store: Store, campaign: Campaign, now: datetime, *, at: time
) -> list[AudienceLine]:
    """What differs per audience in the briefing going now (a channel with the campaign's
    defaults): each update for some sites or groups in it, whom it names and how many
    briefings tell it (the delivery's rule, `audience_clause`), oldest first."""
    channel = _default_channel(campaign, campaign.default_language, at)
    async with store.read() as tx:
        inputs = await gather_briefing_inputs(tx, campaign, now)
        targeted = inputs.targeted(window_start(channel, now), now)
        if not targeted:
            return []
        scheduled = sum((await schedules(tx)).values())
        lines = []
        for update in targeted:
            places: list[Site | SiteGroup] = []
            for code in update.audience.sites:
                site = await tx.get_site(code)
                places += [site] if site is not None else []
            for code in update.audience.groups:
                group = await tx.get_group(code)
                places += [group] if group is not None else []
            reached = await briefing_reach(tx, update.audience)
            lines.append(AudienceLine(update, tuple(places), reached, scheduled))
    return lines


def _default_channel(campaign: Campaign, language: str, at: time) -> Subscription:
    return Subscription(
        id=0,
        platform="preview",
        workspace="preview",
        channel="default",
        language=language,
        briefing_time=at,
        timezone=campaign.timezone,
    )
