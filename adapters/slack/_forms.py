"""The admin forms' steps: each `view_submission` read, checked and answered with the next
view (Preview → Confirm → result), within Slack's 3 seconds.

The draft shown in the preview is kept in the store (`_drafts.py`) and taken when the admin
confirms, so a double click or a retried request posts once. What the confirmation does is
an ordinary `bot.commands` call, so a form and a typed command behave the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import _modals as modals
from adapters.slack._drafts import save_draft, take_draft
from adapters.slack._errors import CALL_FAILURES, describe
from adapters.slack._inbound import Spawn, reply_payload, update_id
from adapters.slack._words import word
from bot.ports import (
    Campaign,
    Clock,
    CommandContext,
    Commands,
    OutboundMessage,
    Reply,
    Status,
    Store,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    i18n,
    local_zone,
    reach,
    say,
    update_message,
)

log = logging.getLogger(__name__)

FormContext = Callable[[Mapping[str, Any], Mapping[str, Any]], Awaitable[CommandContext]]


class Forms:
    """The listeners for the form views (`_modals.py` builds them)."""

    def __init__(
        self,
        *,
        commands: Commands,
        store: Store,
        campaign: Campaign,
        clock: Clock,
        context: FormContext,
        spawn: Spawn,
        budget: float,
    ) -> None:
        self.commands = commands
        self.store = store
        self.campaign = campaign
        self.clock = clock
        self.context = context
        self.spawn = spawn
        self.budget = budget

    def register(self, app: AsyncApp) -> None:
        app.view(modals.POST)(self.on_post_form)
        app.view(modals.PICK)(self.on_pick)
        app.view(modals.EDIT)(self.on_edit_form)
        app.view(modals.CONFIRM)(self.on_confirm)

    async def _find(self, uid: int | None, now: datetime) -> Update | None:
        """The update a form names, as members see it now; None if there is none."""
        if uid is None:
            return None
        async with self.store.read() as tx:
            return await tx.get_update(uid, now)

    async def on_post_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        lang = str(meta.get("l") or i18n.source_language())
        now = self.clock()
        errors: dict[str, str] = {}
        if not values.get("headline"):
            errors["headline"] = word(lang, "headline_required")
        publish_at = modals.picked_time(values.get("publish_at"))
        if publish_at is not None and publish_at <= now:
            errors["publish_at"] = word(lang, "past_time")
        others: dict[str, dict[str, str]] = {}
        for extra in self.campaign.languages[1:]:
            if not any(values.get(f"{k}_{extra}") for k in ("headline", "body", "next_step")):
                continue
            if not values.get(f"headline_{extra}"):
                errors[f"headline_{extra}"] = word(lang, "headline_required")
            others[extra] = {
                "headline": values.get(f"headline_{extra}") or "",
                "body": values.get(f"body_{extra}") or "",
                "next_step": values.get(f"next_step_{extra}") or "",
            }
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        draft = {
            "action": "post",
            "status": values.get("status") or Status.BARGAINING.value,
            "urgency": values.get("urgency") or Urgency.ROUTINE.value,
            "headline": values["headline"],
            "body": values.get("body") or "",
            "next_step": values.get("next_step") or "",
            "publish_at": None if publish_at is None else publish_at.isoformat(),
            "texts": others,
        }
        texts = {self.campaign.default_language: _texts(draft)}
        texts.update({code: _texts(fields) for code, fields in others.items()})
        provisional = Update(
            id=0,
            status=Status(draft["status"]),
            urgency=Urgency(draft["urgency"]),
            texts=texts,
            author="",
            created_at=now,
            state=UpdateState.PUBLISHED,
            publish_at=publish_at,
            published_at=publish_at or now,
        )
        found = await reach(
            self.store, self.campaign, provisional, sections=self.commands.cost_sections
        )
        if publish_at is not None:
            when = i18n.format_datetime(
                publish_at.astimezone(local_zone(None, self.campaign)), lang
            )
            intro = word(lang, "preview_intro_scheduled", when=when)
        else:
            intro = word(lang, "preview_intro_post", reach=found.sentence(lang))
        previews = [update_message(provisional, code, self.campaign) for code in texts]
        await self._confirm(ack, meta, draft, intro, previews, "post", now)

    async def on_pick(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        lang, kind = str(meta.get("l") or i18n.source_language()), str(meta.get("k", ""))
        now = self.clock()
        uid = update_id(values.get("update"))
        update = await self._find(uid, now)
        if update is None:
            await ack(response_action="errors", errors={"update": say(lang, "no_update", id=uid)})
            return
        base = {k: meta[k] for k in ("c", "t", "l") if k in meta}
        if kind == "edit":
            text_lang = str(values.get("language") or self.campaign.default_language)
            async with self.store.read() as tx:
                marks = await tx.stale_texts(f"update:{update.id}")
            stale = next((m.edited for m in marks if m.language == text_lang), None)
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
            reason = str(values.get("reason") or "").strip()
            if not reason:
                await ack(
                    response_action="errors", errors={"reason": word(lang, "reason_required")}
                )
                return
            gone = replace(
                update, state=UpdateState.RETRACTED, retraction_reason=reason, retracted_at=now
            )
            await self._confirm(
                ack,
                meta,
                {"action": "retract", "update_id": update.id, "reason": reason},
                word(lang, "preview_intro_retract", id=update.id),
                [update_message(gone, lang, self.campaign)],
                "retract",
                now,
            )
            return
        await self._confirm(
            ack,
            meta,
            {"action": "approve", "update_id": update.id},
            word(lang, "preview_intro_approve", id=update.id),
            [update_message(update, lang, self.campaign)],
            "approve",
            now,
        )

    async def on_edit_form(self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any]) -> None:
        meta, values = modals.decode_meta(view), modals.view_values(view)
        lang = str(meta.get("l") or i18n.source_language())
        text_lang = str(meta.get("tl") or self.campaign.default_language)
        now = self.clock()
        uid = update_id(meta.get("u"))
        update = await self._find(uid, now)
        if update is None:
            await ack(response_action="update", view=modals.note_view(
                lang, "failed_title", say(lang, "no_update", id=uid)))  # fmt: skip
            return
        old = update.texts.get(text_lang) or update.text(text_lang)
        changes: dict[str, Any] = {}
        # Compared with what the form showed: a body longer than one input was shown cut,
        # and saving an untouched cut body would lose its end.
        for key, before in (
            ("headline", old.headline),
            ("body", old.body[: modals.BODY_INPUT_MAX]),
            ("next_step", old.next_step),
        ):
            after = values.get(key) or ""
            if after.strip() != before.strip():
                changes[key] = after
        for key, current in (("status", update.status.value), ("urgency", update.urgency.value)):
            if values.get(key) and values[key] != current:
                changes[key] = values[key]
        reason = str(values.get("reason") or "").strip()
        errors: dict[str, str] = {}
        if not changes:
            errors["headline"] = word(lang, "nothing_changed")
        if "headline" in changes and not changes["headline"].strip():
            errors["headline"] = word(lang, "headline_required")
        if not reason:
            errors["reason"] = word(lang, "reason_required")
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        correction = "yes" in (values.get("correction") or [])
        new_text = UpdateText(
            changes.get("headline", old.headline),
            changes.get("body", old.body),
            changes.get("next_step", old.next_step),
        )
        edited = replace(
            update,
            texts={**update.texts, text_lang: new_text},
            status=Status(changes.get("status", update.status.value)),
            urgency=Urgency(changes.get("urgency", update.urgency.value)),
            revision=update.revision + 1,
        )
        intro_key = "preview_intro_edit_correction" if correction else "preview_intro_edit"
        await self._confirm(
            ack,
            meta,
            {
                "action": "edit",
                "update_id": update.id,
                "language": text_lang,
                "reason": reason,
                "correction": correction,
                **changes,
            },
            word(lang, intro_key, reason=reason),
            [update_message(edited, text_lang, self.campaign)],
            "save",
            now,
        )

    async def _confirm(
        self,
        ack: AsyncAck,
        meta: Mapping[str, Any],
        draft: Mapping[str, Any],
        intro: str,
        previews: Sequence[OutboundMessage],
        submit_key: str,
        now: datetime,
    ) -> None:
        """Keep the draft, and push the view that shows it and asks to go ahead."""
        token = await save_draft(self.store, draft, now)
        base = {k: meta[k] for k in ("c", "t", "l") if k in meta}
        lang = str(meta.get("l") or i18n.source_language())
        view = modals.confirm_view(
            lang, intro, previews, submit_key, modals.encode_meta(d=token, **base)
        )
        await ack(response_action="push", view=view)

    # ------------------------------------------------------------------ confirming

    async def on_confirm(
        self, ack: AsyncAck, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient
    ) -> None:
        meta = modals.decode_meta(view)
        lang = str(meta.get("l") or i18n.source_language())
        draft = await take_draft(self.store, str(meta.get("d", "")))
        if draft is None:
            note = word(lang, "draft_gone", command="post")
            await ack(response_action="update", view=modals.note_view(lang, "failed_title", note))
            return
        # Who is asking (users.info, user groups) counts against the budget too: Slack's
        # 3 seconds cover the lookups as well as the change.
        work = asyncio.ensure_future(self._as_asker(body, meta, draft))
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
        self, body: Mapping[str, Any], meta: Mapping[str, Any], draft: Mapping[str, Any]
    ) -> tuple[CommandContext, Reply]:
        ctx = await self.context(body, meta)
        return ctx, await self._carry_out(ctx, draft)

    async def _carry_out(self, ctx: CommandContext, draft: Mapping[str, Any]) -> Reply:
        action = draft.get("action")
        c = self.commands
        if action == "post":
            return await c.post(
                ctx,
                draft["status"],
                draft["headline"],
                draft.get("body", ""),
                draft.get("next_step", ""),
                draft.get("urgency", "routine"),
                publish_at=_aware(draft.get("publish_at")),
                texts=draft.get("texts") or None,
            )
        if action == "edit":
            return await c.edit(
                ctx,
                draft["update_id"],
                headline=draft.get("headline"),
                body=draft.get("body"),
                next_step=draft.get("next_step"),
                status=draft.get("status"),
                reason=draft.get("reason", ""),
                correction=bool(draft.get("correction")),
                urgency=draft.get("urgency"),
                language=draft.get("language"),
            )
        if action == "retract":
            return await c.retract(ctx, draft["update_id"], draft.get("reason", ""))
        return await c.approve(ctx, draft["update_id"])

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


def _texts(values: Mapping[str, Any]) -> UpdateText:
    return UpdateText(
        str(values.get("headline") or ""),
        str(values.get("body") or ""),
        str(values.get("next_step") or ""),
    )


def _aware(value: object) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(str(value))
