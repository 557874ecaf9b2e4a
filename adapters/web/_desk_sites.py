"""The web desk's Sites screen (`/desk/sites`): the campaign's groups and their sites, with
how many follow each; add a site or a group, rename one, move a site to another group,
remove one nobody follows. The same use cases, checks and audit log as `strikebot sites
import` and the admin API (`ctx.sites`); the signed-in person is the actor."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.ports import Conflict, NotAllowed, Site, SiteGroup, StrikebotError, i18n

from ._desk_auth import Form, Person, desk_of, guarded, render, words


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/desk/sites", guarded(_sites))
    r.add_post("/desk/sites/add", guarded(_add))
    r.add_post("/desk/sites/{code}/change", guarded(_change))
    r.add_post("/desk/sites/{code}/remove", guarded(_remove))


async def _sites(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    return await _page(request, person)


async def _page(
    request: web.Request,
    person: Person,
    *,
    done: str = "",
    problem: tuple[str, str] | None = None,
    status: int = 200,
) -> web.Response:
    """The groups with their sites; `problem`: (the form it is about, the sentence)."""
    ctx = desk_of(request).ctx
    lang = person.lang
    groups, sites, counts = await ctx.sites.followed()

    def shown(place: Site | SiteGroup) -> dict[str, Any]:
        kind = "site" if isinstance(place, Site) else "group"
        return {
            "code": place.code,
            "name": place.name(lang),
            "names": {code: place.names.get(code, "") for code in ctx.campaign.languages},
            "group": place.group if isinstance(place, Site) else "",
            "address": place.address if isinstance(place, Site) else "",
            "followers": i18n.format_number(counts.get((kind, place.code), 0), lang),
        }

    listed = [
        {**shown(group), "sites": [shown(s) for s in sites if s.group == group.code]}
        for group in groups
    ]
    context = {
        "lang": lang,
        "person": person,
        "csrf": person.csrf,
        "groups": listed,
        "group_options": [{"value": g.code, "label": g.name(lang)} for g in groups],
        "kinds": [
            {"value": "site", "label": words(lang)["site_kind_site"]},
            {"value": "group", "label": words(lang)["site_kind_group"]},
        ],
        "langs": [{"code": c, "name": i18n.language_name(c, lang)} for c in ctx.campaign.languages],
        "done": done,
        "problem": problem,
    }
    return render(request, "sites.html", context, status=status)


def _names(request: web.Request, form: Form) -> dict[str, str]:
    languages = desk_of(request).ctx.campaign.languages
    return {c: text for c in languages if (text := form.get(f"names.{c}", "").strip())}


async def _add(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    code, names = form.get("code", ""), _names(request, form)
    place: Site | SiteGroup
    if form.get("kind") == "group":
        place = SiteGroup(code, names)
    else:
        place = Site(code, names, form.get("group", ""), form.get("address", ""))
    try:
        added = await ctx.sites.add(person.actor, place)
    except StrikebotError as exc:
        return await _refused(request, person, "add", exc)
    said = words(person.lang)["site_added"].format(name=added.name(person.lang))
    return await _page(request, person, done=said)


async def _change(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    code = request.match_info["code"]
    group = form.get("group") or None
    address = form.get("address") if "address" in form else None
    try:
        changed = await ctx.sites.change(
            person.actor, code, names=_names(request, form), group=group, address=address
        )
    except StrikebotError as exc:
        return await _refused(request, person, code, exc)
    said = words(person.lang)["site_changed"].format(name=changed.name(person.lang))
    return await _page(request, person, done=said)


async def _remove(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    ctx = desk_of(request).ctx
    code = request.match_info["code"]
    try:
        removed = await ctx.sites.remove(person.actor, code)
    except StrikebotError as exc:
        return await _refused(request, person, code, exc)
    said = words(person.lang)["site_removed"].format(name=removed.name(person.lang))
    return await _page(request, person, done=said)


async def _refused(
    request: web.Request, person: Person, where: str, exc: StrikebotError
) -> web.Response:
    """The page again, the sentence beside the form it is about (422; 409 for a conflict)."""
    if isinstance(exc, NotAllowed):
        raise exc
    status = 409 if isinstance(exc, Conflict) else 422
    return await _page(request, person, problem=(where, exc.localized(person.lang)), status=status)
