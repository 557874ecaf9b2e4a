"""What admins order, through `bot.editorial.admin.Admin`: subscribe and unsubscribe a channel,
post, edit, retract and approve updates. Each answers with a confirmation only the admin
sees, and a preview of the update as members will see it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, time
from typing import Any

from bot import i18n
from bot.audiences import parse_follows
from bot.commands._context import Asker, CommandContext, CommandsBase, Reply
from bot.editorial.desk import Action, Done, Problems, Proposal
from bot.editorial.parsing import (
    parse_briefing_time,
    parse_days,
    parse_flag,
    parse_language,
    parse_quiet_hours,
    parse_timezone,
    parse_update_id,
    parse_urgencies,
    valid_timezone,
)
from bot.editorial.rules import check_reason
from bot.i18n.sentences import invalid, not_found, say
from bot.messages.compose import update_message
from bot.models import (
    Audience,
    QuietHours,
    Site,
    SiteGroup,
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
        sites: str | Sequence[str] | None = None,
        groups: str | Sequence[str] | None = None,
    ) -> Reply:
        """Subscribe this channel, or change what it receives: only the settings given
        change. `briefing_time` "07:00" turns the morning briefing on, "off" turns it off;
        `quiet_hours` "22:00-06:00" or "off"; `briefing_days` "mon-fri", "daily"...;
        `sites` and `groups` (codes) are what it follows ("all": everything again)."""
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
                sites=sites,
                groups=groups,
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
        sites: str | Sequence[str] | None = None,
        groups: str | Sequence[str] | None = None,
    ) -> Reply:
        """Post an update now (or at `publish_at`). Times without an offset are in the
        asker's time zone. `headline`, `body` and `next_step` are in `language` (default:
        the campaign's first); `texts` holds other languages' wordings, by language;
        `sites` and `groups` (codes) address it to them only."""
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
                sites=sites,
                groups=groups,
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
        sites: object = None,
        groups: object = None,
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
        if sites is not None or groups is not None:
            changes["follows"] = parse_follows(sites, groups)
        saved = await self.admin.subscribe(ctx.actor, replace(base, **changes))
        return Reply(self._subscription_card(saved, a.language, await self._names(saved.follows)))

    async def _names(self, follows: Audience) -> tuple[Site | SiteGroup, ...]:
        """The sites and groups a subscription follows, for its card."""
        found: list[Site | SiteGroup] = []
        async with self.store.read() as tx:
            for code in follows.sites:
                found.extend([s] if (s := await tx.get_site(code)) else [])
            for code in follows.groups:
                found.extend([g] if (g := await tx.get_group(code)) else [])
        return tuple(found)

    def _subscription_card(
        self, sub: Subscription, lang: str, followed: Sequence[Site | SiteGroup] = ()
    ) -> OutboundMessage:
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
                Field(
                    say(lang, "setting_follows"),
                    i18n.format_list([f.name(lang) for f in followed], lang)
                    if followed
                    else say(lang, "follows_everything"),
                ),
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
        *,
        preview: bool = False,
        sites: object = None,
        groups: object = None,
    ) -> Reply:
        self.admin.admins.require(a.ctx.actor, "post updates")
        main = self.campaign.default_language
        if language is not None and str(language).strip():
            main = parse_language(language, self.campaign.languages)
        texts: dict[str, Mapping[str, object]] = {
            main: {"headline": headline, "body": body or "", "next_step": next_step or ""}
        }
        for code, value in (others if isinstance(others, Mapping) else {}).items():
            if parse_language(code, self.campaign.languages) == main:
                raise invalid("text_twice", language=main)
            texts[str(code)] = _wording(value)
        proposal = self.desk.read(
            Action.POST,
            texts=texts,
            status=status,
            urgency=urgency or "routine",
            publish_at=publish_at,
            next_step_at=next_step_at,
            zone=a.zone,
            sites=sites,
            groups=groups,
        )
        if preview:
            return await self._preview(a, proposal)
        return await self._commit(a, proposal)

    async def _preview(self, a: Asker, proposal: Proposal) -> Reply:
        """What posting would do, and the update as members will see it; nothing is kept."""
        shown = await self.desk.preview(a.ctx.actor, proposal, keep=False)
        if shown.problems:
            raise Problems(shown.problems)
        lang = a.language
        return Reply(
            OutboundMessage(
                title=say(lang, "preview_title"),
                body=shown.intro(lang, a.zone),
                language=lang,
            ),
            ephemeral=True,
            extra=tuple(shown.messages[code] for code in shown.shown(lang)),
        )

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
        texts: Mapping[str, Mapping[str, object]] | None = None,
    ) -> Reply:
        self.admin.admins.require(a.ctx.actor, "edit updates")
        given = {"headline": headline, "body": body, "next_step": next_step}
        wording: dict[str, Mapping[str, object]] = dict(texts or {})
        if any(v is not None for v in given.values()):
            code = language if language is not None and str(language).strip() else None
            wording[str(code or self.campaign.default_language)] = given
        if not wording and all(v is None for v in (status, urgency, next_step_at)):
            raise invalid("nothing_to_edit", example=EXAMPLES["edit"])
        why = _reason(reason, EXAMPLES["edit"])
        is_correction = parse_flag(correction if correction is not None else False)
        proposal = self.desk.read(
            Action.CORRECT if is_correction else Action.EDIT,
            update_id=parse_update_id(update_id),
            texts=wording,
            status=status,
            urgency=urgency,
            next_step_at=next_step_at,
            reason=why,
            zone=a.zone,
        )
        return await self._commit(a, proposal)

    async def _retract(self, a: Asker, update_id: object, reason: object) -> Reply:
        self.admin.admins.require(a.ctx.actor, "retract updates")
        uid = parse_update_id(update_id)
        why = _reason(reason, EXAMPLES["retract"])
        return await self._commit(a, self.desk.read(Action.RETRACT, update_id=uid, reason=why))

    async def _approve(self, a: Asker, update_id: object) -> Reply:
        self.admin.admins.require(a.ctx.actor, "approve updates")
        proposal = self.desk.read(Action.APPROVE, update_id=parse_update_id(update_id))
        return await self._commit(a, proposal)

    async def places(self) -> tuple[list[SiteGroup], list[Site]]:
        """Every group of sites and every site, for a form's audience picker."""
        async with self.store.read() as tx:
            return await tx.list_groups(), await tx.list_sites()

    async def read(self, ctx: CommandContext, action: Action, **given: Any) -> Proposal:
        """What a form collected, as the desk's proposal: `Desk.read` with times read in
        the asker's zone, as a typed command reads them."""
        asker = await self._asker(ctx)
        return self.desk.read(action, zone=asker.zone, **given)

    async def confirm(self, ctx: CommandContext, token: str) -> Reply:
        """Carry out the desk's draft behind `token` (a form's Post, Save or Retract), and
        answer as the typed command would."""

        async def answer(a: Asker) -> Reply:
            return self.outcome_reply(a, await self.desk.confirm(a.ctx.actor, token))

        return await self._run(ctx, "confirm", answer)

    async def reply_for(self, ctx: CommandContext, outcome: Done) -> Reply:
        """The answer a typed command gives for what the desk did (`outcome`), for a surface
        that confirmed through the desk itself to show the update next (the web desk)."""

        async def answer(a: Asker) -> Reply:
            return self.outcome_reply(a, outcome)

        return await self._run(ctx, "confirm", answer)

    async def _commit(self, a: Asker, proposal: Proposal) -> Reply:
        return self.outcome_reply(a, await self.desk.commit(a.ctx.actor, proposal))

    # -- helpers -------------------------------------------------------------------

    def outcome_reply(self, a: Asker, outcome: Done) -> Reply:
        """An admin's confirmation of what the desk did, with the update as members see it."""
        lang, update, action = a.language, outcome.update, outcome.action
        announcing = action in (Action.POST, Action.APPROVE)
        if action is Action.POST and update.state is UpdateState.PENDING_APPROVAL:
            title, text = "pending_title", say(lang, "pending_body", id=update.id)
        elif announcing and update.state is UpdateState.SCHEDULED:
            when = (update.publish_at or self.clock()).astimezone(a.zone)
            title = "scheduled_title" if action is Action.POST else "approved_title"
            key = "scheduled_body" if action is Action.POST else "approved_scheduled_body"
            text = say(lang, key, when=i18n.format_datetime(when, lang))
        elif announcing:
            title = "posted_title" if action is Action.POST else "approved_title"
            key = "posted_body" if action is Action.POST else "approved_body"
            text = say(lang, key, count=outcome.copies)
            if outcome.reach is not None and outcome.reach.people:
                text += " " + outcome.reach.sentence(lang)  # what it costs: e-mails, texts
        else:
            title, key = {
                Action.EDIT: ("edited_title", "edited_body"),
                Action.CORRECT: ("edited_title", "corrected_body"),
                Action.RETRACT: ("retracted_title", "retracted_body"),
            }[action]
            text = say(lang, key, count=outcome.copies)
        return self._done(a, title, text, update)

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


def _wording(value: object) -> Mapping[str, object]:
    """Another language's wording as the desk reads it: an UpdateText, or a mapping with
    any of headline, body and next_step."""
    if isinstance(value, UpdateText):
        return {"headline": value.headline, "body": value.body, "next_step": value.next_step}
    if isinstance(value, Mapping):
        return {k: value.get(k) for k in ("headline", "body", "next_step")}
    return {"headline": None}


def _reason(value: object, example: str) -> str:
    return check_reason(value, example)


def _days_text(days: frozenset[int], lang: str) -> str:
    if days == frozenset(range(7)):
        return say(lang, "every_day")
    if days == frozenset(range(5)):
        return say(lang, "weekdays")
    names = say(lang, "day_names").split(",")
    return ", ".join(names[d] for d in sorted(days))
