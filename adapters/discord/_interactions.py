"""Slash commands, modals and buttons → `bot.commands` → embeds. A translation table.

Who: an `Actor` with the member's user id, role ids and Discord's Manage Server permission.
Where: the guild and channel ids. Language: the member's Discord locale when the bot speaks
it (es-ES, es-419 → Spanish), else the channel's subscription language, else the campaign's.

Once: Discord gives an interaction to every session identified for its shard, a replayed or
retried request may bring it again, and several instances may be running. Before anything
is done, the interaction's id is claimed in the store (`tx.first_time_seen`); only the
instance whose claim is first handles it (`Handlers.claim`). A preview's draft and an open
modal's context live in the store (`adapters.discord._posting.Drafts`), so the click or
submission that continues them may land on any instance.

Discord wants an answer within 3 seconds. Admin writes defer first (they queue a delivery
per subscribed channel); questions answer directly unless the answer is not ready within
`defer_after` seconds, in which case they defer and edit the answer in. Replies that are
personal (errors, admin confirmations, help) are ephemeral.
"""

from __future__ import annotations

import asyncio
import logging
import zoneinfo
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from functools import cache
from typing import Any

import discord
from discord import app_commands

from adapters.discord._posting import (
    MODAL_FORM,
    MODAL_ID,
    EditModal,
    EditRequest,
    PostModal,
    modal_from_state,
    modal_state,
    preview_buttons,
    word,
)
from adapters.discord._render import ERROR_COLOUR, render_embeds, text_embed
from adapters.discord._settings import NAME
from bot.ports import (
    Action,
    Actor,
    CommandContext,
    NotAllowed,
    OutboundMessage,
    PluginContext,
    Proposal,
    Reply,
    StrikebotError,
    UpdateState,
    UpdateText,
    i18n,
    local_zone,
    not_found,
    say,
    stale_note,
)

log = logging.getLogger("strikebot.discord")

Interaction = discord.Interaction[Any]
Call = Callable[[CommandContext], Awaitable[Reply]]
NO_MENTIONS = discord.AllowedMentions.none()
CHOICES_MAX = 25
CHOICE_NAME_MAX = 100
CHOICE_VALUE_MAX = 100  # characters of a string choice's value


def actor_of(interaction: Interaction) -> Actor:
    """The member as the core sees them. Role ids come from the interaction payload itself,
    so they are right even before the guild is cached."""
    user = interaction.user
    roles: set[str] = set()
    if isinstance(user, discord.Member):
        # Member._roles holds the payload's role ids; .roles only those already cached.
        roles.update(str(role_id) for role_id in getattr(user, "_roles", ()))
        roles.update(str(role.id) for role in user.roles if not role.is_default())
    perms = interaction.permissions
    return Actor(
        platform=NAME,
        user_id=str(user.id),
        display_name=user.display_name,
        roles=frozenset(roles),
        platform_admin=bool(perms.administrator or perms.manage_guild),
    )


def locale_of(interaction: Interaction) -> str:
    return str(interaction.locale.value)


class Handlers:
    """What each slash command, modal and button does. Shared by every client object."""

    def __init__(self, ctx: PluginContext, *, defer_after: float = 1.5) -> None:
        self.ctx = ctx
        self.commands = ctx.commands
        self.defer_after = defer_after

    # ------------------------------------------------------------------ once

    async def claim(self, data: dict[str, Any]) -> bool:
        """True for the one instance (and the one time) that handles interaction `data`."""
        interaction_id = str(data.get("id") or "")
        if not interaction_id:
            return False
        try:
            return await self.ctx.first_time(f"interaction:{interaction_id[:100]}")
        except Exception:
            # Without the store nothing can be answered properly anyway; answering (and
            # perhaps being told "already acknowledged") beats silence.
            log.exception("could not claim Discord interaction %s; handling it", interaction_id)
            return True

    async def restore_modal(self, state: Any, data: dict[str, Any]) -> None:
        """A modal submission whose modal this client object does not hold (opened on
        another instance, or before a takeover): rebuild it from the store."""
        if data.get("type") != 5:
            return
        custom_id = str((data.get("data") or {}).get("custom_id") or "")
        match = MODAL_ID.fullmatch(custom_id)
        store = getattr(state, "_view_store", None)
        if match is None or store is None or custom_id in store._modals:
            return
        saved = await self.ctx.desk.form(MODAL_FORM, match["token"], take=True)
        modal = None if saved is None else modal_from_state(self, match["token"], saved)
        if modal is not None:
            state.store_view(modal)

    async def open_modal(self, interaction: Interaction, modal: PostModal | EditModal) -> None:
        await self.ctx.desk.keep_form(MODAL_FORM, modal.token, modal_state(modal))
        await interaction.response.send_modal(modal)

    # ------------------------------------------------------------------ context

    def language(self, interaction: Interaction) -> str:
        """The language for the adapter's own words (modal labels, buttons)."""
        found = i18n.supported(locale_of(interaction))
        return found or i18n.pick(self.ctx.campaign.default_language)

    def context(self, interaction: Interaction) -> CommandContext:
        return CommandContext(
            platform=NAME,
            actor=actor_of(interaction),
            workspace=str(interaction.guild_id or "dm"),
            channel=str(interaction.channel_id or ""),
            locale=locale_of(interaction),
        )

    # ------------------------------------------------------------------ answering

    async def answer(self, interaction: Interaction, call: Call) -> None:
        """A question: answer at once, or defer if the answer takes over `defer_after`."""
        task = asyncio.ensure_future(call(self.context(interaction)))
        done, _ = await asyncio.wait({task}, timeout=self.defer_after)
        if task in done:
            await self.send_reply(interaction, task.result())
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self.finish(interaction, await task, deferred_ephemeral=True)

    async def answer_admin(
        self, interaction: Interaction, doing: str, call: Call, *, ephemeral: bool = True
    ) -> None:
        """An admin write: refuse a non-admin at once, else defer first, then answer."""
        if await self.refused(interaction, doing):
            return
        await interaction.response.defer(ephemeral=ephemeral, thinking=True)
        await self.finish(
            interaction, await call(self.context(interaction)), deferred_ephemeral=ephemeral
        )

    async def refused(self, interaction: Interaction, doing: str) -> bool:
        """Tell a non-admin how to get access (ephemeral). True when refused."""
        try:
            self.commands.admin.admins.require(actor_of(interaction), doing)
        except NotAllowed as exc:
            await self.send_reply(interaction, self.error_reply(interaction, exc))
            return True
        return False

    def error_reply(self, interaction: Interaction, exc: StrikebotError) -> Reply:
        lang = self.language(interaction)
        key = "error_title_not_allowed" if isinstance(exc, NotAllowed) else "error_title"
        message = OutboundMessage(title=say(lang, key), body=exc.localized(lang), language=lang)
        return Reply(message, ephemeral=True, ok=False)

    async def send_reply(self, interaction: Interaction, reply: Reply) -> None:
        await interaction.response.send_message(
            embeds=reply_embeds(reply),
            ephemeral=reply.ephemeral or not reply.ok,
            allowed_mentions=NO_MENTIONS,
        )

    async def finish(
        self, interaction: Interaction, reply: Reply, *, deferred_ephemeral: bool
    ) -> None:
        """Put the answer where the deferral left a "thinking…" message."""
        embeds = reply_embeds(reply)
        if (reply.ephemeral or not reply.ok) and not deferred_ephemeral:
            # A personal answer must not stay in the channel: swap the public placeholder
            # for a message only the asker sees.
            await interaction.delete_original_response()
            await interaction.followup.send(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            return
        await interaction.edit_original_response(embeds=embeds, allowed_mentions=NO_MENTIONS)

    async def unexpected(self, interaction: Interaction, error: Exception) -> None:
        """Last resort: log it, and still tell the person something went wrong."""
        original = getattr(error, "original", error)
        log.error(
            "Discord interaction %s (%s) failed",
            interaction.id,
            interaction.command.qualified_name if interaction.command else interaction.type,
            exc_info=(type(original), original, original.__traceback__),
        )
        lang = self.language(interaction)
        embed = text_embed(
            say(lang, "error_title"), say(lang, "internal_error"), colour=ERROR_COLOUR
        )
        try:
            if interaction.response.is_done():
                await interaction.followup.send(embed=embed, ephemeral=True)
            else:
                await interaction.response.send_message(embed=embed, ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell the member about the failure (interaction expired?)")

    # ------------------------------------------------------------------ pickers

    async def demand_choices(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        try:
            keys = await self.commands.demand_keys(current, self.language(interaction))
        except Exception:
            log.exception("demand autocomplete failed")
            return []
        return [
            app_commands.Choice(name=_choice_name(f"{title} ({key})"), value=key)
            for key, title in keys[:CHOICES_MAX]
        ]

    async def update_choices(
        self, interaction: Interaction, current: str, states: frozenset[UpdateState]
    ) -> list[app_commands.Choice[int]]:
        # The pickers belong to admin commands and list unpublished headlines (awaiting
        # approval, under embargo): members get nothing.
        if not self.commands.admin.admins.allows(actor_of(interaction)):
            return []
        try:
            updates = await self.commands.recent_updates(CHOICES_MAX, states)
        except Exception:
            log.exception("update autocomplete failed")
            return []
        lang = self.language(interaction)
        wanted = current.strip().lstrip("#").lower()
        choices = []
        for update in updates:
            if update.state not in states:
                continue
            headline = update.text(lang).headline
            if wanted and not (str(update.id).startswith(wanted) or wanted in headline.lower()):
                continue
            marker = "" if update.state is UpdateState.PUBLISHED else f" [{update.state.value}]"
            name = _choice_name(f"#{update.id}{marker} · {headline}")
            choices.append(app_commands.Choice(name=name, value=update.id))
        return choices[:CHOICES_MAX]

    async def place_choices(
        self,
        interaction: Interaction,
        current: str,
        kinds: frozenset[str],
        *,
        several: bool = True,
    ) -> list[app_commands.Choice[str]]:
        """Sites and groups matching what is typed (`Commands.find_places`). With `several`,
        the option holds codes separated by commas: the last one is completed, those before
        it kept."""
        kept: list[str] = []
        typed = current
        if several and "," in current:
            before, _, typed = current.rpartition(",")
            kept = [code.strip().lower() for code in before.split(",") if code.strip()]
        lang = self.language(interaction)
        try:
            found = await asyncio.wait_for(
                self.commands.find_places(typed, lang, kinds=kinds, limit=CHOICES_MAX + len(kept)),
                self.defer_after,
            )
        except Exception:
            log.exception("site autocomplete failed")
            return []
        choices = []
        for match in found:
            value = ",".join([*kept, match.code])
            if match.code in kept or len(value) > CHOICE_VALUE_MAX:
                continue
            if match.kind == "group":
                name = word(lang, "place_group", name=match.name, code=match.code)
            else:
                name = f"{match.label} · {match.group_name}"
            if kept:
                name = f"{', '.join(kept)}, {name}"
            choices.append(app_commands.Choice(name=_choice_name(name), value=value))
        return choices[:CHOICES_MAX]

    async def timezone_choices(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        wanted = current.strip().lower().replace(" ", "_")
        names = [z for z in _zones() if wanted in z.lower()] if wanted else list(_COMMON_ZONES)
        return [app_commands.Choice(name=z, value=z) for z in names[:CHOICES_MAX]]

    # ------------------------------------------------------------------ posting

    async def open_post(
        self,
        interaction: Interaction,
        status: str,
        publish_at: str | None,
        next_step_at: str | None,
        language: str | None = None,
        audience: str | None = None,
    ) -> None:
        """`/strike post`: admins get the modal (a modal cannot follow a deferral, and
        opening it is instant); others are told how to get access. The text is in
        `language`, else in the admin's own language if the campaign speaks it, else in
        the campaign's first; `audience` (codes picked in the command) fills in the
        modal's "Only for"."""
        if await self.refused(interaction, "post updates"):
            return
        campaign = self.ctx.campaign
        ui = self.language(interaction)
        text_language = language if language in campaign.languages else None
        if text_language is None:
            text_language = ui if ui in campaign.languages else campaign.default_language
        places = bool(await self.commands.find_places("", ui, limit=1))
        modal = PostModal(
            self,
            language=ui,
            status=status,
            publish_at=publish_at,
            next_step_at=next_step_at,
            text_language=text_language,
            audience=places,
            audience_default=audience,
        )
        await self.open_modal(interaction, modal)

    async def preview_post(
        self,
        interaction: Interaction,
        *,
        texts: Mapping[str, Mapping[str, str]],
        status: str,
        urgency: str,
        publish_at: str | None,
        next_step_at: str | None,
        sites: str | None = None,
    ) -> None:
        """The modal was submitted: show the update as members will see it, with Post,
        Cancel and "Add <language>" for the campaign's languages not written yet. Nothing
        is written until Post."""
        if await self.refused(interaction, "post updates"):
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            proposal = await self.commands.read(
                self.context(interaction),
                Action.POST,
                texts=texts,
                status=status,
                urgency=urgency,
                publish_at=publish_at,
                next_step_at=next_step_at,
                sites=sites,  # codes of sites or of groups: the desk tells which
            )
        except StrikebotError as exc:
            await self.send_reply(interaction, self.error_reply(interaction, exc))
            return
        await self._show_preview(interaction, proposal)

    async def _show_preview(
        self, interaction: Interaction, proposal: Proposal, token: str | None = None
    ) -> None:
        """The desk's preview of `proposal` (kept under `token` when revising it), with its
        buttons; a draft that lacks a language is kept too, to add that language."""
        lang = self.language(interaction)
        desk, campaign = self.ctx.desk, self.ctx.campaign
        try:
            preview = await desk.preview(
                actor_of(interaction), proposal, keep_unready=True, token=token
            )
        except StrikebotError as exc:
            await self.send_reply(interaction, self.error_reply(interaction, exc))
            return
        assert preview.token is not None
        body = preview.intro(lang, local_zone(None, campaign))
        problems = preview.problems_in(lang)
        if problems:
            body += "\n\n" + "\n".join(f"• {text}" for text in problems.values())
        note = OutboundMessage(title=word(lang, "preview_title"), body=body, language=lang)
        previews = [
            replace(preview.messages[code], url=None, links=(), footer=word(lang, "preview_footer"))
            for code in preview.shown(lang)
        ]
        await interaction.edit_original_response(
            embeds=render_embeds([note, *previews]),
            view=preview_buttons(preview.token, lang, preview.missing, ready=preview.ready),
            allowed_mentions=NO_MENTIONS,
        )

    async def add_text(
        self, interaction: Interaction, token: str, language: str, text: Mapping[str, str]
    ) -> None:
        """Another language's wording for a draft (its "Add <language>" modal)."""
        await interaction.response.defer(ephemeral=True, thinking=True)
        try:
            proposal = await self.ctx.desk.draft(actor_of(interaction), token)
            added = self.ctx.desk.read(Action.POST, texts={language: text}).texts
        except StrikebotError as exc:
            await self.send_reply(interaction, self.error_reply(interaction, exc))
            return
        await self._show_preview(interaction, proposal.with_texts(added), token)

    async def draft_button(
        self, interaction: Interaction, action: str, token: str, language: str = ""
    ) -> None:
        try:
            await self._draft_button(interaction, action, token, language)
        except Exception as exc:
            await self.unexpected(interaction, exc)

    async def _draft_button(
        self, interaction: Interaction, action: str, token: str, language: str
    ) -> None:
        lang = self.language(interaction)
        actor = actor_of(interaction)
        desk = self.ctx.desk
        if action == "add":
            # Another language's wording: the draft stays where it is, for Post later.
            try:
                kept = await desk.draft(actor, token)
            except StrikebotError as exc:
                await interaction.response.send_message(
                    embed=text_embed(exc.localized(lang)), ephemeral=True
                )
                return
            if language not in self.ctx.campaign.languages:
                return
            modal = PostModal(
                self,
                language=lang,
                status=kept.status.value if kept.status else "",
                publish_at=None if kept.publish_at is None else kept.publish_at.isoformat(),
                next_step_at=None if kept.next_step_at is None else kept.next_step_at.isoformat(),
                text_language=language,
                draft_token=token,
            )
            await self.open_modal(interaction, modal)
            return
        try:  # someone else's preview, or one already used: said at once
            await desk.draft(actor, token)
        except NotAllowed as exc:
            await interaction.response.send_message(
                embed=text_embed(exc.localized(lang)), ephemeral=True
            )
            return
        except StrikebotError:
            await interaction.response.edit_message(
                embed=text_embed(word(lang, "expired")), view=None
            )
            return
        if action == "cancel":
            gone = await desk.cancel(actor, token)
            key = "cancelled" if gone else "expired"
            await interaction.response.edit_message(embed=text_embed(word(lang, key)), view=None)
            return
        await interaction.response.defer()
        reply = await self.commands.confirm(self.context(interaction), token)
        await interaction.edit_original_response(
            embeds=reply_embeds(reply),
            view=None if reply.ok else discord.utils.MISSING,
            allowed_mentions=NO_MENTIONS,
        )

    # ------------------------------------------------------------------ editing

    async def edit(self, interaction: Interaction, request: EditRequest, **changes: Any) -> None:
        """`/strike edit`: with new values given as options, apply them; with none, open
        the update's current text in a modal."""
        if any(v is not None for v in changes.values()):
            given = {k: v for k, v in changes.items() if v is not None}
            await self.submit_edit(interaction, request, given)
            return
        if await self.refused(interaction, "edit updates"):
            return
        text_language = request.language or self.ctx.campaign.default_language
        update, marks = await self.ctx.desk.current(request.update_id)
        if update is None:
            exc = not_found("no_update", id=request.update_id)
            await self.send_reply(interaction, self.error_reply(interaction, exc))
            return
        text = update.texts.get(text_language) or UpdateText("")  # a new language starts empty
        filled = replace(request, headline=text.headline, body=text.body, next_step=text.next_step)
        ui = self.language(interaction)
        # Written before another language's wording changed: say so above the inputs.
        stale = next((m.edited for m in marks if m.language == text_language), None)
        note = stale_note(ui, text_language, stale) if stale else ""
        await self.open_modal(
            interaction, EditModal(self, ui_language=ui, request=filled, note=note)
        )

    async def submit_edit(
        self, interaction: Interaction, request: EditRequest, changed: dict[str, str]
    ) -> None:
        """Apply `changed` (from the options or the modal) to the requested update."""
        await self.answer_admin(
            interaction,
            "edit updates",
            lambda ctx: self.commands.edit(
                ctx,
                request.update_id,
                reason=request.reason,
                correction=request.correction,
                language=request.language,
                **changed,
            ),
        )


def reply_embeds(reply: Reply) -> list[discord.Embed]:
    """A reply and its extras as one message's embeds; a refusal or mistake shows red."""
    embeds = render_embeds([reply.message, *reply.extra])
    if not reply.ok and embeds:
        embeds[0].colour = discord.Colour(ERROR_COLOUR)
    return embeds


def _choice_name(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CHOICE_NAME_MAX else text[: CHOICE_NAME_MAX - 1] + "…"


_COMMON_ZONES = (
    "America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York",
    "America/Phoenix", "America/Anchorage", "Pacific/Honolulu", "America/Puerto_Rico",
    "America/Mexico_City", "America/Bogota", "America/Argentina/Buenos_Aires",
    "America/Sao_Paulo", "America/Toronto", "America/Vancouver", "Europe/London",
    "Europe/Madrid", "UTC",
)  # fmt: skip


@cache
def _zones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones()))
