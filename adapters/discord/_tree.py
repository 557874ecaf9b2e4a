"""The `/strike` command group: names, options, pickers, and their descriptions.

Each subcommand only reads its options and hands over to `Handlers`. Command and option
names stay in the source language (Discord sends the canonical name whatever the member's
language); descriptions and choice names are translated into every Discord locale the bot
has a catalogue for by `CatalogueDescriptions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str
from discord.app_commands.translator import TranslationContextLocation, TranslationContextTypes

from adapters.discord._interactions import Handlers
from adapters.discord._posting import EditRequest
from bot.ports import Status, UpdateState, Urgency, i18n

Interaction = discord.Interaction[Any]
UpdateId = app_commands.Range[int, 1, 2**31 - 1]
Count = app_commands.Range[int, 1, 25]

# Discord allows 100 characters per option description.
CHANGE_HELP = (
    'Admins: offer="…" source="…" date=…, or title="…" reason="…" lang=es; announce tells all'
)


class CatalogueDescriptions(app_commands.Translator):
    """Descriptions and choice names in each member's language, from the catalogue (table
    `discord.describe`, whose source sentences are the ones written below); names stay
    canonical."""

    async def translate(
        self, string: locale_str, locale: discord.Locale, context: TranslationContextTypes
    ) -> str | None:
        language = i18n.pick(str(locale.value))
        if language == i18n.source_language():
            return None
        if context.location in (
            TranslationContextLocation.command_name,
            TranslationContextLocation.group_name,
            TranslationContextLocation.parameter_name,
        ):
            return None
        source = i18n.source_language()
        if context.location is TranslationContextLocation.choice_name:
            for status in Status:
                if string.message == i18n.status_label(status, source):
                    return i18n.status_label(status, language)
            for urgency in Urgency:
                if string.message == i18n.urgency_label(urgency, source):
                    return i18n.urgency_label(urgency, language)
            for code in i18n.languages():
                if string.message == i18n.language_name(code, source):
                    return i18n.language_name(code, language)
        return i18n.translate_source(language, "discord.describe", string.message)


def _status_choices() -> list[Choice[str]]:
    return [
        Choice(name=i18n.status_label(s, i18n.source_language()), value=s.value) for s in Status
    ]


def _urgency_choices() -> list[Choice[str]]:
    return [
        Choice(name=i18n.urgency_label(u, i18n.source_language()), value=u.value) for u in Urgency
    ]


PUBLISHED = frozenset({UpdateState.PUBLISHED})
EDITABLE = frozenset({UpdateState.PUBLISHED, UpdateState.SCHEDULED, UpdateState.PENDING_APPROVAL})
PENDING = frozenset({UpdateState.PENDING_APPROVAL})
PLACES, SITES, GROUPS = frozenset({"site", "group"}), frozenset({"site"}), frozenset({"group"})


def build_group(h: Handlers, languages: Sequence[str]) -> app_commands.Group:
    """`/strike ...`, bound to `h`."""
    group = app_commands.Group(
        name="strike",
        description="Strike updates: where things stand, the demands, what happens next",
        guild_only=True,
    )
    language_choices = [
        Choice(name=i18n.language_name(x, i18n.source_language()), value=x) for x in languages
    ]

    # -- everyone ----------------------------------------------------------------

    @group.command(name="status", description="Where the strike stands now")
    @app_commands.describe(site="A school, a site or a group: its latest word")
    async def status(interaction: Interaction, site: str | None = None) -> None:
        await h.answer(interaction, lambda ctx: h.commands.status(ctx, site))

    @status.autocomplete("site")
    async def status_site(interaction: Interaction, current: str) -> list[Choice[str]]:
        return await h.place_choices(interaction, current, PLACES, several=False)

    @group.command(
        name="demands", description="What we are asking for, and what the employer offers"
    )
    async def demands(interaction: Interaction) -> None:
        await h.answer(interaction, h.commands.demands)

    @group.command(name="demand", description="One demand in detail, with its offer history")
    @app_commands.describe(key="Which demand", change=CHANGE_HELP)
    @app_commands.autocomplete(key=h.demand_choices)
    async def demand(interaction: Interaction, key: str, change: str | None = None) -> None:
        if change is None or not change.strip():
            await h.answer(interaction, lambda ctx: h.commands.demand(ctx, key))
            return
        # Admins keep the demand current, in the typed form every platform shares.
        await h.answer_admin(
            interaction,
            "change demands",
            lambda ctx: h.commands.handle(ctx, f"demand {key} {change}"),
        )

    @group.command(name="timeline", description="The latest updates")
    @app_commands.describe(count="How many (1-25)")
    async def timeline(interaction: Interaction, count: Count = 5) -> None:
        await h.answer(interaction, lambda ctx: h.commands.timeline(ctx, count))

    @group.command(name="next", description="What happens next, and when")
    async def next_step(interaction: Interaction) -> None:
        await h.answer(interaction, h.commands.next_step)

    @group.command(name="help", description="How to use the strike bot")
    async def help_(interaction: Interaction) -> None:
        await h.answer(interaction, h.commands.help)

    # -- admins --------------------------------------------------------------------

    @group.command(
        name="subscribe",
        description="Admins: send strike updates to this channel, or change its settings",
    )
    @app_commands.describe(
        language="Language of the updates",
        urgencies="Which updates to send",
        briefing_time="Morning briefing time, HH:MM (or off)",
        briefing_days="Briefing days, e.g. mon-fri or daily",
        timezone="Time zone, e.g. America/Los_Angeles",
        quiet_hours="Quiet hours for routine updates, e.g. 22:00-07:00 (or off)",
        sites="Only these sites' news (codes, comma-separated; all: everything)",
        groups="Only these groups' news, their sites' too (codes, comma-separated)",
    )
    @app_commands.choices(
        language=language_choices,
        urgencies=[
            Choice(name="Every update", value="routine,important,urgent"),
            Choice(name="Important and urgent only", value="important,urgent"),
            Choice(name="Urgent only", value="urgent"),
        ],
    )
    @app_commands.autocomplete(timezone=h.timezone_choices)
    async def subscribe(
        interaction: Interaction,
        language: str | None = None,
        urgencies: str | None = None,
        briefing_time: str | None = None,
        briefing_days: str | None = None,
        timezone: str | None = None,
        quiet_hours: str | None = None,
        sites: str | None = None,
        groups: str | None = None,
    ) -> None:
        await h.answer_admin(
            interaction,
            "subscribe channels",
            lambda ctx: h.commands.subscribe(
                ctx,
                language=language,
                urgencies=urgencies,
                briefing_time=briefing_time,
                timezone=timezone,
                quiet_hours=quiet_hours,
                briefing_days=briefing_days,
                sites=sites,
                groups=groups,
            ),
            ephemeral=False,
        )

    @subscribe.autocomplete("sites")
    async def subscribe_sites(interaction: Interaction, current: str) -> list[Choice[str]]:
        return await h.place_choices(interaction, current, SITES)

    @subscribe.autocomplete("groups")
    async def subscribe_groups(interaction: Interaction, current: str) -> list[Choice[str]]:
        return await h.place_choices(interaction, current, GROUPS)

    @group.command(name="unsubscribe", description="Admins: stop sending updates to this channel")
    async def unsubscribe(interaction: Interaction) -> None:
        await h.answer_admin(
            interaction, "unsubscribe channels", h.commands.unsubscribe, ephemeral=False
        )

    @group.command(name="post", description="Admins: write an update (opens a form with a preview)")
    @app_commands.describe(
        status="Where the strike stands with this update",
        publish_at="Publish later (embargo), e.g. 2019-01-22 06:00",
        next_step_at="When the next step happens, e.g. 2019-01-22 06:00",
        language="Which language you write in (others can be added from the preview)",
        only_for="Only for these sites or groups (codes, comma-separated; empty: everyone)",
    )
    @app_commands.choices(status=_status_choices(), language=language_choices)
    async def post(
        interaction: Interaction,
        status: str,
        publish_at: str | None = None,
        next_step_at: str | None = None,
        language: str | None = None,
        only_for: str | None = None,
    ) -> None:
        await h.open_post(interaction, status, publish_at, next_step_at, language, only_for)

    @post.autocomplete("only_for")
    async def post_audience(interaction: Interaction, current: str) -> list[Choice[str]]:
        return await h.place_choices(interaction, current, PLACES)

    @group.command(name="edit", description="Admins: change an update everywhere it was sent")
    @app_commands.describe(
        update="Which update",
        reason="Why (members may see it)",
        headline="New headline (leave all text empty to edit in a form)",
        body="New details",
        next_step="New next step",
        status="New status",
        urgency="New urgency",
        correction="Also post a visible Correction note",
        language="Which language's text to change",
    )
    @app_commands.choices(
        status=_status_choices(), urgency=_urgency_choices(), language=language_choices
    )
    async def edit(
        interaction: Interaction,
        update: UpdateId,
        reason: str,
        headline: str | None = None,
        body: str | None = None,
        next_step: str | None = None,
        status: str | None = None,
        urgency: str | None = None,
        correction: bool = False,
        language: str | None = None,
    ) -> None:
        request = EditRequest(update, reason, correction, language, "", "", "")
        await h.edit(
            interaction,
            request,
            headline=headline,
            body=body,
            next_step=next_step,
            status=status,
            urgency=urgency,
        )

    @edit.autocomplete("update")
    async def edit_update(interaction: Interaction, current: str) -> list[Choice[int]]:
        return await h.update_choices(interaction, current, EDITABLE)

    @group.command(name="retract", description="Admins: withdraw an update everywhere it was sent")
    @app_commands.describe(
        update="Which update", reason="Why it is withdrawn (members will see it)"
    )
    async def retract(interaction: Interaction, update: UpdateId, reason: str) -> None:
        await h.answer_admin(
            interaction,
            "retract updates",
            lambda ctx: h.commands.retract(ctx, update, reason),
        )

    @retract.autocomplete("update")
    async def retract_update(interaction: Interaction, current: str) -> list[Choice[int]]:
        return await h.update_choices(interaction, current, EDITABLE)

    @group.command(name="approve", description="Admins: approve an update another admin wrote")
    @app_commands.describe(update="Which update")
    async def approve(interaction: Interaction, update: UpdateId) -> None:
        await h.answer_admin(
            interaction, "approve updates", lambda ctx: h.commands.approve(ctx, update)
        )

    @approve.autocomplete("update")
    async def approve_update(interaction: Interaction, current: str) -> list[Choice[int]]:
        return await h.update_choices(interaction, current, PENDING)

    return group
