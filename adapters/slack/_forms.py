"""The admin forms' steps: each `view_submission` read into the editorial desk's proposal
and answered with the next view (Preview → Confirm → result), within Slack's 3 seconds.

The desk keeps the previewed draft in the store and the confirmation view carries only its
token; confirming takes it, so a double click or a retried request posts once, on any
instance. A problem the desk finds is shown on the input it is about.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import _modals as modals
from adapters.slack._errors import CALL_FAILURES, describe
from adapters.slack._inbound import Spawn, reply_payload, update_id
from adapters.slack._words import word
from bot.ports import (
    Action,
    Campaign,
    CommandContext,
    Commands,
    Problems,
    Proposal,
    Reply,
    Status,
    StrikebotError,
    TextPatch,
    UpdateText,
    Urgency,
    i18n,
    local_zone,
    say,
)

TEXT_FIELDS = ("headline", "body", "next_step")

log = logging.getLogger(__name__)

FormContext = Callable[[Mapping[str, Any], Mapping[str, Any]], Awaitable[CommandContext]]


class Forms:
    """The listeners for the form views (`_modals.py` builds them)."""

    def __init__(
        self,
        *,
        commands: Commands,
        campaign: Campaign,
        context: FormContext,
        spawn: Spawn,
        budget: float,
    ) -> None:
        self.commands = commands
        self.desk = commands.desk
        self.campaign = campaign
        self.context = context
        self.spawn = spawn
        self.budget = budget

    def register(self, app: AsyncApp) -> None:
        app.view(modals.POST)(self.on_post_form)
        app.view(modals.PICK)(self.on_pick)
        app.view(modals.EDIT)(self.on_edit_form)
        app.view(modals.CONFIRM)(self.on_confirm)
        app.options(re.compile(f"^({modals.PLACES}|{modals.FOLLOWS})$"))(self.on_places)
        app.action(modals.FOLLOWS)(self.on_follows)

    async def on_places(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """The audience picker's options request (`block_suggestion`): the sites and groups
        matching what was typed, in the form's language, within Slack's 3 seconds."""
        lang = i18n.pick(modals.picker_language(body) or self.campaign.default_language)
        query = str(body.get("value") or "")
        try:
            found = await asyncio.wait_for(
                self.commands.find_places(query, lang, limit=modals.OPTIONS_MAX), self.budget
            )
        except TimeoutError:
            log.warning("the Slack site picker found nothing within %gs", self.budget)
            found = []
        except Exception:  # an empty list beats no answer (Slack says "no results")
            log.exception("the Slack site picker failed")
            found = []
        await ack(**modals.place_options(lang, found))

    async def on_post_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        default = self.campaign.default_language
        texts = {default: {k: values.get(k) or "" for k in TEXT_FIELDS}}
        for extra in self.campaign.languages[1:]:
            wording = {k: values.get(f"{k}_{extra}") for k in TEXT_FIELDS}
            if any(wording.values()):
                texts[extra] = {k: (v or "") if k != "headline" else v for k, v in wording.items()}
        proposal = Proposal(
            Action.POST,
            texts={code: TextPatch(**fields) for code, fields in texts.items()},
            status=Status(values.get("status") or Status.BARGAINING.value),
            urgency=Urgency(values.get("urgency") or Urgency.ROUTINE.value),
            publish_at=modals.picked_time(values.get("publish_at")),
        )
        picked = modals.chosen_audience(values.get("audience"))
        if picked is not None:
            try:  # the desk checks the codes as a typed command's (one gone since?)
                sites, groups = picked
                read = self.desk.read(Action.POST, texts={}, sites=sites, groups=groups)
            except Problems as exc:
                lang = str(meta.get("l") or i18n.source_language())
                await ack(response_action="errors", errors={"audience": exc.localized(lang)})
                return
            proposal = replace(proposal, audience=read.audience)
        await self._preview(ack, body, meta, proposal, "post")

    async def on_follows(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        """The channel's picker changed (`follows_message`): follow what it holds now
        (nothing: everything again), and show the channel's card with the picker again."""
        action = (body.get("actions") or [{}])[0]
        values = [o.get("value") for o in action.get("selected_options") or []]
        picked = modals.chosen_audience(values)
        sites: str | list[str] = "all" if picked is None else picked[0]
        groups = None if picked is None else picked[1]
        lang = i18n.pick(modals.picker_language(action) or self.campaign.default_language)
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
            "channel_id", ""
        )
        meta = {"c": channel, "l": lang}
        work = asyncio.ensure_future(self._follow(body, meta, sites, groups, respond))
        try:
            await asyncio.wait_for(asyncio.shield(work), self.budget)
        except TimeoutError:
            self.spawn(_finish(work))
        await ack()

    async def _follow(
        self,
        body: Mapping[str, Any],
        meta: Mapping[str, Any],
        sites: str | list[str],
        groups: list[str] | None,
        respond: AsyncRespond,
    ) -> None:
        try:
            ctx = await self.context(body, meta)
            reply = await self.commands.subscribe(ctx, sites=sites, groups=groups)
            payload = reply_payload(reply)
            if not reply.ok:  # the picker stays as it was; the answer says why
                await respond(
                    text=payload["text"], blocks=payload["blocks"], response_type="ephemeral"
                )
                return
            lang = str(meta["l"])
            follows = await self.commands.following(ctx)
            codes = [] if follows is None else [*follows.sites, *follows.groups]
            picker = modals.follows_message(lang, await self.commands.places_named(codes, lang))
            await respond(
                text=payload["text"],
                blocks=[*payload["blocks"], *picker["blocks"]],
                response_type="ephemeral",
                replace_original=True,
            )
        except Exception:  # the change is made or refused; only telling it failed
            log.exception("answering the Slack follows picker failed")

    async def on_pick(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        lang, kind = str(meta.get("l") or i18n.source_language()), str(meta.get("k", ""))
        uid = update_id(values.get("update"))
        if uid is None:
            await ack(response_action="errors", errors={"update": say(lang, "no_update", id=uid)})
            return
        if kind == "edit":
            text_lang = str(values.get("language") or self.campaign.default_language)
            update, marks = await self.desk.current(uid)
            if update is None:
                await ack(
                    response_action="errors", errors={"update": say(lang, "no_update", id=uid)}
                )
                return
            stale = next((m.edited for m in marks if m.language == text_lang), None)
            base = {k: meta[k] for k in ("c", "t", "l") if k in meta}
            form = modals.edit_form(
                lang,
                update,
                text_lang,
                modals.encode_meta(u=update.id, tl=text_lang, **base),
                stale_after=stale,
            )
            await ack(response_action="update", view=form)
            return
        if kind == "retract":
            proposal = Proposal(
                Action.RETRACT, update_id=uid, reason=str(values.get("reason") or "")
            )
            await self._preview(ack, body, meta, proposal, "retract", errors_at="update")
            return
        await self._preview(
            ack, body, meta, Proposal(Action.APPROVE, update_id=uid), "approve", errors_at="update"
        )

    async def on_edit_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        lang = str(meta.get("l") or i18n.source_language())
        text_lang = str(meta.get("tl") or self.campaign.default_language)
        uid = update_id(meta.get("u"))
        update, _ = (None, ()) if uid is None else await self.desk.current(uid)
        if update is None:
            await ack(response_action="update", view=modals.note_view(
                lang, "failed_title", say(lang, "no_update", id=uid)))  # fmt: skip
            return
        old = update.texts.get(text_lang) or UpdateText("")
        patch: dict[str, str] = {}
        # Compared with what the form showed: a body longer than one input was shown cut,
        # and saving an untouched cut body would lose its end.
        for key, before in (
            ("headline", old.headline),
            ("body", old.body[: modals.BODY_INPUT_MAX]),
            ("next_step", old.next_step),
        ):
            after = values.get(key) or ""
            if after.strip() != before.strip():
                patch[key] = after
        status, urgency = values.get("status"), values.get("urgency")
        correction = "yes" in (values.get("correction") or [])
        proposal = Proposal(
            Action.CORRECT if correction else Action.EDIT,
            update_id=update.id,
            texts={text_lang: TextPatch(**patch)} if patch else {},
            status=Status(status) if status else None,
            urgency=Urgency(urgency) if urgency else None,
            reason=str(values.get("reason") or ""),
        )
        await self._preview(ack, body, meta, proposal, "save", main=text_lang)

    async def _preview(
        self,
        ack: AsyncAck,
        body: Mapping[str, Any],
        meta: Mapping[str, Any],
        proposal: Proposal,
        submit_key: str,
        *,
        main: str | None = None,
        errors_at: str | None = None,
    ) -> None:
        """Ask the desk how the proposal goes out: its problems on the form's inputs, or
        the view that shows it (the draft kept in the store) and asks to go ahead."""
        lang = str(meta.get("l") or i18n.source_language())
        ctx = await self.context(body, meta)
        try:
            preview = await self.desk.preview(ctx.actor, proposal)
        except StrikebotError as exc:
            block = errors_at or "headline"
            await ack(response_action="errors", errors={block: exc.localized(lang)})
            return
        if not preview.ready:
            errors: dict[str, str] = {}
            own = main or self.campaign.default_language
            for name, problem in preview.problems_in(lang).items():
                block = _block(name, own)
                errors.setdefault(errors_at if errors_at and block != "reason" else block, problem)
            await ack(response_action="errors", errors=errors)
            return
        assert preview.token is not None
        base = {k: meta[k] for k in ("c", "t", "l") if k in meta}
        intro = preview.intro(lang, local_zone(None, self.campaign))
        view = modals.confirm_view(
            lang,
            intro,
            [preview.messages[code] for code in preview.shown(main or lang)],
            submit_key,
            modals.encode_meta(d=preview.token, **base),
        )
        await ack(response_action="push", view=view)

    # ------------------------------------------------------------------ confirming

    async def on_confirm(
        self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        meta = modals.decode_meta(view)
        lang = str(meta.get("l") or i18n.source_language())
        # Who is asking (users.info, user groups) counts against the budget too: Slack's
        # 3 seconds cover the lookups as well as the change.
        work = asyncio.ensure_future(self._as_asker(body, meta, str(meta.get("d", ""))))
        try:
            _, reply = await asyncio.wait_for(asyncio.shield(work), self.budget)
        except TimeoutError:
            note = word(lang, "working_modal")
            await ack(response_action="update", view=modals.note_view(lang, "working_title", note))
            self.spawn(self._tell_later(work, client))
            return
        messages = [reply.message, *reply.extra]
        await ack(response_action="update", view=modals.result_view(lang, messages, ok=reply.ok))

    async def _as_asker(
        self, body: Mapping[str, Any], meta: Mapping[str, Any], token: str
    ) -> tuple[CommandContext, Reply]:
        ctx = await self.context(body, meta)
        return ctx, await self.commands.confirm(ctx, token)

    async def _tell_later(
        self, work: asyncio.Future[tuple[CommandContext, Reply]], client: AsyncWebClient
    ) -> None:
        """A slow form finished after Slack stopped waiting: tell the admin privately."""
        ctx, reply = await work
        payload = reply_payload(reply)
        user = ctx.actor.user_id
        try:
            await client.chat_postEphemeral(
                channel=ctx.channel, user=user, text=payload["text"], blocks=payload["blocks"]
            )
        except CALL_FAILURES:
            try:  # not a member of that channel: the app's direct messages with the admin
                await client.chat_postMessage(
                    channel=user, text=payload["text"], blocks=payload["blocks"]
                )
            except CALL_FAILURES as exc:
                log.warning("could not tell %s the result of a Slack form: %s", user, describe(exc))


async def _finish(work: asyncio.Future[None]) -> None:
    await work


def _block(field: str, main: str) -> str:
    """The form input a desk problem is about: texts.es.body -> body_es (the form's own
    language's inputs carry no suffix)."""
    if field.startswith("texts."):
        _, language, *rest = field.split(".")
        name = rest[0] if rest else "headline"
        return name if language == main else f"{name}_{language}"
    return (
        field if field in ("publish_at", "reason", "status", "urgency", "audience") else "headline"
    )
