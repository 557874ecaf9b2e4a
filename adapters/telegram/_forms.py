"""Admin forms in a private chat: Telegram's answer to Discord's and Slack's modals.

`/post` alone asks for the status (buttons), the headline, the details and the next step (in
the admin's own language when the campaign has it), then the same in each of the campaign's
other languages (each optional: /skip leaves those members the first wording), and the
urgency (buttons); then it shows the update exactly as members will see it in each language
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

from adapters.telegram._words import word
from bot.ports import (
    HEADLINE_MAX,
    NEXT_STEP_MAX,
    REASON_MAX,
    CommandContext,
    OutboundMessage,
    PluginContext,
    Reply,
    Status,
    Update,
    UpdateState,
    UpdateText,
    Urgency,
    i18n,
    say,
    update_message,
    wants,
)

KIND = "telegram-form"
# What an edit or a retraction picks from: the newest updates not already retracted.
LIVE_STATES = frozenset(
    {UpdateState.PUBLISHED, UpdateState.SCHEDULED, UpdateState.PENDING_APPROVAL}
)
BODY_MAX = 3500  # what one Telegram message can carry back in a preview
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
        async with self.ctx.store.write() as tx:
            form = await tx.take_draft(KIND, token_for(chat_id))
            if form is not None:  # read without using it up: put it back as it was
                await tx.keep_draft(KIND, token_for(chat_id), form, self.ctx.clock())
        return form

    async def _keep(self, chat_id: int, form: Mapping[str, Any]) -> None:
        async with self.ctx.store.write() as tx:
            await tx.keep_draft(KIND, token_for(chat_id), form, self.ctx.clock())

    async def _take(self, chat_id: int) -> dict[str, Any] | None:
        async with self.ctx.store.write() as tx:
            return await tx.take_draft(KIND, token_for(chat_id))

    # ------------------------------------------------------------------ opening

    async def open(self, chat_id: int, user_id: int, action: str, args: str, lang: str) -> Prompt:
        """Start the form for `action` (post, edit, retract, approve) in this private chat."""
        form: dict[str, Any] = {
            "serial": secrets.token_hex(4),
            "action": action,
            "user": user_id,
            "lang": lang,
        }
        if action == "post":
            form["step"] = "status"
            await self._keep(chat_id, form)
            return Prompt(word(lang, "pick_status"), self._status_buttons(form))
        chosen = _update_id(args)
        if chosen is not None:
            return await self._picked(chat_id, form, chosen)
        now = self.ctx.clock()
        if action == "approve":
            async with self.ctx.store.read() as tx:
                choices = await tx.pending_approval(now)
        else:
            choices = await self.commands.recent_updates(10, LIVE_STATES)
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
        async with self.ctx.store.read() as tx:
            update = await tx.get_update(update_id, self.ctx.clock())
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
        current = update.text(self._text_language(lang)).headline
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
        if step == "new_body":
            return Prompt(word(lang, "ask_new_body"), cancel)
        if step == "reason":
            return Prompt(word(lang, "ask_reason_edit"), cancel)
        update = None
        if "update_id" in form:
            async with self.ctx.store.read() as tx:
                update = await tx.get_update(int(form["update_id"]), self.ctx.clock())
            if update is None:
                await self._take(chat_id)
                return Prompt(say(lang, "no_update", id=form["update_id"]))
        return await self._preview(form, update)

    async def _preview(self, form: Mapping[str, Any], update: Update | None) -> Prompt:
        """The update as members will see it, and the buttons that go ahead or cancel."""
        lang = str(form["lang"])
        serial = form["serial"]
        now = self.ctx.clock()
        action = form["action"]
        cancel = (word(lang, "button_cancel"), f"f:{serial}:no")
        if action == "post":
            texts = self._texts(form)
            draft = Update(
                id=0,
                status=Status(form["status"]),
                urgency=Urgency(form["urgency"]),
                texts=texts,
                author="preview",
                created_at=now,
                state=UpdateState.PUBLISHED,
                published_at=now,
            )
            # The admin's own language first, then each other wording as its readers see it.
            wordings = tuple(
                replace(update_message(draft, code, self.ctx.campaign), url=None, links=())
                for code in texts
            )
            intro = word(lang, "preview_post", count=await self.audience(form))
            go = [(word(lang, "button_post"), f"f:{serial}:ok"), cancel]
            return Prompt(intro, [go], wordings)
        assert update is not None
        if action == "edit":
            text_lang = self._text_language(lang)
            old = update.texts.get(text_lang) or update.text(text_lang)
            edited = replace(
                update,
                texts={
                    **update.texts,
                    text_lang: UpdateText(
                        form.get("new_headline") or old.headline,
                        form.get("new_body") or old.body,
                        old.next_step,
                    ),
                },
                revision=update.revision + 1,
            )
            shown = update_message(edited, lang, self.ctx.campaign)
            go = [
                (word(lang, "button_save"), f"f:{serial}:ok"),
                (word(lang, "button_correct"), f"f:{serial}:okc"),
            ]
            intro = word(lang, "preview_edit", id=update.id, reason=form.get("reason", ""))
            return Prompt(intro, [go, [cancel]], (shown,))
        if action == "retract":
            gone = replace(
                update,
                state=UpdateState.RETRACTED,
                retraction_reason=form.get("reason", ""),
                retracted_at=now,
            )
            shown = update_message(gone, lang, self.ctx.campaign)
            go = [(word(lang, "button_retract"), f"f:{serial}:ok"), cancel]
            return Prompt(word(lang, "preview_retract", id=update.id), [go], (shown,))
        shown = update_message(update, lang, self.ctx.campaign)
        go = [(word(lang, "button_approve"), f"f:{serial}:ok"), cancel]
        return Prompt(word(lang, "preview_approve", id=update.id), [go], (shown,))

    async def audience(self, form: Mapping[str, Any]) -> int:
        """How many channels a posted draft would reach."""
        now = self.ctx.clock()
        probe = Update(
            id=0,
            status=Status(form["status"]),
            urgency=Urgency(form["urgency"]),
            texts={self.ctx.campaign.default_language: UpdateText("x")},
            author="",
            created_at=now,
            state=UpdateState.PUBLISHED,
        )
        async with self.ctx.store.read() as tx:
            return sum(1 for s in await tx.list_subscriptions() if wants(s, probe))

    async def _carry_out(
        self, ctx: CommandContext, form: Mapping[str, Any], *, correction: bool
    ) -> Reply:
        c = self.commands
        action = form["action"]
        if action == "post":
            main = self._text_language(str(form["lang"]))
            others = {
                code: {"headline": t.headline, "body": t.body, "next_step": t.next_step}
                for code, t in self._texts(form).items()
                if code != main
            }
            return await c.post(
                ctx,
                form["status"],
                form["headline"],
                form.get("body", ""),
                form.get("next_step", ""),
                form.get("urgency", "routine"),
                texts=others,
                language=main,
            )
        if action == "edit":
            return await c.edit(
                ctx,
                int(form["update_id"]),
                headline=form.get("new_headline") or None,
                body=form.get("new_body") or None,
                reason=form.get("reason", ""),
                correction=correction,
                language=self._text_language(str(form["lang"])),
            )
        if action == "retract":
            return await c.retract(ctx, int(form["update_id"]), form.get("reason", ""))
        return await c.approve(ctx, int(form["update_id"]))

    # ------------------------------------------------------------------ helpers

    def _text_language(self, lang: str) -> str:
        campaign = self.ctx.campaign
        return lang if lang in campaign.languages else campaign.default_language

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
        return [*steps, "urgency", "confirm"]

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
