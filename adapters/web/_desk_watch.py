"""The desk's watching screens: an update's delivery, live (`/desk/updates/{id}/progress`,
polled by `desk.js`; a reload does the same without JavaScript) with a retry for what
failed (`Admin.retry`); the demands, with an offer to record and wording to edit (the
admin use cases); translations gone stale, to confirm; sign-up counts (never who); the
morning briefing's schedule and what it would say now. And the desk's style and script."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.ports import (
    Demand,
    DemandStatus,
    DemandWording,
    InvalidInput,
    NotFound,
    PluginContext,
    StaleText,
    Update,
    i18n,
    stale_note,
)

from ._desk_auth import Form, Person, desk_error, desk_of, guarded, render, see_other, words
from ._desk_view import choices, parse_local, progress_view, update_id_of, when

STATIC = Path(__file__).parent / "static"
DEMAND_FIELDS = ("title", "summary", "union_position")


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/desk/updates/{id}/progress", guarded(_progress, touch=False))
    r.add_post("/desk/retry", guarded(_retry))
    r.add_get("/desk/demands", guarded(_demands))
    r.add_post("/desk/demands/{key}/offer", guarded(_record_offer))
    r.add_post("/desk/demands/{key}/edit", guarded(_edit_demand))
    r.add_get("/desk/translations", guarded(_translations))
    r.add_post("/desk/translations/confirm", guarded(_confirm_translation))
    r.add_get("/desk/people", guarded(_people))
    r.add_get("/desk/briefings", guarded(_briefings))
    r.add_get("/desk/desk.css", _static("desk.css", "text/css"))
    r.add_get("/desk/desk.js", _static("desk.js", "text/javascript"))


def _static(name: str, content_type: str) -> Any:
    body = (STATIC / name).read_bytes()

    async def handle(request: web.Request) -> web.Response:
        return web.Response(
            body=body,
            content_type=content_type,
            charset="utf-8",
            headers={"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff"},
        )

    return handle


def _base(person: Person, **context: Any) -> dict[str, Any]:
    return {"lang": person.lang, "person": person, "csrf": person.csrf, **context}


# -- delivery ---------------------------------------------------------------------------


async def _progress(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    """The progress section alone, for the page's script to swap in."""
    ctx = desk_of(request).ctx
    update_id = update_id_of(request)
    shown = progress_view(ctx, await ctx.board.progress(update_id), person.lang)
    context = _base(person, progress=shown, update={"id": update_id}, fragment=True)
    return render(request, "_progress.html", context)


async def _retry(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    ids = [v for v in form.getall("id", []) if v]
    await ctx.admin.retry(person.actor, ids or None)
    back = form.get("update", "")
    target = f"/desk/updates/{back}#progress" if back.isdigit() else "/desk"
    return see_other(target)


# -- demands ------------------------------------------------------------------------------


async def _demands(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    return await _demands_page(request, person)


async def _demands_page(
    request: web.Request,
    person: Person,
    *,
    done: str = "",
    problem: tuple[str, str] | None = None,
    status: int = 200,
) -> web.Response:
    ctx = desk_of(request).ctx
    lang = person.lang
    shown = []
    for demand in await ctx.board.demands():
        text = demand.text(lang)
        shown.append(
            {
                "key": demand.key,
                "title": text.title,
                "status": demand.status.value,
                "status_label": i18n.demand_status_label(demand.status, lang),
                "union_position": text.union_position,
                "employer_offer": text.employer_offer,
                "texts": {code: _wording(demand, code) for code in ctx.campaign.languages},
            }
        )
    context = _base(
        person,
        demands=shown,
        done=done,
        problem=problem,
        langs=[{"code": c, "name": i18n.language_name(c, lang)} for c in ctx.campaign.languages],
        zone=ctx.campaign.timezone,
        **choices(lang),
    )
    return render(request, "demands.html", context, status=status)


def _wording(demand: Demand, code: str) -> dict[str, str]:
    """One language's editable fields of `demand` ("" where it has no wording)."""
    text = demand.texts.get(code)
    return {f: str(getattr(text, f)) if text else "" for f in DEMAND_FIELDS}


async def _record_offer(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    key = request.match_info["key"]
    w = words(person.lang)
    try:
        at = parse_local(form.get("at", ""), ctx.campaign)
    except ValueError:
        return await _demands_page(request, person, problem=(key, w["bad_time"]), status=422)
    offer = {c: form.get(f"offer.{c}", "") for c in ctx.campaign.languages}
    status = form.get("status", "")
    try:
        result = await ctx.admin.record_demand(
            person.actor,
            key,
            status=DemandStatus(status) if status else None,
            offer={c: text for c, text in offer.items() if text.strip()},
            source=form.get("source", ""),
            note=form.get("note", ""),
            at=at,
            announce=bool(form.get("announce")),
        )
    except (InvalidInput, ValueError) as exc:
        said = exc.localized(person.lang) if isinstance(exc, InvalidInput) else w["bad_status"]
        return await _demands_page(request, person, problem=(key, said), status=422)
    title = result.demand.text(person.lang).title
    return await _demands_page(request, person, done=w["offer_recorded"].format(title=title))


async def _edit_demand(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    key = request.match_info["key"]
    w = words(person.lang)
    before = await ctx.board.demand(key)
    if before is None:
        raise desk_error(NotFound, "no_demand", key=key[:70])
    wordings = {}
    for code in ctx.campaign.languages:
        old = before.texts.get(code)
        changed = {
            f: value
            for f in DEMAND_FIELDS
            if (value := form.get(f"texts.{code}.{f}")) is not None
            and value.strip() != (getattr(old, f) if old else "").strip()
        }
        if changed:
            wordings[code] = DemandWording(**changed)
    status = form.get("status", "")
    try:
        result = await ctx.admin.edit_demand(
            person.actor,
            key,
            wordings,
            reason=form.get("reason", ""),
            status=DemandStatus(status) if status and status != before.status.value else None,
            announce=bool(form.get("announce")),
        )
    except (InvalidInput, ValueError) as exc:
        said = exc.localized(person.lang) if isinstance(exc, InvalidInput) else w["bad_status"]
        return await _demands_page(request, person, problem=(key, said), status=422)
    title = result.demand.text(person.lang).title
    return await _demands_page(request, person, done=w["demand_edited"].format(title=title))


# -- translations ---------------------------------------------------------------------------


def stale_view(
    ctx: PluginContext, stale: Sequence[StaleText], lang: str, update: Update | None = None
) -> list[dict[str, Any]]:
    """Each stale wording: what it is, why it is stale, and its text beside the edited one."""
    shown = []
    for mark in stale:
        kind, _, ident = mark.target.partition(":")
        text = edited = ""
        if update is not None and kind == "update":
            text = update.text(mark.language).headline if mark.language in update.texts else ""
            first = mark.edited.split(",")[0]
            edited = update.text(first).headline if first in update.texts else ""
        shown.append(
            {
                "target": mark.target,
                "kind": kind,
                "ident": ident,
                "language": mark.language,
                "language_name": i18n.language_name(mark.language, lang),
                "note": stale_note(lang, mark.language, mark.edited),
                "since": when(mark.since, ctx.campaign, lang),
                "text": text,
                "edited": edited,
                "link": f"/desk/updates/{ident}" if kind == "update" else "/desk/demands",
            }
        )
    return shown


async def _translations(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    return await _translations_page(request, person)


async def _translations_page(
    request: web.Request, person: Person, *, done: str = ""
) -> web.Response:
    ctx = desk_of(request).ctx
    marks = await ctx.board.stale()
    shown = []
    for mark in marks:
        kind, _, ident = mark.target.partition(":")
        update = None
        if kind == "update" and ident.isdigit():
            update, _ = await ctx.desk.current(int(ident))
        shown += stale_view(ctx, [mark], person.lang, update)
    return render(request, "translations.html", _base(person, stale=shown, done=done))


async def _confirm_translation(
    request: web.Request, person: Person, form: Form
) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    target, language = form.get("target", ""), form.get("language", "")
    await ctx.admin.confirm_translation(person.actor, target, language)
    back = form.get("back", "")
    if back.startswith("/desk/updates/"):
        return see_other(back)
    w = words(person.lang)
    name = i18n.language_name(language, person.lang) if language in ctx.campaign.languages else ""
    return await _translations_page(request, person, done=w["translation_confirmed"].format(
        language=name))  # fmt: skip


# -- sign-ups and briefings ------------------------------------------------------------------


async def _people(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    """How many people signed up, by how they are reached: counts only, never who."""
    ctx = desk_of(request).ctx
    lang = person.lang
    counts = await ctx.board.signup_counts()
    rows = []
    for kind, entry in sorted(counts["people"].items()):
        rows.append(
            {
                "kind": words(lang).get(f"kind_{kind}", kind),
                "confirmed": i18n.format_number(int(entry.get("confirmed", 0)), lang),
                "pending": i18n.format_number(int(entry.get("pending", 0)), lang),
                "broken": i18n.format_number(int(entry.get("broken", 0)), lang),
                "languages": ", ".join(
                    f"{i18n.language_name(code, lang)}: {i18n.format_number(n, lang)}"
                    for code, n in sorted(entry.get("languages", {}).items())
                ),
            }
        )
    return render(request, "people.html", _base(person, rows=rows))


async def _briefings(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    lang = person.lang
    schedules = [
        {
            "time": line.schedule.briefing_time.strftime("%H:%M"),
            "zone": line.schedule.timezone,
            "days": ", ".join(i18n.day_names(lang)[d] for d in sorted(line.schedule.briefing_days)),
            "count": i18n.format_number(line.subscribers, lang),
            "next": when(line.next_at, ctx.campaign, lang),
        }
        for line in await ctx.board.briefings()
    ]
    previews = []
    for code in ctx.campaign.languages:
        message = await ctx.board.briefing(code)
        previews.append({"lang": code, "name": i18n.language_name(code, lang), "message": message})
    main = ctx.campaign.default_language
    audiences = [line.sentence(lang, main) for line in await ctx.board.briefing_audiences()]
    return render(
        request,
        "briefings.html",
        _base(person, schedules=schedules, previews=previews, audiences=audiences),
    )
