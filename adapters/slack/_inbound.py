"""The `/strike` slash command: Slack payloads in, `bot.commands` calls, Block Kit out.

Every request is answered within Slack's 3 seconds: the answer itself when it is ready
within `budget` (2 s), else a short "working on it" with the real answer following through
the `response_url`. Admin words without arguments open a form (`_forms.py`).

A request Slack delivers twice (a retry, a load balancer replaying it) is recognised by its
trigger or event id in the store's `processed_events`, so anything that changes something
(admin commands, form submissions, events) is done once across every instance. Questions
(`/strike status`...) change nothing and are simply answered again: a lost answer is why a
request comes back.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import _modals as modals
from adapters.slack._blocks import render_all
from adapters.slack._errors import CALL_FAILURES, describe
from adapters.slack._people import Directory
from adapters.slack._settings import NAME
from adapters.slack._words import word
from bot.ports import (
    Actor,
    AdminList,
    Campaign,
    Clock,
    CommandContext,
    Commands,
    NotAllowed,
    OutboundMessage,
    Reply,
    UpdateState,
    command_named,
    i18n,
    say,
)

# What an edit or a retraction picks from: the newest updates not already retracted.
LIVE_STATES = frozenset(
    {UpdateState.PUBLISHED, UpdateState.SCHEDULED, UpdateState.PENDING_APPROVAL}
)

log = logging.getLogger(__name__)

COMMAND = "/strike"
BUDGET = 2.0  # seconds to answer in the ack itself; Slack gives up at 3
# Questions, whatever language they are typed in: answering one twice changes nothing.
QUESTIONS = frozenset({"status", "demands", "demand", "timeline", "next", "help"})
MODAL_VERBS = frozenset({"post", "edit", "retract", "approve"})


def read_only(verb: str) -> bool:
    """Whether the typed command (its first word, any language) only asks something."""
    return not verb or command_named(verb) in QUESTIONS


DOING = {"post": "post updates", "edit": "edit updates", "retract": "retract updates",
         "approve": "approve updates"}  # fmt: skip

Spawn = Callable[[Coroutine[Any, Any, None]], object]
Payload = dict[str, Any]


def event_key(body: Mapping[str, Any]) -> str | None:
    """What identifies one Slack request however often it is delivered, or None for a
    request that may safely be handled again."""
    if body.get("command"):
        words = str(body.get("text") or "").split()
        if read_only(words[0].lower() if words else ""):
            return None  # a question: answering it twice changes nothing
    if body.get("event_id"):
        key = f"event:{body['event_id']}"
    elif body.get("trigger_id"):
        key = f"trigger:{body['trigger_id']}"
    else:
        return None
    if len(key) > 128:  # the column's width; trigger ids are ~45 characters in practice
        key = "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def reply_payload(reply: Reply) -> Payload:
    """A Reply as a slash-command response (ack body or response_url message)."""
    rendered = render_all([reply.message, *reply.extra])
    return {
        "response_type": "ephemeral" if reply.ephemeral or not reply.ok else "in_channel",
        "text": rendered.text,
        "blocks": rendered.blocks,
    }


def note_payload(title: str, text: str, language: str) -> Payload:
    rendered = render_all([OutboundMessage(title=title, body=text, language=language)])
    return {"response_type": "ephemeral", "text": rendered.text, "blocks": rendered.blocks}


class Inbound:
    """The listeners registered on the adapter's AsyncApp."""

    def __init__(
        self,
        *,
        commands: Commands,
        seen: Callable[[str], Awaitable[bool]],
        campaign: Campaign,
        clock: Clock,
        admins: AdminList,
        directory: Directory,
        spawn: Spawn,
        budget: float = BUDGET,
    ) -> None:
        self.commands = commands
        self.seen = seen
        self.campaign = campaign
        self.clock = clock
        self.admins = admins
        self.directory = directory
        self.spawn = spawn
        self.budget = budget

    def register(self, app: AsyncApp) -> None:
        app.middleware(self.once)
        app.command(COMMAND)(self.on_command)

    # ------------------------------------------------------------------ retries

    async def once(
        self, body: dict[str, Any], next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Let each Slack request through once; a repeat is acknowledged and dropped."""
        key = event_key(body)
        if key is not None and not await self.seen(key):
            log.info("Slack delivered %s again; it was already handled", key)
            return BoltResponse(status=200, body="")
        await next()
        return None

    # ------------------------------------------------------------------ who is asking

    async def context(
        self, *, user_id: str, name: str, team: str, channel: str, admin_action: bool
    ) -> CommandContext:
        """The asker as the core sees them: locale and time zone from users.info, and (for
        admin actions) the configured admin user groups they belong to."""
        # Listed by user id: an admin without asking Slack for their groups.
        need_groups = admin_action and not self.admins.allows(Actor(NAME, user_id))
        if need_groups:
            person, groups = await asyncio.gather(
                self.directory.person(user_id), self.directory.admin_groups_of(user_id)
            )
        else:
            person, groups = await self.directory.person(user_id), frozenset[str]()
        locale = person.locale if person is not None else None
        return CommandContext(
            platform=NAME,
            actor=Actor(NAME, user_id, display_name=name, roles=groups),
            workspace=team,
            channel=channel,
            # An asker whose Slack speaks another of the campaign's languages than the source
            # (Slack's default) gets it; otherwise the channel's language decides.
            locale=locale if self._telling(locale) else None,
            timezone=person.timezone if person is not None else None,
        )

    async def language(self, ctx: CommandContext) -> str:
        """The language `bot.commands` will answer `ctx` in (asker, then channel, then campaign)."""
        return await self.commands.language_of(ctx)

    def quick_language(self, user_id: str) -> str:
        """Without waiting on anything: the asker's cached locale, else the campaign's."""
        person = self.directory.cached(user_id)
        if person is not None and self._telling(person.locale):
            return i18n.pick(person.locale)
        return i18n.pick(self.campaign.default_language)

    def _telling(self, locale: str | None) -> bool:
        """Whether a Slack locale says something: one of the campaign's languages other than
        the source language, which is every Slack's default."""
        if not locale:
            return False
        language = i18n.pick(locale)
        return language != i18n.source_language() and language in self.campaign.languages

    async def form_context(
        self, body: Mapping[str, Any], meta: Mapping[str, Any]
    ) -> CommandContext:
        """The asker of a form submission (`meta`: the form's channel, team, language)."""
        user = body.get("user") or {}
        team = (body.get("team") or {}).get("id") or user.get("team_id") or meta.get("t", "")
        return await self.context(
            user_id=str(user.get("id", "")),
            name=str(user.get("username") or user.get("name") or ""),
            team=str(meta.get("t") or team),
            channel=str(meta.get("c", "")),
            admin_action=True,
        )

    # ------------------------------------------------------------------ /strike

    async def on_command(
        self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient
    ) -> None:
        text = str(body.get("text") or "").strip()
        work = asyncio.ensure_future(self._answer(body, text, client, respond))
        try:
            payload = await asyncio.wait_for(asyncio.shield(work), self.budget)
        except TimeoutError:
            lang = self.quick_language(str(body.get("user_id", "")))
            await ack({"response_type": "ephemeral", "text": word(lang, "working")})
            self.spawn(self._answer_late(work, respond))
            return
        if payload is None:
            await ack()
        else:
            await ack(payload)

    async def _answer_late(
        self, work: asyncio.Future[Payload | None], respond: AsyncRespond
    ) -> None:
        payload = await work
        if payload is not None:
            await respond(
                text=payload["text"],
                blocks=payload.get("blocks"),
                response_type=payload.get("response_type"),
            )

    async def _answer(
        self, body: Mapping[str, Any], text: str, client: AsyncWebClient, respond: AsyncRespond
    ) -> Payload | None:
        """The ack payload for one slash command (None: a form was opened)."""
        words = text.split()
        verb = words[0].lower() if words else ""
        try:
            ctx = await self.context(
                user_id=str(body.get("user_id", "")),
                name=str(body.get("user_name", "")),
                team=str(body.get("team_id", "")),
                channel=str(body.get("channel_id", "")),
                admin_action=not read_only(verb),
            )
            named = command_named(verb) if verb else None
            form = named if named in MODAL_VERBS else None
            if form is not None and _wants_form(form, words):
                return await self._open_form(form, words, body, ctx, client)
            reply = await self.commands.handle(ctx, text)
            if named == "subscribe" and reply.ok:
                self.spawn(self._offer_follows(ctx, respond))
            return reply_payload(reply)
        except Exception:
            log.exception("answering /strike %s failed", verb)
            lang = self.quick_language(str(body.get("user_id", "")))
            return note_payload(say(lang, "error_title"), say(lang, "internal_error"), lang)

    async def _offer_follows(self, ctx: CommandContext, respond: AsyncRespond) -> None:
        """After `/strike subscribe`, in a campaign with sites: a message only the admin
        sees, whose picker chooses the sites and groups the channel follows."""
        lang = await self.language(ctx)
        follows = await self.commands.following(ctx)
        if follows is None or not await self.commands.find_places("", lang, limit=1):
            return
        chosen = await self.commands.places_named([*follows.sites, *follows.groups], lang)
        message = modals.follows_message(lang, chosen)
        try:
            await respond(**message)
        except Exception as exc:  # the card itself was shown; only the picker is missing
            log.warning("could not offer the Slack follows picker: %s", describe(exc))

    # ------------------------------------------------------------------ opening forms

    async def _open_form(
        self,
        form: str,
        words: Sequence[str],
        body: Mapping[str, Any],
        ctx: CommandContext,
        client: AsyncWebClient,
    ) -> Payload | None:
        lang = await self.language(ctx)
        try:
            self.admins.require(ctx.actor, DOING[form])
        except NotAllowed as exc:
            return note_payload(say(lang, "error_title_not_allowed"), exc.localized(lang), lang)
        meta = {"c": ctx.channel, "t": ctx.workspace, "l": lang}
        chosen = update_id(words[1]) if len(words) > 1 else None
        view: modals.View
        if form == "post":
            current = await self.commands.desk.current_status()
            places = bool(await self.commands.find_places("", lang, limit=1))
            view = modals.post_form(
                lang, self.campaign, current, modals.encode_meta(**meta), places=places
            )
        elif form == "edit" and chosen is not None:
            update, _ = await self.commands.desk.current(chosen)
            if update is None or update.retracted:
                return reply_payload(await self.commands.handle(ctx, " ".join(words)))
            # The asker's own wording where the update has one, else the campaign's main one.
            text_lang = lang if lang in update.texts else self.campaign.default_language
            view = modals.edit_form(
                lang, update, text_lang, modals.encode_meta(u=update.id, tl=text_lang, **meta)
            )
        else:
            states = {UpdateState.PENDING_APPROVAL} if form == "approve" else LIVE_STATES
            choices = await self.commands.recent_updates(25, states)
            if not choices:
                return note_payload(
                    word(lang, f"{form}_title"),
                    word(lang, "nothing_to_pick", command=words[0]),
                    lang,
                )
            view = modals.pick_form(
                form,
                lang,
                choices[:100],
                self.campaign,
                modals.encode_meta(k=form, **meta),
                preselect=chosen if any(u.id == chosen for u in choices) else None,
            )
        try:
            await client.views_open(trigger_id=body.get("trigger_id"), view=view)
        except CALL_FAILURES as exc:
            error = describe(exc)
            log.warning("views.open failed: %s", error)
            return note_payload(
                word(lang, f"{form}_title"),
                word(lang, "open_failed", error=error, command=words[0]),
                lang,
            )
        return None


# ---------------------------------------------------------------------- helpers


def _wants_form(form: str, words: Sequence[str]) -> bool:
    """`/strike post` alone opens the form; typed arguments run the command directly.
    `/strike edit 12` and `/strike retract 12` open the form on that update."""
    if len(words) == 1:
        return True
    return form in ("edit", "retract") and len(words) == 2 and update_id(words[1]) is not None


def update_id(value: object) -> int | None:
    text = str(value or "").strip().lstrip("#")
    return int(text) if text.isascii() and text.isdigit() and 0 < int(text) < 2**31 else None
