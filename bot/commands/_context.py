"""Who asks and how every command is answered.

`CommandContext` and `Reply` are the types adapters see. `CommandsBase._run` is the one path
every command takes: it works out the asker's language (the context's locale when the bot
speaks it, else the channel's subscription language, else the campaign's) and time zone (the
context's, else the channel's, else the campaign's), turns a person's mistake into a reply
saying what to do, logs anything else, records the latency metric, and makes sure no reply
pings anyone.
"""

from __future__ import annotations

import logging
import time as timer
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import time
from zoneinfo import ZoneInfo

from bot import i18n
from bot.audiences.picker import PlacePicker
from bot.clock import Clock, utcnow
from bot.editorial.admin import Admin
from bot.editorial.desk import Desk
from bot.editorial.parsing import valid_timezone
from bot.errors import Conflict, InvalidInput, NotAllowed, NotFound, StrikebotError
from bot.i18n.sentences import say
from bot.messages.compose import local_zone, neutralize_mentions
from bot.metrics import Metrics
from bot.models import Actor, Campaign, Platform, Subscription
from bot.plugins import Plugins, Section, installed_plugins
from bot.plugins.outbound import Field, OutboundMessage, Pacing
from bot.store import Store

# The package's one logger, named for the public module that operators (and tests) filter on.
log = logging.getLogger("bot.commands")

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
class Asker:
    ctx: CommandContext
    language: str
    zone: ZoneInfo
    subscription: Subscription | None
    is_admin: bool


class CommandsBase:
    """The store, campaign, admin use cases, clock and metrics every command part shares."""

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        admin: Admin,
        clock: Clock = utcnow,
        metrics: Metrics | None = None,
        *,
        default_briefing_time: time = time(7, 0),
        cost_sections: Mapping[str, Section | None] | None = None,
        plugins: Plugins | None = None,
        paces: Mapping[str, Pacing] | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.admin = admin
        self.clock = clock
        self.metrics = metrics
        # `briefing=on` means this time ([briefings] default_time in the campaign file).
        self.default_briefing_time = default_briefing_time
        # What the preview of a post measures texts with (`bot.editorial.reach.cost_sections`).
        self.cost_sections = dict(cost_sections or {})
        # The sites and groups a picker finds as someone types (`bot.audiences.picker`).
        self.picker = PlacePicker(store)
        # The editorial desk every admin surface goes through (`bot.editorial.desk`).
        self.desk = Desk(
            store,
            admin,
            plugins=installed_plugins() if plugins is None else plugins,
            cost_sections=self.cost_sections,
            clock=clock,
            paces=paces,
        )

    async def _run(
        self, ctx: CommandContext, command: str, answer: Callable[[Asker], Awaitable[Reply]]
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

    async def language_of(self, ctx: CommandContext) -> str:
        """The language a command from `ctx` is answered in (the asker's, then the
        channel's, then the campaign's), for a surface's own words around the answer."""
        return (await self._asker(ctx)).language

    def _hinted_language(self, ctx: CommandContext) -> str:
        return i18n.supported(ctx.locale) or i18n.pick(self.campaign.default_language)

    async def _asker(self, ctx: CommandContext) -> Asker:
        async with self.store.read() as tx:
            sub = await tx.find_subscription(ctx.platform, ctx.workspace, ctx.channel)
        language = self._hinted_language(ctx)
        if not _supported_locale(ctx.locale) and sub is not None:
            language = i18n.pick(sub.language)
        zone_name = valid_timezone(ctx.timezone) or (sub.timezone if sub else None)
        return Asker(
            ctx=ctx,
            language=language,
            zone=local_zone(zone_name, self.campaign),
            subscription=sub,
            is_admin=self.admin.admins.allows(ctx.actor),
        )


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
    return i18n.supported(locale) is not None
