"""What members ask and admins order, platform-neutral, answered from the store.

An adapter turns a slash command into a `CommandContext` plus arguments, calls one method
(or `handle(ctx, text)` with the typed text), and renders the `Reply`. Every method answers:
a person's mistake becomes a reply saying what to do (`ok=False`, only they see it), and
nothing a person types makes an exception escape.

Language: the context's locale when the bot speaks it, else the channel's subscription
language, else the campaign's. Times: the context's time zone, else the channel's, else the
campaign's. Sentences live in `bot/locales/commands.toml`.
"""

from __future__ import annotations

import logging
import time as timer
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select

from bot import i18n
from bot.admin import BODY_MAX, HEADLINE_MAX, NEXT_STEP_MAX, REASON_MAX, Admin, Changes, Draft
from bot.clock import Clock, utcnow
from bot.command_args import (
    clean_text,
    is_off,
    parse_count,
    parse_days,
    parse_flag,
    parse_language,
    parse_optional_hhmm,
    parse_quiet_hours,
    parse_status,
    parse_timezone,
    parse_update_id,
    parse_urgencies,
    parse_urgency,
    parse_when,
    tokenize,
    valid_timezone,
)
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound, StrikebotError
from bot.locales import invalid, not_found, say, short
from bot.messages import fit, local_zone, neutralize_mentions, update_message, update_url
from bot.metrics import Metrics
from bot.models import (
    Actor,
    Campaign,
    Demand,
    Platform,
    QuietHours,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.ports import Field, Link, MessageKind, OutboundMessage
from bot.store import Store, Tx
from bot.store import schema as t

__all__ = ["COMMAND_NAMES", "CommandContext", "Commands", "Reply"]

log = logging.getLogger(__name__)

# Names a person may type (English, Spanish, short forms) -> the command.
_ALIASES: dict[str, str] = {
    "status": "status", "estado": "status", "st": "status",
    "demands": "demands", "demandas": "demands",
    "demand": "demand", "demanda": "demand",
    "timeline": "timeline", "history": "timeline", "cronologia": "timeline",
    "cronología": "timeline", "historial": "timeline",
    "next": "next", "siguiente": "next",
    "help": "help", "ayuda": "help", "?": "help",
    "subscribe": "subscribe", "suscribir": "subscribe",
    "unsubscribe": "unsubscribe", "desuscribir": "unsubscribe",
    "post": "post", "publicar": "post",
    "edit": "edit", "editar": "edit",
    "retract": "retract", "retirar": "retract",
    "approve": "approve", "aprobar": "approve",
}  # fmt: skip
COMMAND_NAMES = ("status", "demands", "demand", "timeline", "next", "help", "subscribe",
                 "unsubscribe", "post", "edit", "retract", "approve")  # fmt: skip
_PREFIXES = {"strike", "huelga"}

# Named options of the typed form (`key=value`), alias -> parameter.
_SUBSCRIBE_OPTIONS = {
    "language": "language", "lang": "language", "idioma": "language",
    "urgencies": "urgencies", "urgency": "urgencies", "urgencias": "urgencies",
    "briefing": "briefing_time", "briefing_time": "briefing_time", "resumen": "briefing_time",
    "days": "briefing_days", "briefing_days": "briefing_days", "dias": "briefing_days",
    "días": "briefing_days",
    "tz": "timezone", "timezone": "timezone", "zona": "timezone",
    "quiet": "quiet_hours", "quiet_hours": "quiet_hours", "silencio": "quiet_hours",
}  # fmt: skip
_POST_OPTIONS = {
    "body": "body", "next": "next_step", "next_step": "next_step",
    "when": "next_step_at", "next_step_at": "next_step_at",
    "urgency": "urgency", "at": "publish_at", "publish_at": "publish_at",
    "embargo": "publish_at",
    "headline_es": "headline_es", "body_es": "body_es",
    "next_es": "next_step_es", "next_step_es": "next_step_es",
}  # fmt: skip
_EDIT_OPTIONS = {
    "headline": "headline", "body": "body", "next": "next_step", "next_step": "next_step",
    "when": "next_step_at", "next_step_at": "next_step_at", "status": "status",
    "urgency": "urgency", "reason": "reason", "correction": "correction",
    "lang": "language", "language": "language",
}  # fmt: skip
_RETRACT_OPTIONS = {"reason": "reason"}
_ADMIN_ONLY = {
    "subscribe": "subscribe channels",
    "unsubscribe": "unsubscribe channels",
    "post": "post updates",
    "edit": "edit updates",
    "retract": "retract updates",
    "approve": "approve updates",
}

_EXAMPLES = {
    "post": '/strike post strike_on "…" "…" urgency=urgent',
    "edit": '/strike edit 12 reason="…" body="…"',
    "retract": '/strike retract 12 "…"',
    "approve": "/strike approve 12",
}
_MAX_DEMAND_FIELDS = 20
_STATUS_EXCERPT = 700
_ERROR_TITLES: tuple[tuple[type[StrikebotError], str], ...] = (
    (InvalidInput, "error_title_invalid"),
    (NotFound, "error_title_not_found"),
    (NotAllowed, "error_title_not_allowed"),
    (Conflict, "error_title_conflict"),
)


@dataclass(frozen=True, slots=True)
class CommandContext:
    """Who asks, where. `locale` is the platform's hint (Discord "es-ES"); `timezone` an
    IANA name when the platform knows the asker's (Slack does)."""

    platform: Platform
    actor: Actor
    workspace: str
    channel: str
    locale: str | None = None
    timezone: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """What to answer. `ephemeral`: only the asker sees it. `extra`: further messages to show
    after it (a preview of a posted update)."""

    message: OutboundMessage
    ephemeral: bool = False
    ok: bool = True
    extra: tuple[OutboundMessage, ...] = ()


@dataclass(frozen=True, slots=True)
class _Asker:
    ctx: CommandContext
    language: str
    zone: ZoneInfo
    subscription: Subscription | None
    is_admin: bool


TextsEs = UpdateText | Mapping[str, str] | None


class Commands:
    """The commands, bound to a store, the campaign, the admin use cases and a clock."""

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        admin: Admin,
        clock: Clock = utcnow,
        metrics: Metrics | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.admin = admin
        self.clock = clock
        self.metrics = metrics

    # -- what members ask ------------------------------------------------------

    async def status(self, ctx: CommandContext) -> Reply:
        return await self._run(ctx, "status", self._status)

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

    # -- what admins order -----------------------------------------------------

    async def subscribe(
        self,
        ctx: CommandContext,
        language: str | None = None,
        urgencies: str | Sequence[Urgency | str] | None = None,
        briefing_time: str | time | None = None,
        timezone: str | None = None,
        quiet_hours: str | QuietHours | None = None,
        briefing_days: str | Sequence[int] | None = None,
    ) -> Reply:
        """Subscribe this channel, or change what it receives: only the settings given
        change. `briefing_time` "07:00" turns the morning briefing on, "off" turns it off;
        `quiet_hours` "22:00-06:00" or "off"; `briefing_days` "mon-fri", "daily"..."""
        return await self._run(
            ctx,
            "subscribe",
            lambda a: self._subscribe(
                a,
                language=language,
                urgencies=urgencies,
                briefing_time=briefing_time,
                timezone=timezone,
                quiet_hours=quiet_hours,
                briefing_days=briefing_days,
            ),
        )

    async def unsubscribe(self, ctx: CommandContext) -> Reply:
        return await self._run(ctx, "unsubscribe", self._unsubscribe)

    async def post(
        self,
        ctx: CommandContext,
        status: Status | str,
        headline: str,
        body: str = "",
        next_step: str = "",
        urgency: Urgency | str = "routine",
        publish_at: datetime | str | None = None,
        texts_es: TextsEs = None,
        next_step_at: datetime | str | None = None,
    ) -> Reply:
        """Post an update now (or at `publish_at`). Times without an offset are in the
        asker's time zone. `texts_es` is the Spanish wording (headline, body, next_step)."""
        return await self._run(
            ctx,
            "post",
            lambda a: self._post(
                a, status, headline, body, next_step, urgency, publish_at, texts_es, next_step_at
            ),
        )

    async def edit(
        self,
        ctx: CommandContext,
        update_id: int | str,
        headline: str | None = None,
        body: str | None = None,
        next_step: str | None = None,
        status: Status | str | None = None,
        reason: str = "",
        correction: bool | str = False,
        urgency: Urgency | str | None = None,
        next_step_at: datetime | str | None = None,
        language: str | None = None,
    ) -> Reply:
        """Edit an update in place. Text changes apply to `language` (default: the
        campaign's). `correction` also posts a visible note. `next_step_at` "off" clears it."""
        return await self._run(
            ctx,
            "edit",
            lambda a: self._edit(
                a,
                update_id,
                headline=headline,
                body=body,
                next_step=next_step,
                status=status,
                reason=reason,
                correction=correction,
                urgency=urgency,
                next_step_at=next_step_at,
                language=language,
            ),
        )

    async def retract(self, ctx: CommandContext, update_id: int | str, reason: str) -> Reply:
        return await self._run(ctx, "retract", lambda a: self._retract(a, update_id, reason))

    async def approve(self, ctx: CommandContext, update_id: int | str) -> Reply:
        return await self._run(ctx, "approve", lambda a: self._approve(a, update_id))

    # -- the typed form ----------------------------------------------------------

    async def handle(self, ctx: CommandContext, text: str) -> Reply:
        """Answer a typed command: `status`, `demand pay`, `timeline 3`,
        `post strike_on "Headline" "Body" urgency=urgent`... A leading `/strike` is fine."""
        try:
            tokens = tokenize(text)
        except StrikebotError as exc:
            return await self._run(ctx, "unknown", _raising(exc))
        while tokens and tokens[0].lower().lstrip("/") in _PREFIXES:
            tokens = tokens[1:]
        if not tokens:
            return await self._run(ctx, "help", self._help)
        word = tokens[0].lower().lstrip("/")
        name = _ALIASES.get(word)
        if name is None:
            return await self._run(
                ctx, "unknown", _raising(invalid("unknown_command", name=short(tokens[0])))
            )
        args = tokens[1:]
        return await self._run(ctx, name, lambda a: self._typed(a, name, args))

    async def _typed(self, a: _Asker, name: str, args: list[str]) -> Reply:
        if name in _ADMIN_ONLY:  # a member hears "admins only" before any usage hint
            self.admin.admins.require(a.ctx.actor, _ADMIN_ONLY[name])
        if name in ("status", "demands", "next", "help", "unsubscribe"):
            _no_more(name, args, f"/strike {name}")
            simple: dict[str, Callable[[_Asker], Awaitable[Reply]]] = {
                "status": self._status,
                "demands": self._demands,
                "next": self._next,
                "help": self._help,
                "unsubscribe": self._unsubscribe,
            }
            return await simple[name](a)
        if name == "demand":
            return await self._demand(a, " ".join(args))
        if name == "timeline":
            _no_more(name, args[1:], "/strike timeline 5")
            return await self._timeline(a, args[0] if args else 5)
        if name == "subscribe":
            positional, options = _options(args, _SUBSCRIBE_OPTIONS)
            _no_more(name, positional, "/strike subscribe language=es briefing=07:00")
            return await self._subscribe(a, **options)
        if name == "post":
            return await self._typed_post(a, args)
        if name == "edit":
            positional, options = _options(args, _EDIT_OPTIONS, flags={"correction"})
            if not positional:
                raise invalid("missing_update_id", command="edit", example=_EXAMPLES["edit"])
            _no_more(name, positional[1:], _EXAMPLES["edit"])
            return await self._edit(a, positional[0], **options)
        if name == "retract":
            positional, options = _options(args, _RETRACT_OPTIONS)
            if not positional:
                raise invalid("missing_update_id", command="retract", example=_EXAMPLES["retract"])
            reason = options.get("reason") or " ".join(positional[1:])
            return await self._retract(a, positional[0], reason)
        # approve
        if not args:
            raise invalid("missing_update_id", command="approve", example=_EXAMPLES["approve"])
        _no_more(name, args[1:], _EXAMPLES["approve"])
        return await self._approve(a, args[0])

    async def _typed_post(self, a: _Asker, args: list[str]) -> Reply:
        positional, options = _options(args, _POST_OPTIONS)
        if len(positional) < 2:
            raise invalid("missing_post")
        body = options.pop("body", "")
        if len(positional) >= 3:
            body = positional[2]
        _no_more("post", positional[3:], _EXAMPLES["post"])
        es = {
            key.removesuffix("_es"): options.pop(key)
            for key in ("headline_es", "body_es", "next_step_es")
            if key in options
        }
        return await self._post(
            a,
            positional[0],
            positional[1],
            body,
            options.get("next_step", ""),
            options.get("urgency", "routine"),
            options.get("publish_at"),
            es or None,
            options.get("next_step_at"),
        )

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

    async def recent_updates(self, n: int = 10) -> list[Update]:
        """The newest updates of every state (pending approval and scheduled too): what an
        admin picks from to edit, retract or approve."""
        async with self.store.read() as tx:
            return await tx.list_updates(self.clock(), limit=max(1, min(n, 25)), visible_only=False)

    # -- answering -----------------------------------------------------------------

    async def _run(
        self, ctx: CommandContext, command: str, answer: Callable[[_Asker], Awaitable[Reply]]
    ) -> Reply:
        started = timer.perf_counter()
        language = self._hinted_language(ctx)
        try:
            asker = await self._asker(ctx)
            language = asker.language
            reply = await answer(asker)
        except StrikebotError as exc:
            reply = _error_reply(exc, language)
        except Exception:
            log.exception("command %r failed for %s", command, _who(ctx))
            reply = Reply(
                OutboundMessage(
                    title=say(language, "error_title"),
                    body=say(language, "internal_error"),
                    language=language,
                ),
                ephemeral=True,
                ok=False,
            )
        if self.metrics is not None:
            self.metrics.command_latency.labels(str(ctx.platform), command).observe(
                timer.perf_counter() - started
            )
        return replace(
            reply, message=_inert(reply.message), extra=tuple(_inert(m) for m in reply.extra)
        )

    def _hinted_language(self, ctx: CommandContext) -> str:
        if ctx.locale:
            code = str(ctx.locale).replace("_", "-").split("-")[0].lower()
            if code in i18n.LANGUAGES:
                return code
        return i18n.pick(self.campaign.default_language)

    async def _asker(self, ctx: CommandContext) -> _Asker:
        async with self.store.read() as tx:
            sub = await tx.find_subscription(Platform(ctx.platform), ctx.workspace, ctx.channel)
        language = self._hinted_language(ctx)
        if not _supported_locale(ctx.locale) and sub is not None:
            language = i18n.pick(sub.language)
        zone_name = valid_timezone(ctx.timezone) or (sub.timezone if sub else None)
        return _Asker(
            ctx=ctx,
            language=language,
            zone=local_zone(zone_name, self.campaign),
            subscription=sub,
            is_admin=self.admin.admins.allows(ctx.actor),
        )

    async def _status(self, a: _Asker) -> Reply:
        lang, now = a.language, self.clock()
        async with self.store.read() as tx:
            latest = await tx.latest_update(now)
        if latest is None:
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
        day = self._day_line(latest.status, now, a.zone, lang)
        if day:
            lines.append(day)
        excerpt = card.title
        if card.body:
            excerpt += "\n" + card.body
        lines.append(fit(excerpt, _STATUS_EXCERPT, card.url, lang))
        return Reply(
            replace(
                card,
                kind=MessageKind.REPLY,
                urgency=None,
                title=say(lang, "status_title", label=card.status_label),
                body="\n\n".join(lines),
                links=(
                    Link(
                        say(lang, "read_update", id=latest.id),
                        update_url(latest, self.campaign, lang),
                    ),
                    Link(say(lang, "status_page"), self._page(lang)),
                ),
            )
        )

    def _day_line(self, status: Status, now: datetime, zone: ZoneInfo, lang: str) -> str | None:
        start = self.campaign.strike_start
        if start is None:
            return None
        today = now.astimezone(zone).date()
        if status.on_strike and today >= start:
            return say(lang, "day_of_strike", day=i18n.day_of_strike(start, today))
        if today < start and status in (Status.BARGAINING, Status.STRIKE_VOTE):
            return say(lang, "strike_begins", date=i18n.format_date(start, lang))
        return None

    async def _demands(self, a: _Asker) -> Reply:
        lang = a.language
        async with self.store.read() as tx:
            demands = await tx.list_demands(with_history=False)
        intro = say(
            lang, "demands_intro", union=self.campaign.union, employer=self.campaign.employer
        )
        if not demands:
            intro = say(lang, "no_demands")
        fields = [
            Field(demand.text(lang).title, self._demand_summary(demand, lang))
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

    def _demand_summary(self, demand: Demand, lang: str) -> str:
        text = demand.text(lang)
        ask = text.union_position or text.summary or say(lang, "nothing_there")
        offer = text.employer_offer or say(lang, "no_offer")
        return "\n".join(
            (
                say(
                    lang,
                    "demand_line",
                    status=i18n.demand_status_label(demand.status, lang),
                    key=demand.key,
                ),
                f"{say(lang, 'we_ask')}: {ask}",
                f"{say(lang, 'they_offer', employer=self.campaign.employer)}: {offer}",
            )
        )

    async def _demand(self, a: _Asker, key: object) -> Reply:
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
        text = demand.text(lang)
        fields = [
            Field(say(lang, "we_ask"), text.union_position or say(lang, "nothing_there")),
            Field(
                say(lang, "they_offer", employer=self.campaign.employer),
                text.employer_offer or say(lang, "no_offer"),
            ),
            Field(say(lang, "demand_status"), i18n.demand_status_label(demand.status, lang), True),
        ]
        facts = demand.texts.get(lang, text).facts or text.facts
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
            day = i18n.format_date(event.at.astimezone(zone).date(), lang)
            status = i18n.demand_status_label(event.status, lang)
            offer = event.offer.get(lang) or next(iter(event.offer.values()), "")
            if offer:
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

    async def _timeline(self, a: _Asker, n: object) -> Reply:
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
            text = update.text(lang)
            name = say(
                lang,
                "timeline_entry",
                id=update.id,
                when=i18n.format_datetime(update.effective_at.astimezone(a.zone), lang),
                status=i18n.status_label(update.status, lang),
            )
            if update.retracted:
                value = say(
                    lang,
                    "timeline_retracted",
                    headline=text.headline,
                    reason=update.retraction_reason or "—",
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

    async def _next(self, a: _Asker) -> Reply:
        lang, now = a.language, self.clock()
        async with self.store.read() as tx:
            latest = await tx.latest_update(now)
        text = latest.text(lang) if latest else None
        if latest is None or text is None or not (text.next_step.strip() or latest.next_step_at):
            return Reply(
                OutboundMessage(
                    title=say(lang, "next_title"), body=say(lang, "next_none"), language=lang
                )
            )
        fields = []
        if latest.next_step_at is not None:
            when = i18n.format_datetime(latest.next_step_at.astimezone(a.zone), lang)
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

    async def _help(self, a: _Asker) -> Reply:
        lang = a.language
        keys = ("help_status", "help_demands", "help_demand", "help_timeline", "help_next",
                "help_help")  # fmt: skip
        body = "\n".join(say(lang, key) for key in keys)
        fields: tuple[Field, ...] = ()
        if a.is_admin:
            admin_keys = ("help_post", "help_edit", "help_retract", "help_approve",
                          "help_subscribe", "help_unsubscribe")  # fmt: skip
            lines = [say(lang, key) for key in admin_keys]
            lines.append(say(lang, "help_statuses", statuses=", ".join(s.value for s in Status)))
            fields = (Field(say(lang, "help_admin_title"), "\n".join(lines)),)
        else:
            body += "\n\n" + say(lang, "help_not_admin")
        return Reply(
            OutboundMessage(title=say(lang, "help_title"), body=body, language=lang, fields=fields),
            ephemeral=True,
        )

    async def _subscribe(
        self,
        a: _Asker,
        *,
        language: object = None,
        urgencies: object = None,
        briefing_time: object = None,
        timezone: object = None,
        quiet_hours: object = None,
        briefing_days: object = None,
    ) -> Reply:
        ctx = a.ctx
        self.admin.admins.require(ctx.actor, "subscribe channels")
        base = a.subscription or Subscription(
            id=0,
            platform=Platform(ctx.platform),
            workspace=ctx.workspace,
            channel=ctx.channel,
            language=self.campaign.default_language,
            timezone=valid_timezone(ctx.timezone) or self.campaign.timezone,
        )
        changes: dict[str, Any] = {}
        if language is not None:
            changes["language"] = parse_language(language, self.campaign.languages)
        if urgencies is not None:
            changes["urgencies"] = parse_urgencies(urgencies)
        if briefing_time is not None:
            changes["briefing_time"] = parse_optional_hhmm(briefing_time)
        if timezone is not None:
            changes["timezone"] = parse_timezone(timezone)
        if quiet_hours is not None:
            changes["quiet_hours"] = parse_quiet_hours(quiet_hours)
        if briefing_days is not None:
            changes["briefing_days"] = parse_days(briefing_days)
        saved = await self.admin.subscribe(ctx.actor, replace(base, **changes))
        return Reply(self._subscription_card(saved, a.language))

    def _subscription_card(self, sub: Subscription, lang: str) -> OutboundMessage:
        language_names = {"en": ("English", "inglés"), "es": ("Spanish", "español")}
        names = language_names.get(sub.language, (sub.language, sub.language))
        urgencies = ", ".join(
            i18n.urgency_label(u, lang) for u in Urgency if u in sub.urgencies
        )  # Urgency iterates in order: routine, important, urgent
        if sub.briefing_time is None:
            briefing = say(lang, "briefing_off")
        else:
            briefing = say(
                lang,
                "briefing_at",
                time=sub.briefing_time.strftime("%H:%M"),
                days=_days_text(sub.briefing_days, lang),
            )
        if sub.quiet_hours is None:
            quiet = say(lang, "quiet_off")
        else:
            quiet = say(
                lang,
                "quiet_range",
                start=sub.quiet_hours.start.strftime("%H:%M"),
                end=sub.quiet_hours.end.strftime("%H:%M"),
            )
        return OutboundMessage(
            title=say(lang, "subscribed_title"),
            body=say(lang, "subscribed_body"),
            language=lang,
            fields=(
                Field(say(lang, "setting_language"), names[1] if lang == "es" else names[0], True),
                Field(say(lang, "setting_urgencies"), urgencies, True),
                Field(say(lang, "setting_timezone"), sub.timezone, True),
                Field(say(lang, "setting_briefing"), briefing),
                Field(say(lang, "setting_quiet"), quiet),
            ),
        )

    async def _unsubscribe(self, a: _Asker) -> Reply:
        self.admin.admins.require(a.ctx.actor, "unsubscribe channels")
        if a.subscription is None:
            raise not_found("not_subscribed")
        await self.admin.unsubscribe(a.ctx.actor, a.subscription.id)
        lang = a.language
        return Reply(
            OutboundMessage(
                title=say(lang, "unsubscribed_title"),
                body=say(lang, "unsubscribed_body"),
                language=lang,
            )
        )

    async def _post(
        self,
        a: _Asker,
        status: object,
        headline: object,
        body: object,
        next_step: object,
        urgency: object,
        publish_at: object,
        texts_es: object,
        next_step_at: object,
    ) -> Reply:
        actor, lang = a.ctx.actor, a.language
        self.admin.admins.require(actor, "post updates")
        draft_status = parse_status(status)
        draft_urgency = parse_urgency(urgency or "routine")
        texts = {self.campaign.default_language: _update_text(headline, body, next_step)}
        if texts_es is not None and "es" in self.campaign.languages:
            texts.setdefault("es", _update_text_es(texts_es))
        now = self.clock()
        embargo = None
        if publish_at is not None and str(publish_at).strip():
            embargo = parse_when(publish_at, a.zone)
            if embargo <= now:
                raise invalid("past_datetime", when=_plain_time(embargo, a.zone))
        next_at = None
        if next_step_at is not None and not is_off(next_step_at):
            next_at = parse_when(next_step_at, a.zone)
        update = await self.admin.post(
            actor, Draft(draft_status, texts, draft_urgency, next_at), publish_at=embargo
        )
        queued = await self._queued(update.id)
        if update.state is UpdateState.PENDING_APPROVAL:
            title, text = "pending_title", say(lang, "pending_body", id=update.id)
        elif update.state is UpdateState.SCHEDULED:
            when = i18n.format_datetime((update.publish_at or now).astimezone(a.zone), lang)
            title, text = "scheduled_title", say(lang, "scheduled_body", when=when)
        else:
            title, text = "posted_title", say(lang, "posted_body", count=queued)
        return self._done(a, title, text, update)

    async def _edit(
        self,
        a: _Asker,
        update_id: object,
        *,
        headline: object = None,
        body: object = None,
        next_step: object = None,
        status: object = None,
        reason: object = "",
        correction: object = False,
        urgency: object = None,
        next_step_at: object = None,
        language: object = None,
    ) -> Reply:
        actor = a.ctx.actor
        self.admin.admins.require(actor, "edit updates")
        uid = parse_update_id(update_id)
        if all(v is None for v in (headline, body, next_step, status, urgency, next_step_at)):
            raise invalid("nothing_to_edit", example=_EXAMPLES["edit"])
        why = _reason(reason, _EXAMPLES["edit"])
        is_correction = parse_flag(correction if correction is not None else False)
        text_lang = self.campaign.default_language
        if language is not None and str(language).strip():
            text_lang = parse_language(language, self.campaign.languages)
        async with self.store.read() as tx:
            before = await tx.get_update(uid, self.clock())
        if before is None:
            raise not_found("no_update", id=uid)
        texts = None
        if headline is not None or body is not None or next_step is not None:
            base = before.texts.get(text_lang) or before.text(text_lang)
            texts = {
                text_lang: _update_text(
                    base.headline if headline is None else headline,
                    base.body if body is None else body,
                    base.next_step if next_step is None else next_step,
                )
            }
        changes = Changes(
            texts=texts,
            status=None if status is None else parse_status(status),
            urgency=None if urgency is None else parse_urgency(urgency),
            next_step_at=None
            if next_step_at is None or is_off(next_step_at)
            else parse_when(next_step_at, a.zone),
            clear_next_step_at=next_step_at is not None and is_off(next_step_at),
        )
        after = await self.admin.edit(actor, uid, changes, reason=why, correction=is_correction)
        async with self.store.read() as tx:
            holders = len(await tx.posted_subscriptions(uid))
        key = "corrected_body" if is_correction else "edited_body"
        return self._done(a, "edited_title", say(a.language, key, count=holders), after)

    async def _retract(self, a: _Asker, update_id: object, reason: object) -> Reply:
        actor = a.ctx.actor
        self.admin.admins.require(actor, "retract updates")
        uid = parse_update_id(update_id)
        why = _reason(reason, _EXAMPLES["retract"])
        after = await self.admin.retract(actor, uid, reason=why)
        async with self.store.read() as tx:
            holders = len(await tx.posted_subscriptions(uid))
        return self._done(
            a, "retracted_title", say(a.language, "retracted_body", count=holders), after
        )

    async def _approve(self, a: _Asker, update_id: object) -> Reply:
        actor = a.ctx.actor
        self.admin.admins.require(actor, "approve updates")
        uid = parse_update_id(update_id)
        after = await self.admin.approve(actor, uid)
        if after.state is UpdateState.SCHEDULED and after.published_at is not None:
            when = i18n.format_datetime(after.published_at.astimezone(a.zone), a.language)
            text = say(a.language, "approved_scheduled_body", when=when)
        else:
            text = say(a.language, "approved_body", count=await self._queued(uid))
        return self._done(a, "approved_title", text, after)

    # -- helpers -------------------------------------------------------------------

    def _done(self, a: _Asker, title_key: str, text: str, update: Update) -> Reply:
        """An admin's confirmation, with the update as members will see it."""
        preview = update_message(update, a.language, self.campaign, timezone=a.zone.key)
        return Reply(
            OutboundMessage(
                title=say(a.language, title_key, id=update.id),
                body=text,
                language=a.language,
                url=preview.url,
                links=preview.links,
            ),
            ephemeral=True,
            extra=(preview,),
        )

    async def _queued(self, update_id: int) -> int:
        async with self.store.read() as tx:
            counts = await tx.delivery_counts(update_id)
        return sum(n for (_platform, state), n in counts.items() if state in ("pending", "sent"))

    def _page(self, lang: str) -> str:
        return f"{self.campaign.public_url}/{'es/' if lang == 'es' else ''}"


# ----------------------------------------------------------------------------- functions


def _raising(exc: StrikebotError) -> Callable[[_Asker], Awaitable[Reply]]:
    async def answer(_asker: _Asker) -> Reply:
        raise exc

    return answer


def _error_reply(exc: StrikebotError, language: str) -> Reply:
    title_key = next((key for cls, key in _ERROR_TITLES if isinstance(exc, cls)), "error_title")
    return Reply(
        OutboundMessage(
            title=say(language, title_key), body=exc.localized(language), language=language
        ),
        ephemeral=True,
        ok=False,
    )


def _inert(message: OutboundMessage) -> OutboundMessage:
    """No reply pings anyone, whatever text it quotes back."""
    return replace(
        message,
        title=neutralize_mentions(message.title),
        body=neutralize_mentions(message.body),
        fields=tuple(
            Field(neutralize_mentions(f.name), neutralize_mentions(f.value), f.inline)
            for f in message.fields
        ),
        footer=neutralize_mentions(message.footer),
    )


def _who(ctx: CommandContext) -> str:
    return f"{ctx.actor.id} in {ctx.platform}:{ctx.workspace}/{ctx.channel}"


def _supported_locale(locale: str | None) -> bool:
    if not locale:
        return False
    return str(locale).replace("_", "-").split("-")[0].lower() in i18n.LANGUAGES


def _options(
    args: Sequence[str], known: Mapping[str, str], *, flags: frozenset[str] | set[str] = frozenset()
) -> tuple[list[str], dict[str, Any]]:
    """Split typed arguments into positional ones and `key=value` options. A token whose
    key is not an option of this command stays positional (a headline may contain '=')."""
    positional: list[str] = []
    options: dict[str, Any] = {}
    for token in args:
        key, sep, value = token.partition("=")
        name = known.get(key.strip().lower().lstrip("-"))
        if sep and name is not None:
            options[name] = value
        elif not sep and token.lower().lstrip("-") in flags:
            options[known[token.lower().lstrip("-")]] = True
        else:
            positional.append(token)
    return positional, options


def _no_more(command: str, extra: Sequence[str], example: str) -> None:
    if extra:
        raise invalid("too_many_args", command=command, example=example)


def _match_demand(wanted: str, demands: Sequence[Demand]) -> str | None:
    """The one demand whose key starts with, or whose title (any language) is, `wanted`."""
    wanted_key = wanted.replace(" ", "_")
    matches = [
        d.key
        for d in demands
        if d.key.startswith(wanted_key)
        or d.key.replace("_", " ") == wanted
        or any(text.title.lower() == wanted for text in d.texts.values())
    ]
    return matches[0] if len(matches) == 1 else None


def _update_text(headline: object, body: object, next_step: object) -> UpdateText:
    """Typed update text, checked here so the person reads the problem in their language."""
    head = clean_text(headline if headline is not None else "")
    text = clean_text(body if body is not None else "")
    step = clean_text(next_step if next_step is not None else "")
    if not head:
        raise invalid("empty_headline")
    if len(head) > HEADLINE_MAX:
        raise invalid("long_headline", length=len(head), max=HEADLINE_MAX)
    if len(text) > BODY_MAX:
        raise invalid("long_body", length=len(text), max=BODY_MAX)
    if len(step) > NEXT_STEP_MAX:
        raise invalid("long_next_step", length=len(step), max=NEXT_STEP_MAX)
    return UpdateText(head, text, step)


def _update_text_es(value: object) -> UpdateText:
    if isinstance(value, UpdateText):
        return _update_text(value.headline, value.body, value.next_step)
    if isinstance(value, Mapping):
        if not clean_text(value.get("headline") or ""):
            raise invalid("missing_es_headline")
        return _update_text(
            value.get("headline"), value.get("body", ""), value.get("next_step", "")
        )
    raise invalid("missing_es_headline")


def _reason(value: object, example: str) -> str:
    reason = clean_text(value if value is not None else "")
    if not reason:
        raise invalid("no_reason", example=example)
    if len(reason) > REASON_MAX:
        raise invalid("long_reason", length=len(reason), max=REASON_MAX)
    return reason


def _plain_time(moment: datetime, zone: ZoneInfo) -> str:
    """A time both languages read the same way: 2019-01-18 10:00 PST."""
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def _days_text(days: frozenset[int], lang: str) -> str:
    if days == frozenset(range(7)):
        return say(lang, "every_day")
    if days == frozenset(range(5)):
        return say(lang, "weekdays")
    names = say(lang, "day_names").split(",")
    return ", ".join(names[d] for d in sorted(days))


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
