"""The web desk (`/desk`): the comms team posts, corrects, retracts and approves updates from
a phone, and watches them go out.

A translator over the editorial desk (`ctx.desk`, docs/desk.md), like Slack's forms: a
form's fields become a `Proposal` (`_desk_view.read_form`), the desk's `Preview` becomes a
page (the update as each surface will show it, with reach per surface, and the problems
under the fields they are about), and its Confirm button carries only the draft's token.
What the desk did is said in the commands' own sentences (`Commands.reply_for`). Every
action is the signed-in person's (`web:<address>` in the audit log). Who may sign in, and
the checks every form passes: `_desk_auth`. Watching delivery, demands, translations,
sign-ups and briefings: `_desk_watch`.
"""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

from bot.ports import (
    Action,
    CommandContext,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    Preview,
    Problems,
    Proposal,
    SignIn,
    StrikebotError,
    UpdateState,
    i18n,
)

from . import _desk_sign_in, _desk_sites, _desk_watch
from ._app import STATE
from ._desk_auth import (
    DESK,
    Form,
    Person,
    WebDesk,
    desk_error,
    desk_of,
    guarded,
    render,
    see_other,
    words,
)
from ._desk_view import (
    cards,
    choices,
    copies_by_platform,
    progress_view,
    read_form,
    state_label,
    update_id_of,
    update_summary,
    values_of_form,
    values_of_proposal,
    values_of_update,
    when,
    zone,
)

SAID = "desk-web-said"  # what confirming did, kept for the page the browser is sent to


def add_routes(app: web.Application, door: SignIn) -> None:
    """Mount the desk on `app` (the web plugin's `mount`)."""
    app[DESK] = WebDesk(app[STATE].ctx, door)
    r = app.router
    r.add_get("/desk", guarded(_home))
    r.add_get("/desk/new", guarded(_new))
    r.add_post("/desk/preview", guarded(_preview_post))
    r.add_post("/desk/confirm", guarded(_confirm))
    r.add_post("/desk/cancel", guarded(_cancel))
    r.add_get("/desk/updates/{id}", guarded(_update_page))
    r.add_post("/desk/updates/{id}/edit", guarded(_preview_edit))
    r.add_post("/desk/updates/{id}/retract", guarded(_preview_retract))
    r.add_post("/desk/updates/{id}/approve", guarded(_preview_approve))
    _desk_sign_in.add_routes(app)
    _desk_watch.add_routes(app)
    _desk_sites.add_routes(app)


def _base(person: Person, **context: Any) -> dict[str, Any]:
    return {"lang": person.lang, "person": person, "csrf": person.csrf, **context}


# -- the first screen -------------------------------------------------------------------


async def _home(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    board = ctx.board
    lang = person.lang
    waiting = [update_summary(u, ctx.campaign, lang) for u in await board.waiting()]
    recent = [update_summary(u, ctx.campaign, lang) for u in await board.recent()]
    stale = len(await board.stale())
    return render(request, "home.html", _base(person, waiting=waiting, recent=recent, stale=stale))


# -- writing an update ------------------------------------------------------------------


async def _new(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    values = values_of_update(None, ctx.campaign)
    values["status"] = (await _current_status(request)) or ""
    token = request.query.get("draft", "")
    if token:
        values = values_of_proposal(await ctx.desk.draft(person.actor, token), None, ctx.campaign)
    return await _compose(request, person, values, {})


async def _current_status(request: web.Request) -> str | None:
    status = await desk_of(request).ctx.desk.current_status()
    return None if status is None else status.value


async def _compose(
    request: web.Request,
    person: Person,
    values: dict[str, Any],
    problems: dict[str, str],
    *,
    status: int = 200,
) -> web.Response:
    """The form; "Who it is for" only when the campaign has sites (or a draft named some)."""
    ctx = desk_of(request).ctx
    if values.get("audience") == "":
        async with ctx.reads() as tx:
            if not await tx.place_count():
                values = {**values, "audience": None}
    context = _base(
        person,
        values=values,
        problems=problems,
        main=ctx.campaign.default_language,
        langs=[
            {"code": c, "name": i18n.language_name(c, person.lang)} for c in ctx.campaign.languages
        ],
        zone=ctx.campaign.timezone,
        **choices(person.lang),
    )
    return render(request, "compose.html", context, status=status)


async def _preview_post(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    try:
        proposal = read_form(ctx, form, None)
    except Problems as exc:
        problems = exc.localized_problems(person.lang)
        values = values_of_form(form, ctx.campaign)
        return await _compose(request, person, values, problems, status=422)
    shown = await ctx.desk.preview(person.actor, proposal)
    if shown.problems:
        values = values_of_form(form, ctx.campaign)
        return await _compose(request, person, values, shown.problems_in(person.lang), status=422)
    return await _preview_page(request, person, shown)


async def _preview_page(request: web.Request, person: Person, shown: Preview) -> web.Response:
    """The desk's preview: what confirming will do, the update as each surface will show
    it, and the buttons that confirm, change or cancel the draft."""
    ctx = desk_of(request).ctx
    lang = person.lang
    action = shown.proposal.action
    copies = None
    if action in (Action.EDIT, Action.CORRECT, Action.RETRACT) and shown.before is not None:
        copies = copies_by_platform(await ctx.board.progress(shown.before.id))
    w = words(lang)
    missing = [i18n.language_name(code, lang) for code in shown.missing]
    context = _base(
        person,
        shown=shown,
        action=action.value,
        intro=shown.intro(lang, zone(ctx.campaign)),
        cards=cards(ctx, shown, lang, copies),
        missing=w["missing"].format(
            languages=i18n.format_list(missing, lang),
            main=i18n.language_name(ctx.campaign.default_language, lang),
        )
        if missing and action is Action.POST
        else "",
        update_id=shown.proposal.update_id,
        confirm=w[f"confirm_{action.value}"],
    )
    return render(request, "preview.html", context)


async def _confirm(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    done = await ctx.desk.confirm(person.actor, form.get("token", ""))
    asked = CommandContext(
        platform=ctx.plugin.name,
        actor=person.actor,
        workspace="desk",
        channel="desk",
        locale=person.lang,
        timezone=ctx.campaign.timezone,
    )
    reply = await ctx.commands.reply_for(asked, done)
    # Said on the update's page after a redirect, so a reload shows the page, not a resend.
    said = secrets.token_urlsafe(12)
    message = reply.message
    await ctx.desk.keep_form(
        SAID, said, {"actor": person.actor.id, "title": message.title, "body": message.body}
    )
    return see_other(f"/desk/updates/{done.update.id}?said={said}")


async def _cancel(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    await desk_of(request).ctx.desk.cancel(person.actor, form.get("token", ""))
    back = form.get("back", "")
    return see_other(back if back.startswith("/desk/updates/") else "/desk")


# -- one update -------------------------------------------------------------------------


async def _update_page(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    update_id = update_id_of(request)
    token = request.query.get("draft", "")
    said = request.query.get("said", "")
    reply = None
    if said:
        kept = await desk_of(request).ctx.desk.form(SAID, said, take=True)
        if kept is not None and kept.get("actor") == person.actor.id:
            reply = {"title": str(kept["title"]), "body": str(kept["body"])}
    values = None
    if token:
        ctx = desk_of(request).ctx
        proposal = await ctx.desk.draft(person.actor, token)
        current, _ = await ctx.desk.current(update_id)
        values = values_of_proposal(proposal, current, ctx.campaign)
    return await _update_view(request, person, update_id, values=values, reply=reply)


async def _update_view(
    request: web.Request,
    person: Person,
    update_id: int,
    *,
    reply: dict[str, str] | None = None,
    values: dict[str, Any] | None = None,
    problems: dict[str, str] | None = None,
    retract_reason: str = "",
    status: int = 200,
) -> web.Response:
    """An update's own page: as it stands, how far it has gone (live), and what can be
    done with it (approve, correct or edit, retract, confirm a translation)."""
    ctx = desk_of(request).ctx
    lang = person.lang
    update, stale = await ctx.desk.current(update_id)
    if update is None:
        raise desk_error(NotFound, "no_update", id=update_id)
    progress = await ctx.board.progress(update_id)
    context = _base(
        person,
        update=update,
        summary=update_summary(update, ctx.campaign, lang),
        state=state_label(update, ctx.campaign, lang),
        texts=[
            {"lang": code, "name": i18n.language_name(code, lang), "text": text}
            for code, text in update.texts.items()
        ],
        next_at=when(update.next_step_at, ctx.campaign, lang),
        progress=progress_view(ctx, progress, lang),
        reply=reply,
        values=values or values_of_update(update, ctx.campaign),
        problems=problems or {},
        retract_reason=retract_reason,
        stale=_desk_watch.stale_view(ctx, stale, lang, update),
        pending=update.state is UpdateState.PENDING_APPROVAL,
        own=update.author == person.actor.id,
        retracted=update.retracted,
        zone=ctx.campaign.timezone,
        main=ctx.campaign.default_language,
        langs=[{"code": c, "name": i18n.language_name(c, lang)} for c in ctx.campaign.languages],
        **choices(lang),
    )
    return render(request, "update.html", context, status=status)


async def _preview_edit(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    update_id = update_id_of(request)
    before, _ = await ctx.desk.current(update_id)
    if before is None:
        raise desk_error(NotFound, "no_update", id=update_id)
    values = values_of_form(form, ctx.campaign)
    try:
        proposal = read_form(ctx, form, before)
    except Problems as exc:
        problems = exc.localized_problems(person.lang)
        return await _update_view(request, person, update_id, values=values, problems=problems,
                                  status=422)  # fmt: skip
    return await _preview_or_problems(request, person, proposal, values=values)


async def _preview_retract(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    update_id = update_id_of(request)
    reason = form.get("retract_reason", "")
    proposal = Proposal(Action.RETRACT, update_id=update_id, reason=reason)
    return await _preview_or_problems(request, person, proposal, retract_reason=reason)


async def _preview_approve(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    proposal = Proposal(Action.APPROVE, update_id=update_id_of(request))
    return await _preview_or_problems(request, person, proposal)


async def _preview_or_problems(
    request: web.Request,
    person: Person,
    proposal: Proposal,
    *,
    values: dict[str, Any] | None = None,
    retract_reason: str = "",
) -> web.Response:
    """The preview of an action on an update, or the update's page again with the problems
    under the fields of the form they are about (a retraction's reason, an edit's texts;
    an approval's under its button)."""
    ctx = desk_of(request).ctx
    shown = await ctx.desk.preview(person.actor, proposal)
    assert proposal.update_id is not None
    if not shown.problems:
        return await _preview_page(request, person, shown)
    problems = shown.problems_in(person.lang)
    if proposal.action is Action.RETRACT:
        problems = {f"retract_{k}": v for k, v in problems.items()}
    elif proposal.action is Action.APPROVE:
        problems = {f"approve_{k}": v for k, v in problems.items()}
    return await _update_view(
        request, person, proposal.update_id, values=values, problems=problems,
        retract_reason=retract_reason, status=_status_of(shown),
    )  # fmt: skip


def _status_of(shown: Preview) -> int:
    found: list[StrikebotError] = list(shown.problems.values())
    if any(isinstance(p, NotAllowed) for p in found):
        return 403
    if any(isinstance(p, Conflict) for p in found):
        return 409
    return 422 if any(isinstance(p, InvalidInput) for p in found) else 400


__all__ = ["add_routes"]
