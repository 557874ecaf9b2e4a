"""What members ask, answered from the store: status, demands, one demand, the timeline,
the next step, help; and the pickers platforms use for autocomplete."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot import i18n
from bot.audiences.picker import KINDS, PlaceMatch
from bot.commands._context import Asker, CommandContext, CommandsBase, Reply
from bot.editorial.parsing import parse_count
from bot.editorial.rules import clean_text
from bot.i18n.sentences import invalid, not_found, say, short
from bot.messages.compose import fit, page_url, update_message, update_url
from bot.messages.fallback import shown, shown_demand, shown_update
from bot.messages.families import family_answers
from bot.messages.kinds import status_term, statuses
from bot.models import (
    Audience,
    Demand,
    DemandChange,
    DemandText,
    Site,
    SiteGroup,
    Status,
    Update,
    UpdateState,
)
from bot.plugins.outbound import Field, Link, MessageKind, OutboundMessage
from bot.store import Tx
from bot.store import schema as t

_MAX_DEMAND_FIELDS = 20
_STATUS_EXCERPT = 700


class Questions(CommandsBase):
    """The questions anyone may ask."""

    async def status(self, ctx: CommandContext, site: str | None = None) -> Reply:
        """Where the strike stands; with `site` (a site's or a group's code), the latest
        word its readers got (for everyone, for it or for its group)."""
        return await self._run(ctx, "status", lambda a: self._status(a, site))

    async def demands(self, ctx: CommandContext) -> Reply:
        return await self._run(ctx, "demands", self._demands)

    async def demand(self, ctx: CommandContext, key: str) -> Reply:
        return await self._run(ctx, "demand", lambda a: self._demand(a, key))

    async def timeline(self, ctx: CommandContext, n: int | str = 5) -> Reply:
        return await self._run(ctx, "timeline", lambda a: self._timeline(a, n))

    async def next_step(self, ctx: CommandContext) -> Reply:
        return await self._run(ctx, "next", self._next)

    async def help(self, ctx: CommandContext) -> Reply:
        return await self._run(ctx, "help", self._help)

    # -- pickers -------------------------------------------------------------------

    async def demand_keys(
        self, prefix: str = "", language: str | None = None
    ) -> list[tuple[str, str]]:
        """(key, title) of demands whose key starts with, or title contains, `prefix`, for
        autocomplete (at most 25, Discord's limit)."""
        lang = i18n.pick(language or self.campaign.default_language)
        wanted = clean_text(prefix).lower()
        async with self.store.read() as tx:
            demands = await tx.list_demands(with_history=False)
        out = []
        for demand in demands:
            title = demand.text(lang).title
            if not wanted or demand.key.startswith(wanted) or wanted in title.lower():
                out.append((demand.key, title))
        return out[:25]

    async def find_places(
        self,
        query: str = "",
        language: str | None = None,
        *,
        kinds: Collection[str] = KINDS,
        limit: int = 25,
    ) -> list[PlaceMatch]:
        """Sites and groups matching what someone typed, best first, named in `language`
        (`bot.audiences.picker`): a site and group picker's autocomplete."""
        lang = i18n.pick(language or self.campaign.default_language)
        picked = max(1, min(limit, 100))
        return await self.picker.find(query[:200], lang, kinds=kinds, limit=picked)

    async def places_named(
        self, codes: Sequence[str], language: str | None = None
    ) -> list[PlaceMatch]:
        """The sites and groups with these codes (unknown ones left out): what a picker
        shows as already chosen."""
        lang = i18n.pick(language or self.campaign.default_language)
        return await self.picker.named(codes, lang)

    async def following(self, ctx: CommandContext) -> Audience | None:
        """What the channel of `ctx` follows (no sites nor groups: everything), or None
        when it is not subscribed: what a picker shows as chosen."""
        async with self.store.read() as tx:
            sub = await tx.find_subscription(ctx.platform, ctx.workspace, ctx.channel)
        return None if sub is None else sub.follows

    async def recent_updates(
        self, n: int = 10, states: Collection[UpdateState] | None = None
    ) -> list[Update]:
        """The newest updates written, of `states` (every state when None: pending approval
        and scheduled too): what an admin picks from to edit, retract or approve. Read
        through the primary key, newest first, whatever the length of the campaign."""
        async with self.store.read() as tx:
            return await tx.recent_updates(self.clock(), limit=max(1, min(n, 25)), states=states)

    async def _status(self, a: Asker, site: str | None = None) -> Reply:
        lang, now = a.language, self.clock()
        place: Site | SiteGroup | None = None
        async with self.store.read() as tx:
            latest = current = await tx.latest_update(now)
            if site is not None and site.strip():
                code = site.strip().lower()[:40]
                codes = await tx.place_codes(code)
                if codes is None:
                    raise not_found("audiences.no_such_place", code=short(site))
                place = await tx.get_site(code) or await tx.get_group(code)
                found = await tx.visible_updates(now, limit=1, place=codes)
                latest = found[0] if found else None
        if latest is None or current is None:
            return Reply(
                OutboundMessage(
                    title=say(lang, "status_none_title"),
                    body=say(lang, "status_none_body", url=self._page(lang)),
                    language=lang,
                    links=(Link(say(lang, "status_page"), self._page(lang)),),
                )
            )
        card = update_message(latest, lang, self.campaign, timezone=a.zone.key)
        lines = []
        day = self._day_line(current.status, now, a.zone, lang)
        if day:
            lines.append(day)
        excerpt = card.title
        if card.body:
            excerpt += "\n" + card.body
        lines.append(fit(excerpt, _STATUS_EXCERPT, card.url, lang))
        # What parents ask next (the day line already says whether the strike is on).
        families = family_answers(self.campaign, None, now, lang)
        return Reply(
            replace(
                card,
                kind=MessageKind.REPLY,
                urgency=None,
                title=self._status_title(lang, current.status, place),
                body="\n\n".join(lines),
                fields=card.fields + tuple(Field(q, a) for q, a in families),
                links=(
                    Link(
                        say(lang, "read_update", id=latest.id),
                        update_url(latest, self.campaign, lang),
                    ),
                    Link(say(lang, "status_page"), self._page(lang)),
                ),
            )
        )

    def _status_title(self, lang: str, status: Status, place: Site | SiteGroup | None) -> str:
        label = status_term(self.campaign, status)
        if place is None:
            return say(lang, "status_title", label=label)
        return i18n.text(lang, "audiences.status_title").format(place=place.name(lang), label=label)

    def _day_line(self, status: Status, now: datetime, zone: ZoneInfo, lang: str) -> str | None:
        start = self.campaign.strike_start
        if start is None:
            return None
        today = now.astimezone(zone).date()
        if status.on_strike and today >= start:
            return say(lang, "day_of_strike", day=i18n.day_of_strike(start, today))
        if today < start and status in (Status.BARGAINING, Status.STRIKE_VOTE):
            return say(lang, "strike_begins", date=i18n.date_term(start))
        return None

    async def _demands(self, a: Asker) -> Reply:
        lang = a.language
        async with self.store.read() as tx:
            demands = await tx.list_demands(with_history=False)
        intro = say(
            lang, "demands_intro", union=self.campaign.union, employer=self.campaign.employer
        )
        if not demands:
            intro = say(lang, "no_demands")
        fields = [
            Field(self._shown(demand, lang).title, self._demand_summary(demand, lang))
            for demand in demands[:_MAX_DEMAND_FIELDS]
        ]
        rest = demands[_MAX_DEMAND_FIELDS:]
        if rest:
            intro += "\n" + say(
                lang, "more_demands", count=len(rest), keys=", ".join(d.key for d in rest)
            )
        return Reply(
            OutboundMessage(
                title=say(lang, "demands_title"),
                body=intro,
                language=lang,
                fields=tuple(fields),
                links=(Link(say(lang, "status_page"), self._page(lang)),),
            )
        )

    def _shown(self, demand: Demand, lang: str) -> DemandText:
        return shown_demand(demand, lang, self.campaign.default_language)

    def _demand_summary(self, demand: Demand, lang: str) -> str:
        text = self._shown(demand, lang)
        ask = text.union_position or text.summary or say(lang, "nothing_there")
        offer = text.employer_offer or say(lang, "no_offer")
        return "\n".join(
            (
                say(
                    lang,
                    "demand_line",
                    status=i18n.demand_status_term(demand.status),
                    key=demand.key,
                ),
                f"{say(lang, 'we_ask')}: {ask}",
                f"{say(lang, 'they_offer', employer=self.campaign.employer)}: {offer}",
            )
        )

    async def _demand(self, a: Asker, key: object) -> Reply:
        lang = a.language
        wanted = clean_text(key).lower()
        async with self.store.read() as tx:
            keys = await tx.demand_keys()
            if not keys:
                raise not_found("no_demands")
            if not wanted:
                raise invalid("missing_demand", keys=", ".join(keys), first=keys[0])
            demand = await tx.get_demand(wanted) if wanted in keys else None
            if demand is None:
                match = _match_demand(wanted, await tx.list_demands(with_history=False))
                demand = await tx.get_demand(match) if match else None
        if demand is None:
            raise not_found("unknown_demand", key=short(key), keys=", ".join(keys))
        text = self._shown(demand, lang)
        fields = [
            Field(say(lang, "we_ask"), text.union_position or say(lang, "nothing_there")),
            Field(
                say(lang, "they_offer", employer=self.campaign.employer),
                text.employer_offer or say(lang, "no_offer"),
            ),
            Field(say(lang, "demand_status"), i18n.demand_status_label(demand.status, lang), True),
        ]
        facts = text.facts
        if facts:
            fields.append(Field(say(lang, "facts"), "\n".join(f"• {fact}" for fact in facts)))
        fields.append(Field(say(lang, "offer_history"), self._history(demand, a.zone, lang)))
        return Reply(
            OutboundMessage(
                title=text.title,
                body=text.summary,
                language=lang,
                status_label=i18n.demand_status_label(demand.status, lang),
                fields=tuple(fields),
                links=(Link(say(lang, "status_page"), self._page(lang)),),
                footer=say(lang, "demand_key", key=demand.key),
            )
        )

    def _history(self, demand: Demand, zone: ZoneInfo, lang: str) -> str:
        lines = []
        for event in demand.history:
            day = i18n.date_term(
                event.at.astimezone(zone).date(), self.clock().astimezone(zone).date()
            )
            status = i18n.demand_status_term(event.status)
            offer = shown(event.offer, lang, self.campaign.default_language)
            if event.kind is DemandChange.EDIT:
                edited = event.changes.get(lang) or next(iter(event.changes.values()), {})
                fields = ", ".join(edited) or i18n.demand_status_label(event.status, lang)
                lines.append(say(lang, "history_edit", date=day, fields=fields, reason=event.note))
            elif event.kind is DemandChange.ADDED:
                lines.append(say(lang, "history_added", date=day))
            elif event.kind is DemandChange.RETIRED:
                lines.append(say(lang, "history_retired", date=day, reason=event.note))
            elif offer:
                lines.append(
                    say(
                        lang,
                        "history_entry",
                        date=day,
                        status=status,
                        offer=offer,
                        source=event.source,
                    )
                )
            else:
                lines.append(
                    say(
                        lang, "history_entry_no_offer", date=day, status=status, source=event.source
                    )
                )
        return "\n".join(lines) or say(lang, "no_history")

    async def _timeline(self, a: Asker, n: object) -> Reply:
        lang, now = a.language, self.clock()
        count = parse_count(n)
        async with self.store.read() as tx:
            updates = await tx.list_updates(now, limit=count)
            corrected = await _corrected_ids(tx, [u.id for u in updates])
        if not updates:
            return Reply(
                OutboundMessage(
                    title=say(lang, "timeline_title"),
                    body=say(lang, "timeline_empty"),
                    language=lang,
                )
            )
        fields = []
        for update in updates:
            text = shown_update(update, lang, self.campaign.default_language)
            name = say(
                lang,
                "timeline_entry",
                id=update.id,
                when=i18n.datetime_term(
                    update.effective_at.astimezone(a.zone), now.astimezone(a.zone).date()
                ),
                status=status_term(self.campaign, update.status),
            )
            if update.retracted:
                value = say(
                    lang,
                    "timeline_retracted",
                    headline=text.headline,
                    reason=shown(
                        update.retraction_reason_texts(), lang, self.campaign.default_language
                    )
                    or "—",
                )
            else:
                value = text.headline
                if update.id in corrected:
                    value += " " + say(lang, "timeline_corrected")
                elif update.revision > 1:
                    value += " " + say(lang, "timeline_edited")
            fields.append(Field(name, value))
        return Reply(
            OutboundMessage(
                title=say(lang, "timeline_title"),
                language=lang,
                fields=tuple(fields),
                links=(Link(say(lang, "status_page"), self._page(lang)),),
            )
        )

    async def _next(self, a: Asker) -> Reply:
        lang, now = a.language, self.clock()
        async with self.store.read() as tx:
            latest = await tx.latest_update(now)
        text = shown_update(latest, lang, self.campaign.default_language) if latest else None
        if latest is None or text is None or not (text.next_step.strip() or latest.next_step_at):
            return Reply(
                OutboundMessage(
                    title=say(lang, "next_title"), body=say(lang, "next_none"), language=lang
                )
            )
        fields = []
        if latest.next_step_at is not None:
            today = now.astimezone(a.zone).date()
            when = i18n.format_datetime(latest.next_step_at.astimezone(a.zone), lang, today)
            if latest.next_step_at < now:
                when = f"{when} ({say(lang, 'when_passed')})"
            fields.append(Field(say(lang, "when"), when, True))
        card = update_message(latest, lang, self.campaign, timezone=a.zone.key)
        return Reply(
            OutboundMessage(
                title=say(lang, "next_title"),
                body=text.next_step.strip() or text.headline,
                language=lang,
                status=latest.status,
                status_label=card.status_label,
                fields=tuple(fields),
                links=(
                    Link(
                        say(lang, "read_update", id=latest.id),
                        update_url(latest, self.campaign, lang),
                    ),
                ),
                url=card.url,
                footer=card.footer,
            )
        )

    async def _help(self, a: Asker) -> Reply:
        lang = a.language
        keys = ("help_status", "help_demands", "help_demand", "help_timeline", "help_next",
                "help_help")  # fmt: skip
        body = "\n".join(say(lang, key) for key in keys)
        fields: tuple[Field, ...] = ()
        if a.is_admin:
            admin_keys = ("help_post", "help_edit", "help_retract", "help_approve",
                          "help_demand_change", "help_subscribe", "help_unsubscribe")  # fmt: skip
            lines = [say(lang, key) for key in admin_keys]
            offered = ", ".join(s.value for s in statuses(self.campaign))
            lines.append(say(lang, "help_statuses", statuses=offered))
            fields = (Field(say(lang, "help_admin_title"), "\n".join(lines)),)
        else:
            body += "\n\n" + say(lang, "help_not_admin")
        return Reply(
            OutboundMessage(title=say(lang, "help_title"), body=body, language=lang, fields=fields),
            ephemeral=True,
        )

    def _page(self, lang: str) -> str:
        return page_url(self.campaign, lang)


def _match_demand(wanted: str, demands: Sequence[Demand]) -> str | None:
    """The one demand whose key starts with, or whose title (any language) is, `wanted`."""
    wanted_key = _separators(wanted)
    matches = [
        d.key
        for d in demands
        if _separators(d.key).startswith(wanted_key)
        or any(text.title.lower() == wanted for text in d.texts.values())
    ]
    return matches[0] if len(matches) == 1 else None


def _separators(text: str) -> str:
    """'class size', 'class_size' and 'class-size' are one key."""
    return re.sub(r"[\s_-]+", "-", text.strip().lower())


async def _corrected_ids(tx: Tx, update_ids: Sequence[int]) -> set[int]:
    """Which of these updates were corrected (not just edited), from the audit log."""
    if not update_ids:
        return set()
    targets = [f"update:{uid}" for uid in update_ids]
    rows = await tx.conn.scalars(
        select(t.audit_log.c.target).where(
            t.audit_log.c.action == "update.correct", t.audit_log.c.target.in_(targets)
        )
    )
    return {int(target.split(":", 1)[1]) for target in rows}
