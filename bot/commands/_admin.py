"""What admins order, through `bot.editorial.admin.Admin`: subscribe and unsubscribe a channel,
post, edit, retract and approve updates. Each answers with a confirmation only the admin
sees, and a preview of the update as members will see it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from bot import i18n
from bot.commands._context import Asker, CommandContext, CommandsBase, Reply
from bot.editorial.admin import Changes, Draft
from bot.editorial.parsing import (
    is_off,
    parse_briefing_time,
    parse_days,
    parse_flag,
    parse_language,
    parse_quiet_hours,
    parse_status,
    parse_timezone,
    parse_update_id,
    parse_urgencies,
    parse_urgency,
    parse_when,
    valid_timezone,
)
from bot.editorial.reach import reach
from bot.editorial.rules import check_reason, check_update_text, clean_text
from bot.errors import InvalidInput
from bot.i18n.sentences import in_every_language, invalid, not_found, say
from bot.messages.compose import update_message
from bot.models import (
    QuietHours,
    Status,
    Subscription,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
)
from bot.plugins.outbound import Field, OutboundMessage

# Another language's wording: an UpdateText, or {"headline": ..., "body": ..., "next_step": ...}.
OtherText = UpdateText | Mapping[str, str]
EXAMPLES = {
    "post": '/strike post strike_on "…" "…" urgency=urgent',
    "edit": '/strike edit 12 reason="…" body="…"',
    "retract": '/strike retract 12 "…"',
    "approve": "/strike approve 12",
}


class AdminOrders(CommandsBase):
    """The orders only admins may give."""

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
        texts: Mapping[str, OtherText] | None = None,
        next_step_at: datetime | str | None = None,
        language: str | None = None,
    ) -> Reply:
        """Post an update now (or at `publish_at`). Times without an offset are in the
        asker's time zone. `headline`, `body` and `next_step` are in `language` (default:
        the campaign's first); `texts` holds other languages' wordings, by language."""
        return await self._run(
            ctx,
            "post",
            lambda a: self._post(
                a,
                status,
                headline,
                body,
                next_step,
                urgency,
                publish_at,
                texts,
                next_step_at,
                language,
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

    async def _subscribe(
        self,
        a: Asker,
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
            platform=ctx.platform,
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
            changes["briefing_time"] = parse_briefing_time(
                briefing_time, self.default_briefing_time
            )
        if timezone is not None:
            changes["timezone"] = parse_timezone(timezone)
        if quiet_hours is not None:
            changes["quiet_hours"] = parse_quiet_hours(quiet_hours)
        if briefing_days is not None:
            changes["briefing_days"] = parse_days(briefing_days)
        saved = await self.admin.subscribe(ctx.actor, replace(base, **changes))
        return Reply(self._subscription_card(saved, a.language))

    def _subscription_card(self, sub: Subscription, lang: str) -> OutboundMessage:
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
                Field(say(lang, "setting_language"), i18n.language_name(sub.language, lang), True),
                Field(say(lang, "setting_urgencies"), urgencies, True),
                Field(say(lang, "setting_timezone"), sub.timezone, True),
                Field(say(lang, "setting_briefing"), briefing),
                Field(say(lang, "setting_quiet"), quiet),
            ),
        )

    async def _unsubscribe(self, a: Asker) -> Reply:
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
        a: Asker,
        status: object,
        headline: object,
        body: object,
        next_step: object,
        urgency: object,
        publish_at: object,
        others: object,
        next_step_at: object,
        language: object = None,
    ) -> Reply:
        actor, lang = a.ctx.actor, a.language
        self.admin.admins.require(actor, "post updates")
        draft_status = parse_status(status)
        draft_urgency = parse_urgency(urgency or "routine")
        languages = self.campaign.languages
        main = self.campaign.default_language
        if language is not None and str(language).strip():
            main = parse_language(language, languages)
        texts = {main: _update_text(headline, body, next_step)}
        for code, value in (others if isinstance(others, Mapping) else {}).items():
            other = parse_language(code, languages)
            if other in texts:
                raise invalid("text_twice", language=other)
            texts[other] = _other_text(value, other)
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
            found = await reach(self.store, self.campaign, update, sections=self.cost_sections)
            if found.people:  # what it costs: e-mails and text segments
                text += " " + found.sentence(lang)
        return self._done(a, title, text, update)

    async def _edit(
        self,
        a: Asker,
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
            raise invalid("nothing_to_edit", example=EXAMPLES["edit"])
        why = _reason(reason, EXAMPLES["edit"])
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

    async def _retract(self, a: Asker, update_id: object, reason: object) -> Reply:
        actor = a.ctx.actor
        self.admin.admins.require(actor, "retract updates")
        uid = parse_update_id(update_id)
        why = _reason(reason, EXAMPLES["retract"])
        after = await self.admin.retract(actor, uid, reason=why)
        async with self.store.read() as tx:
            holders = len(await tx.posted_subscriptions(uid))
        return self._done(
            a, "retracted_title", say(a.language, "retracted_body", count=holders), after
        )

    async def _approve(self, a: Asker, update_id: object) -> Reply:
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

    def _done(self, a: Asker, title_key: str, text: str, update: Update) -> Reply:
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


def _update_text(headline: object, body: object, next_step: object) -> UpdateText:
    """Typed update text, checked here so the person reads the problem in their language."""
    return check_update_text(headline, body, next_step)


def _missing_headline(language: str) -> InvalidInput:
    return in_every_language(
        InvalidInput,
        lambda lang: say(
            lang,
            "missing_language_headline",
            name=i18n.language_name(language, lang),
            language=language,
        ),
    )


def _other_text(value: object, language: str) -> UpdateText:
    if isinstance(value, UpdateText):
        return _update_text(value.headline, value.body, value.next_step)
    if isinstance(value, Mapping):
        if not clean_text(value.get("headline") or ""):
            raise _missing_headline(language)
        return _update_text(
            value.get("headline"), value.get("body", ""), value.get("next_step", "")
        )
    raise _missing_headline(language)


def _reason(value: object, example: str) -> str:
    return check_reason(value, example)


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
