"""Admin forms in a private chat: Telegram's answer to Discord's and Slack's modals.

`/post` alone asks for the status (buttons), the headline, the details and the next step (in
the admin's own language when the campaign has it), then the same in each of the campaign's
other languages (each optional: /skip leaves those members the first wording), and the
urgency (buttons), and, in a campaign with sites, whom it is for (everyone or a group as
buttons, site codes typed); then it shows the update exactly as members will see it in each language
written, with **Post** and **Cancel**; nothing is sent before Post. `/edit`, `/retract` and
`/approve` alone offer the recent updates (or those awaiting approval) as buttons, ask what
they need, and preview before anything changes. Typed with their arguments
(`/post strike_on "Headline"`), the commands run at once, as on Slack.

The form lives in the store (`drafts`, under the chat's own token), so the next message may
land on any instance. Confirming *takes* the draft, so a double tap or a replayed update
changes things once. What a confirmation does is an ordinary `bot.commands` call.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from adapters.telegram._settings import NAME
from adapters.telegram._words import word
from bot.ports import (
    HEADLINE_MAX,
    NEXT_STEP_MAX,
    REASON_MAX,
    Action,
    Actor,
    Audience,
    CommandContext,
    OutboundMessage,
    PluginContext,
    Problems,
    Proposal,
    Reply,
    Status,
    TextPatch,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    i18n,
    local_zone,
    say,
)

KIND = "telegram-form"
# What an edit or a retraction picks from: the newest updates not already retracted.
LIVE_STATES = frozenset(
    {UpdateState.PUBLISHED, UpdateState.SCHEDULED, UpdateState.PENDING_APPROVAL}
)
BODY_MAX = 3500  # what one Telegram message can carry back in a preview
GROUP_BUTTONS = 12  # groups offered as buttons at the audience step; sites are typed
Buttons = Sequence[Sequence[tuple[str, str]]]  # rows of (label, callback data)


@dataclass(frozen=True, slots=True)
class Prompt:
    """What to show next: text (plain, or HTML already escaped), optional buttons."""

    text: str = ""
    buttons: Buttons = ()
    preview: tuple[OutboundMessage, ...] = ()
    reply: Reply | None = None


Run = Callable[[CommandContext, Mapping[str, Any]], Awaitable[Reply]]


def token_for(chat_id: int) -> str:
    return f"tgform{chat_id}"


class Forms:
    """The steps of each form, from what the admin sent to what to show next."""

    def __init__(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        self.commands = ctx.commands

    # ------------------------------------------------------------------ storage

    async def _load(self, chat_id: int) -> dict[str, Any] | None:
        return await self.ctx.desk.form(KIND, token_for(chat_id))

    async def _keep(self, chat_id: int, form: Mapping[str, Any]) -> None:
        await self.ctx.desk.keep_form(KIND, token_for(chat_id), form)

    async def _take(self, chat_id: int) -> dict[str, Any] | None:
        return await self.ctx.desk.form(KIND, token_for(chat_id), take=True)

    # ------------------------------------------------------------------ opening

    async def open(self, chat_id: int, actor: Actor, action: str, args: str, lang: str) -> Prompt:
        """Start the form for `action` (post, edit, retract, approve) in this private chat,
        for `actor` (an admin: the form keeps who they are for the desk's preview)."""
        form: dict[str, Any] = {
            "serial": secrets.token_hex(4),
            "action": action,
            "user": int(actor.user_id),
            "name": actor.display_name,
            "roles": sorted(actor.roles),
            "chat": chat_id,
            "lang": lang,
        }
        if action == "post":
            form["step"] = "status"
            groups, _ = await self.commands.places()
            # The audience step's buttons: everyone, then each group (a site is typed).
            form["groups"] = [[g.code, g.name(lang)] for g in groups[:GROUP_BUTTONS]]
            form["has_sites"] = bool(groups)
            await self._keep(chat_id, form)
            return Prompt(word(lang, "pick_status"), self._status_buttons(form))
        chosen = _update_id(args)
        if chosen is not None:
            return await self._picked(chat_id, form, chosen)
        states = {UpdateState.PENDING_APPROVAL} if action == "approve" else LIVE_STATES
        choices = await self.commands.recent_updates(10, states)
        if not choices:
            verb = i18n.Words("command_names")[lang][action]
            return Prompt(word(lang, "nothing_to_pick", action=verb))
        form["step"] = "pick"
        await self._keep(chat_id, form)
        rows = [[(_label(u, lang), f"f:{form['serial']}:u:{u.id}")] for u in choices[:10]]
        return Prompt(word(lang, f"pick_update_{action}"), [*rows, self._cancel_row(form)])

    # ------------------------------------------------------------------ answers

    async def answer_text(self, chat_id: int, user_id: int, text: str) -> Prompt | None:
        """A message (not a command) in a private chat: the answer to the current question.
        None when no form is open."""
        form = await self._load(chat_id)
        if form is None or form.get("user") != user_id:
            return None
        lang = str(form.get("lang") or i18n.source_language())
        step, _ = _field(str(form.get("step")))
        value = " ".join(text.split()) if step != "body" and step != "new_body" else text.strip()
        if step == "audience":  # site codes typed
            try:
                read = self.ctx.desk.read(Action.POST, texts={}, sites=value[:2000])
            except Problems as exc:
                return Prompt(exc.localized(lang))
            form["audience"] = {"sites": list(read.audience.sites), "groups": []}
            return await self._next(chat_id, form)
        limits = {
            "headline": HEADLINE_MAX,
            "new_headline": HEADLINE_MAX,
            "body": BODY_MAX,
            "new_body": BODY_MAX,
            "next_step": NEXT_STEP_MAX,
            "reason": REASON_MAX,
        }
        if step not in limits:
            return Prompt(word(lang, "no_form"))
        if not value:
            return Prompt(word(lang, "empty"))
        if len(value) > limits[step]:
            return Prompt(word(lang, "too_long", length=len(value), max=limits[step]))
        _store(form, value)
        return await self._next(chat_id, form)

    async def skip(self, chat_id: int, user_id: int) -> Prompt | None:
        form = await self._load(chat_id)
        if form is None or form.get("user") != user_id:
            return None
        step, language = _field(str(form.get("step")))
        if step == "headline" and language == self.ctx.campaign.default_language:
            return self._ask_other(form, step, language)  # every post needs the main language
        if step in ("body", "next_step", "new_headline", "new_body") or language:
            _store(form, "")
            return await self._next(chat_id, form)
        if step == "audience":  # for everyone
            form["audience"] = None
            return await self._next(chat_id, form)
        return Prompt(word(str(form.get("lang") or i18n.source_language()), "empty"))

    async def cancel(self, chat_id: int) -> bool:
        return await self._take(chat_id) is not None

    async def button(self, chat_id: int, user_id: int, data: str, ctx: CommandContext) -> Prompt:
        """A tap on one of the form's buttons: `f:<serial>:<kind>[:<value>]`."""
        parts = data.split(":")
        lang = i18n.pick(ctx.locale or self.ctx.campaign.default_language)
        form = await self._load(chat_id)
        if form is None or len(parts) < 3 or form.get("serial") != parts[1]:
            return Prompt(word(lang, "expired", command="/post"))
        lang = str(form.get("lang", lang))
        if form.get("user") != user_id:
            return Prompt(word(lang, "not_yours"))
        kind, value = parts[2], parts[3] if len(parts) > 3 else ""
        if kind == "no":
            await self._take(chat_id)
            return Prompt(word(lang, "cancelled"))
        if kind == "s" and form.get("step") == "status" and value in Status.__members__.values():
            form["status"] = value
            return await self._next(chat_id, form)
        if kind == "g" and form.get("step") == "urgency" and value in Urgency.__members__.values():
            form["urgency"] = value
            return await self._next(chat_id, form)
        if kind == "a" and form.get("step") == "audience":
            known = {code for code, _ in form.get("groups", [])}
            form["audience"] = {"sites": [], "groups": [value]} if value in known else None
            return await self._next(chat_id, form)
        if kind == "u" and form.get("step") == "pick" and value.isdigit():
            return await self._picked(chat_id, form, int(value))
        if kind in ("ok", "okc") and form.get("step") == "confirm":
            taken = await self._take(chat_id)
            if taken is None or taken.get("serial") != form.get("serial"):
                return Prompt(word(lang, "expired", command="/post"))
            return Prompt(reply=await self._carry_out(ctx, taken, correction=kind == "okc"))
        return Prompt(word(lang, "expired", command="/post"))

    # ------------------------------------------------------------------ the steps

    async def _picked(self, chat_id: int, form: dict[str, Any], update_id: int) -> Prompt:
        lang = str(form["lang"])
        update, _ = await self.ctx.desk.current(update_id)
        if update is None or update.retracted:
            await self._take(chat_id)
            return Prompt(say(lang, "no_update", id=update_id))
        form["update_id"] = update.id
        if form["action"] == "approve":
            form["step"] = "confirm"
            await self._keep(chat_id, form)
            return await self._preview(form, update)
        if form["action"] == "retract":
            form["step"] = "reason"
            await self._keep(chat_id, form)
            return Prompt(word(lang, "ask_reason_retract"), [self._cancel_row(form)])
        form["step"] = "new_headline"
        await self._keep(chat_id, form)
        current = update.text(self._edit_language(form, update)).headline
        return Prompt(
            word(lang, "ask_new_headline", id=update.id, current=current), [self._cancel_row(form)]
        )

    async def _next(self, chat_id: int, form: dict[str, Any]) -> Prompt:
        """Move the form on from the step just answered."""
        lang = str(form["lang"])
        order = self._order(form)
        current = str(form["step"])
        # A language step no longer in the campaign (its languages changed meanwhile): on
        # to the urgency, the wording written so far kept.
        after = order.index(current) if current in order else order.index("urgency") - 1
        step = order[min(after + 1, len(order) - 1)]
        form["step"] = step
        await self._keep(chat_id, form)
        cancel = [self._cancel_row(form)]
        field, language = _field(step)
        if language:
            return self._ask_other(form, field, language)
        if step == "headline":
            return Prompt(word(lang, "ask_headline", max=HEADLINE_MAX), cancel)
        if step == "body":
            return Prompt(word(lang, "ask_body"), cancel)
        if step == "next_step":
            return Prompt(word(lang, "ask_next_step"), cancel)
        if step == "urgency":
            rows = [
                [(i18n.urgency_label(u, lang), f"f:{form['serial']}:g:{u.value}") for u in Urgency]
            ]
            return Prompt(word(lang, "pick_urgency"), rows + cancel)
        if step == "audience":
            serial = form["serial"]
            rows = [[(word(lang, "button_everyone"), f"f:{serial}:a:")]]
            rows += [[(name, f"f:{serial}:a:{code}")] for code, name in form.get("groups", [])]
            return Prompt(word(lang, "pick_audience"), rows + cancel)
        if step == "new_body":
            return Prompt(word(lang, "ask_new_body"), cancel)
        if step == "reason":
            return Prompt(word(lang, "ask_reason_edit"), cancel)
        update = None
        if "update_id" in form:
            update, _ = await self.ctx.desk.current(int(form["update_id"]))
            if update is None:
                await self._take(chat_id)
                return Prompt(say(lang, "no_update", id=form["update_id"]))
        return await self._preview(form, update)

    async def _preview(self, form: dict[str, Any], update: Update | None) -> Prompt:
        """The desk's preview of what the form asks for, as members will see it, and the
        buttons that go ahead or cancel; the desk's draft token is kept in the form."""
        lang = str(form["lang"])
        serial = form["serial"]
        cancel = (word(lang, "button_cancel"), f"f:{serial}:no")
        action = str(form["action"])
        preview = await self.ctx.desk.preview(self._actor(form), self._proposal(form, update))
        if not preview.ready:
            return Prompt("\n".join(preview.problems_in(lang).values()), [[cancel]])
        form["token"] = preview.token
        await self._keep(int(form["chat"]), form)
        intro = preview.intro(lang, local_zone(None, self.ctx.campaign))
        shown = tuple(
            replace(preview.messages[code], url=None, links=()) for code in preview.shown(lang)
        )
        if action == "edit":
            go = [
                (word(lang, "button_save"), f"f:{serial}:ok"),
                (word(lang, "button_correct"), f"f:{serial}:okc"),
            ]
            return Prompt(intro, [go, [cancel]], shown[:1])
        key = {"post": "button_post", "retract": "button_retract", "approve": "button_approve"}
        return Prompt(intro, [[(word(lang, key[action]), f"f:{serial}:ok"), cancel]], shown)

    def _proposal(self, form: Mapping[str, Any], update: Update | None) -> Proposal:
        """What the form collected, in the desk's terms."""
        action = str(form["action"])
        if action == "post":
            texts = {
                code: TextPatch(t.headline, t.body, t.next_step)
                for code, t in self._texts(form).items()
            }
            return Proposal(
                Action.POST,
                texts=texts,
                status=Status(form["status"]),
                urgency=Urgency(form["urgency"]),
                audience=Audience.from_json(form.get("audience")),
            )
        assert update is not None
        if action == "edit":
            patch = TextPatch(form.get("new_headline") or None, form.get("new_body") or None)
            texts = {self._edit_language(form, update): patch} if patch != TextPatch() else {}
            return Proposal(
                Action.EDIT, update_id=update.id, texts=texts, reason=form.get("reason", "")
            )
        if action == "retract":
            return Proposal(Action.RETRACT, update_id=update.id, reason=form.get("reason", ""))
        return Proposal(Action.APPROVE, update_id=update.id)

    def _actor(self, form: Mapping[str, Any]) -> Actor:
        """The admin who opened the form, as they were checked then."""
        roles = frozenset(str(r) for r in form.get("roles", ()))
        return Actor(NAME, str(form["user"]), str(form.get("name", "")), roles)

    async def _carry_out(
        self, ctx: CommandContext, form: Mapping[str, Any], *, correction: bool
    ) -> Reply:
        """The admin tapped Post (Save, Save with a correction note, Retract, Approve)."""
        token = str(form.get("token") or "")
        if correction:  # the same edit, with a visible correction note
            desk = self.ctx.desk
            proposal = await desk.draft(ctx.actor, token)
            await desk.preview(ctx.actor, replace(proposal, action=Action.CORRECT), token=token)
        return await self.commands.confirm(ctx, token)

    # ------------------------------------------------------------------ helpers

    def _text_language(self, lang: str) -> str:
        campaign = self.ctx.campaign
        return lang if lang in campaign.languages else campaign.default_language

    def _edit_language(self, form: Mapping[str, Any], update: Update) -> str:
        """The wording an edit changes: the admin's own language where the update has it,
        else the campaign's main language."""
        own = self._text_language(str(form["lang"]))
        return own if own in update.texts else self.ctx.campaign.default_language

    def _ask_other(self, form: Mapping[str, Any], field: str, language: str) -> Prompt:
        """Ask for another language's wording; the campaign's main language cannot be
        skipped (an admin writing in Spanish on an English-first campaign adds English)."""
        lang = str(form["lang"])
        name = i18n.language_name(language, lang)
        cancel = [self._cancel_row(form)]
        if field != "headline":
            return Prompt(word(lang, f"ask_other_{field}", language=name), cancel)
        key = (
            "ask_main_headline"
            if language == self.ctx.campaign.default_language
            else "ask_other_headline"
        )
        return Prompt(word(lang, key, language=name, max=HEADLINE_MAX), cancel)

    def _order(self, form: Mapping[str, Any]) -> list[str]:
        """The form's steps. A post asks each of the campaign's other languages for its
        wording: the details and the next step only where the first wording has them, and
        nothing more in a language whose headline was skipped."""
        action = str(form["action"])
        if action != "post":
            return {
                "edit": ["pick", "new_headline", "new_body", "reason", "confirm"],
                "retract": ["pick", "reason", "confirm"],
                "approve": ["pick", "confirm"],
            }[action]
        main = self._text_language(str(form["lang"]))
        steps = ["status", "headline", "body", "next_step"]
        written = form.get("texts", {})
        for code in self.ctx.campaign.languages:
            if code == main:
                continue
            steps.append(f"headline:{code}")
            if code in written and written[code].get("headline"):
                steps += [f"{name}:{code}" for name in ("body", "next_step") if form.get(name)]
        audience = ["audience"] if form.get("has_sites") else []
        return [*steps, "urgency", *audience, "confirm"]

    def _texts(self, form: Mapping[str, Any]) -> dict[str, UpdateText]:
        """The post's wordings by language, the admin's own first; a language whose
        headline was skipped is left out (its readers get the first wording)."""
        main = self._text_language(str(form["lang"]))
        first = UpdateText(form["headline"], form.get("body", ""), form.get("next_step", ""))
        texts = {main: first}
        for code, t in form.get("texts", {}).items():
            if t.get("headline"):
                texts[code] = UpdateText(t["headline"], t.get("body", ""), t.get("next_step", ""))
        return texts

    def _status_buttons(self, form: Mapping[str, Any]) -> list[list[tuple[str, str]]]:
        lang = str(form["lang"])
        buttons = [(i18n.status_label(s, lang), f"f:{form['serial']}:s:{s.value}") for s in Status]
        rows = [buttons[i : i + 2] for i in range(0, len(buttons), 2)]
        return [*rows, self._cancel_row(form)]

    def _cancel_row(self, form: Mapping[str, Any]) -> list[tuple[str, str]]:
        return [(word(str(form["lang"]), "button_cancel"), f"f:{form['serial']}:no")]


def _field(step: str) -> tuple[str, str]:
    """A step's field and, for another language's wording ("body:es"), that language."""
    field, _, language = step.partition(":")
    return field, language


def _store(form: dict[str, Any], value: str) -> None:
    """Keep the answer to the current step: another language's wording under `texts`."""
    field, language = _field(str(form["step"]))
    if language:
        form.setdefault("texts", {}).setdefault(language, {})[field] = value
    else:
        form[field] = value


def _label(update: Update, lang: str) -> str:
    marker = "" if update.state is UpdateState.PUBLISHED else f" [{update.state.value}]"
    text = f"#{update.id}{marker} · {update.text(lang).headline}"
    return text if len(text) <= 60 else text[:59] + "…"


def wants_form(action: str, args: str) -> bool:
    """`/post` alone opens the form; so do `/edit 12`, `/retract 12` and `/approve 12`.
    Typed with more arguments, a command runs at once."""
    words = args.split()
    if not words:
        return True
    return action != "post" and len(words) == 1 and _update_id(words[0]) is not None


def _update_id(value: str) -> int | None:
    text = value.strip().split(" ")[0].lstrip("#") if value.strip() else ""
    return int(text) if text.isdigit() and 0 < int(text) < 2**31 else None
