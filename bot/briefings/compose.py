"""The morning briefing: the one message a parent reads before deciding whether to send
their child to school.

`compose_briefing` is a pure function of the store's data and `now`: where the dispute
stands and which day of the strike it is, what changed since the channel's previous
briefing (updates, corrections, retractions, demand moves), what happens next and when in
the channel's own time zone, the demands at a glance (union ask against current offer) and
the public page. A quiet day says so in one line instead of repeating yesterday. Every
word of the template exists in each language; people's own text is used in the channel's
language where it was written in it.

Sizes stay inside every platform at once: body within a Slack section (3000) and a Discord
embed description (4096), at most 10 fields of at most 700 characters, and everything
together under Discord's 6000 per message.

`gather_briefing_inputs` reads what the composer needs in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot import i18n
from bot.briefings.queries import updates_changed_since
from bot.messages.compose import fit, local_zone, neutralize_mentions, page_url, update_url
from bot.messages.fallback import shown, shown_demand, shown_update
from bot.messages.families import as_line, family_answers
from bot.messages.kinds import status_name
from bot.models import (
    Audience,
    Campaign,
    Demand,
    DemandChange,
    DemandEvent,
    Subscription,
    Update,
)
from bot.plugins.outbound import Field, Link, MessageKind, OutboundMessage
from bot.store import Tx

# Sizes (characters). The sum stays below Discord's 6000 per message with room to spare.
TITLE_LIMIT = 150
BODY_LIMIT = 2900
FIELD_NAME_LIMIT = 150
FIELD_VALUE_LIMIT = 700
FIELDS_LIMIT = 10
FIELDS_TOTAL_LIMIT = 2400
FOOTER_LIMIT = 200
ITEM_LIMIT = 300
ITEMS_SHOWN = 8
# How far back the loader reads: a Mon-Fri channel's Monday briefing covers the weekend.
LOOKBACK = timedelta(days=7)
DAY = timedelta(days=1)
# Demand events recorded when the campaign file was loaded are the starting point, not news.
SEED_RECORDER = "config"

_TEXT = i18n.Words("briefings")


def _t(language: str, key: str, **values: object) -> str:
    """Sentence `key`, whole in one language: `i18n.Term` values (dates, labels) are said in
    the sentence's language, so a half-translated catalogue never mixes two."""
    return _TEXT.say(language, key, **values)


# ------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class BriefingInputs:
    """Everything the composer reads, loaded once for any number of channels."""

    latest: Update | None
    recent_updates: tuple[Update, ...]
    demands: tuple[Demand, ...]
    demand_events: tuple[tuple[str, DemandEvent], ...]
    loaded_since: datetime

    def compose(
        self,
        campaign: Campaign,
        subscription: Subscription,
        now: datetime,
        language: str | None = None,
        *,
        since: datetime | None = None,
        reached: Collection[int] = (),
    ) -> OutboundMessage:
        """The briefing for `subscription` (its language and zone); of the updates for some
        sites or groups, only those whose ids are in `reached` (`Reach`) are told."""
        start = max(since or now - DAY, self.loaded_since)
        return compose_briefing(
            campaign,
            subscription,
            self.latest,
            [u for u in self.recent_updates if u.audience.everyone or u.id in reached],
            self.demands,
            self.demand_events,
            now,
            language,
            since=start,
        )

    def targeted(self, since: datetime, now: datetime) -> tuple[Update, ...]:
        """The updates for some sites or groups that changed in (since, now]: what can make
        one audience's briefing differ from another's."""
        start = max(since, self.loaded_since)
        return tuple(
            u for u in self.recent_updates if not u.audience.everyone and _changed_in(u, start, now)
        )


def _changed_in(update: Update, since: datetime, now: datetime) -> bool:
    """Published, retracted or corrected in (since, now]: a line of a briefing."""
    moments = [update.published_at, update.retracted_at, *(r.created_at for r in update.revisions)]
    return any(at is not None and since < at <= now for at in moments)


@dataclass(slots=True)
class Reach:
    """Which of `targeted` (updates for some sites or groups) each follow-set's briefing
    tells, decided by the delivery's own rule (`audience_clause`, through `Tx.reached`) for
    one subscription of each follow-set, and remembered: a briefing is composed once per
    language and distinct answer, not per channel."""

    targeted: Sequence[Update]
    known: dict[Hashable, frozenset[int]] = field(default_factory=dict)

    @property
    def everything(self) -> frozenset[int]:
        """What a follower of everything gets: every one of them."""
        return frozenset(u.id for u in self.targeted)

    async def learn(self, tx: Tx, representatives: Mapping[Hashable, int]) -> None:
        """Find out what each new follow-set gets, from one subscription that has it."""
        new = {key: rep for key, rep in representatives.items() if key not in self.known}
        if not new:
            return
        if not self.targeted:
            self.known.update(dict.fromkeys(new, frozenset()))
            return
        audiences: list[Audience] = sorted({u.audience for u in self.targeted}, key=repr)
        reached = await tx.reached(audiences, new.values())
        by_audience = dict(zip(audiences, reached, strict=True))
        for key, rep in new.items():
            self.known[key] = frozenset(
                u.id for u in self.targeted if rep in by_audience[u.audience]
            )

    def of(self, key: Hashable) -> frozenset[int]:
        return self.known[key]


async def reach_of(
    tx: Tx, inputs: BriefingInputs, subscription: Subscription, since: datetime, now: datetime
) -> frozenset[int]:
    """The updates for some sites or groups that `subscription`'s briefing tells (all of
    them for one that follows everything, or a preview's channel that is not stored)."""
    reach = Reach(inputs.targeted(since, now))
    if not subscription.id:
        return reach.everything
    await reach.learn(tx, {subscription.follows: subscription.id})
    return reach.of(subscription.follows)


async def gather_briefing_inputs(tx: Tx, campaign: Campaign, now: datetime) -> BriefingInputs:
    """The latest update, what changed in the last `LOOKBACK` (updates for everyone and for
    some sites or groups: `Reach` says whose briefing tells the latter), and the demands:
    one read. Where the strike stands and the next step are the campaign's (the latest
    update for everyone)."""
    since = now - LOOKBACK
    return BriefingInputs(
        latest=await tx.latest_update(now, place=()),
        recent_updates=tuple(await updates_changed_since(tx, since, now)),
        demands=tuple(await tx.list_demands(with_history=False)),
        demand_events=tuple(
            (key, event) for key, event in await tx.demand_events_since(since) if event.at <= now
        ),
        loaded_since=since,
    )


# ------------------------------------------------------------------------- composer


def compose_briefing(
    campaign: Campaign,
    subscription: Subscription,
    latest: Update | None,
    recent_updates: Sequence[Update],
    demands: Sequence[Demand],
    demand_events_since: Sequence[tuple[str, DemandEvent]],
    now: datetime,
    language: str | None = None,
    *,
    since: datetime | None = None,
) -> OutboundMessage:
    """The briefing `subscription` gets at `now`, covering changes after `since` (default:
    the last 24 hours), in `language` (default: the channel's)."""
    lang = i18n.pick(language or subscription.language)
    zone = local_zone(subscription.timezone, campaign)
    local_now = now.astimezone(zone)
    since = now - DAY if since is None else since
    page = page_url(campaign, lang)

    title_key = "title_morning" if local_now.hour < 12 else "title"
    title = _t(lang, title_key, date=i18n.date_term(local_now.date()))

    main = campaign.default_language
    items = _changes(recent_updates, demands, demand_events_since, since, now, lang, main)
    fields: tuple[Field, ...] = ()
    tail = _next_step(latest, now, zone, lang, main)
    if items:  # a quiet day does not repeat the table it showed yesterday
        fields, hidden = _demand_fields(demands, lang, main)
        if hidden:
            tail.append(_t(lang, "more_demands", n=hidden))

    window_is_a_day = now - since <= DAY + timedelta(hours=1)
    since_date = i18n.date_term(since.astimezone(zone).date())
    lines = [_status_line(campaign, latest, local_now, lang)]
    if latest is not None and latest.status.on_strike:
        # What parents decide the morning on (the status line says the strike is on).
        lines += [as_line(q, a) for q, a in family_answers(campaign, None, now, lang)]
    if items:
        header = (
            _t(lang, "changes_24h")
            if window_is_a_day
            else _t(lang, "changes_since", date=since_date)
        )
        room = BODY_LIMIT - len("\n".join([*lines, "", header, "", *tail])) - 80
        lines += ["", header, *_bullets(items, lang, room)]
        if tail:
            lines.append("")
    else:
        lines.append(
            _t(lang, "quiet_24h") if window_is_a_day else _t(lang, "quiet_since", date=since_date)
        )
    body = fit("\n".join([*lines, *tail]), BODY_LIMIT, page, lang)

    links = [Link(_t(lang, "public_page"), page)]
    if latest is not None:
        links.append(Link(_t(lang, "latest_update"), update_url(latest, campaign, lang)))
    return OutboundMessage(
        title=fit(title, TITLE_LIMIT, None, lang),
        body=body,
        kind=MessageKind.BRIEFING,
        language=lang,
        status=latest.status if latest else None,
        status_label=status_name(campaign, latest.status, lang) if latest else "",
        fields=fields,
        links=tuple(links),
        url=page,
        footer=fit(
            _t(lang, "footer", union=campaign.union, zone=zone.key), FOOTER_LIMIT, None, lang
        ),
    )


def _status_line(campaign: Campaign, latest: Update | None, local_now: datetime, lang: str) -> str:
    """'Day 5 of the strike' / '657 days since talks began' (the status is the badge)."""
    today = local_now.date()
    if latest is None:
        return _t(lang, "no_updates")
    strike_start = campaign.strike_start
    if strike_start is not None and strike_start <= today and latest.status.on_strike:
        return _t(lang, "day_of_strike", n=i18n.day_of_strike(strike_start, today))
    days = (today - campaign.start_date).days
    if days < 1:
        return status_name(campaign, latest.status, lang)
    return _t(lang, "days_since_talks_one" if days == 1 else "days_since_talks", n=days)


def _changes(
    updates: Sequence[Update],
    demands: Sequence[Demand],
    events: Sequence[tuple[str, DemandEvent]],
    since: datetime,
    now: datetime,
    lang: str,
    main: str,
) -> list[str]:
    """What happened in (since, now], oldest first, one line each."""
    dated: list[tuple[datetime, int, str]] = []
    for update in updates:
        headline = _human(shown_update(update, lang, main).headline)
        if update.retracted:
            at = update.retracted_at
            if at is not None and since < at <= now:
                reason = _human(shown(update.retraction_reason_texts(), lang, main) or "—")
                dated.append(
                    (at, update.id, _t(lang, "retracted", headline=headline, reason=reason))
                )
            continue
        published = update.published_at
        if published is not None and since < published <= now:
            dated.append((published, update.id, _t(lang, "new", headline=headline)))
            continue  # a reader who has not seen it gets the corrected text anyway
        revisions = [r for r in update.revisions if since < r.created_at <= now]
        if revisions:
            last = revisions[-1]
            reason = _human(shown(last.reason_texts(), lang, main))
            dated.append(
                (
                    last.created_at,
                    update.id,
                    _t(lang, "corrected", headline=headline, reason=reason),
                )
            )
    titles = {d.key: shown_demand(d, lang, main).title for d in demands}
    moved: dict[str, tuple[datetime, str]] = {}
    for key, event in events:
        if event.recorded_by == SEED_RECORDER or not since < event.at <= now:
            continue
        if event.kind is not DemandChange.OFFER:  # re-wordings, additions: the list shows them
            continue
        title = _human(titles.get(key, key))
        offer = shown(event.offer, lang, main)
        if offer:
            line = _t(lang, "demand_offer", title=title, offer=_human(offer))
        else:
            line = _t(
                lang,
                "demand_status",
                title=title,
                status=i18n.demand_status_term(event.status),
            )
        moved[key] = (event.at, line)  # the latest move of each demand
    dated.extend((at, 0, line) for at, line in moved.values())
    dated.sort(key=lambda entry: (entry[0], entry[1]))
    return [line for _, _, line in dated]


def _bullets(items: list[str], lang: str, room: int) -> list[str]:
    """As many items as fit in `room` characters, then how many more there are."""
    shown: list[str] = []
    used = 0
    for item in items[:ITEMS_SHOWN]:
        line = f"• {fit(item, ITEM_LIMIT, None, lang)}"
        if used + len(line) + 1 > room:
            break
        shown.append(line)
        used += len(line) + 1
    if len(items) > len(shown):
        shown.append(_t(lang, "more_items", n=len(items) - len(shown)))
    return shown


def _next_step(
    latest: Update | None, now: datetime, zone: ZoneInfo, lang: str, main: str
) -> list[str]:
    if latest is None:
        return []
    lines = []
    step = _human(shown_update(latest, lang, main).next_step.strip())
    if step:
        lines.append(fit(_t(lang, "next", text=step), ITEM_LIMIT + 40, None, lang))
    if latest.next_step_at is not None and latest.next_step_at >= now:
        today = now.astimezone(zone).date()
        when = i18n.datetime_term(latest.next_step_at.astimezone(zone), today)
        lines.append(_t(lang, "next_when", when=when))
    return lines


def _demand_fields(
    demands: Sequence[Demand], lang: str, main: str
) -> tuple[tuple[Field, ...], int]:
    """One field per demand, as many as fit; returns the fields and how many were left out."""
    fields: list[Field] = []
    used = 0
    for demand in demands:
        text = shown_demand(demand, lang, main)
        name = fit(
            f"{_human(text.title)} · {i18n.demand_status_label(demand.status, lang)}",
            FIELD_NAME_LIMIT,
            None,
            lang,
        )
        ask = _human(text.union_position or text.summary) or "—"
        offer = _human(text.employer_offer) or _t(lang, "no_offer")
        half = FIELD_VALUE_LIMIT // 2 - 30
        value = "\n".join(
            (
                _t(lang, "union_ask", text=fit(ask, half, None, lang)),
                _t(lang, "offer", text=fit(offer, half, None, lang)),
            )
        )
        value = fit(value, FIELD_VALUE_LIMIT, None, lang)
        if len(fields) == FIELDS_LIMIT or used + len(name) + len(value) > FIELDS_TOTAL_LIMIT:
            break
        fields.append(Field(name, value))
        used += len(name) + len(value)
    return tuple(fields), len(demands) - len(fields)


def _human(text: str) -> str:
    """Text people wrote: on one line, pings made inert."""
    return neutralize_mentions(" ".join(text.split()))


__all__ = [
    "BODY_LIMIT",
    "BriefingInputs",
    "Reach",
    "compose_briefing",
    "gather_briefing_inputs",
    "reach_of",
]
