"""A site's page: `/sites/<code>` (and `/es/sites/<code>`...), for a school, a worksite or a
group of them: where the strike stands, the latest word its readers got (for everyone, for
it, for its group) and the families' answers, then its recent updates. And the sites index,
`/sites`: every site by group, each with its latest word (the status page links it when the
campaign has sites). Server-rendered, no JavaScript, cached and served stale like every page
(`cached`)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import datetime

from aiohttp import web

from bot.ports import Campaign, Site, Update, fallback, family_answers, kinds

from ._app import Handler, WebState, cached, not_found_page, state_of
from ._cache import Rendered
from ._feeds import ATOM, FEED_ENTRIES, ICS, atom_feed, calendar_events, icalendar
from ._present import day_number, entry_view, last_change, page_prefix, say
from ._shell import base_context, message_rendered, render_page

CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
SHOWN = 10  # recent updates listed


def add_routes(app: web.Application, campaign: Campaign) -> None:
    for lang in campaign.languages:
        prefix = page_prefix(lang, campaign)
        app.router.add_get(f"{prefix}/sites", _index_handler(lang))
        app.router.add_get(f"{prefix}/sites/{{code}}", _site_handler(lang))
        app.router.add_get(f"{prefix}/sites/{{code}}/feed.atom", _feed_handler(lang, render_atom))
        app.router.add_get(
            f"{prefix}/sites/{{code}}/calendar.ics", _feed_handler(lang, render_calendar)
        )


Render = Callable[[WebState, str, str, datetime], Awaitable[Rendered]]


def _feed_handler(lang: str, render: Render) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        code = request.match_info["code"]
        if not CODE.fullmatch(code):
            return not_found_page(request)
        code = code.lower()
        state = state_of(request)
        return await cached(
            request, (render.__name__, lang, code), lambda now: render(state, lang, code, now)
        )

    return handle


async def render_calendar(state: WebState, lang: str, code: str, now: datetime) -> Rendered:
    """A site's (or a group's) next steps as iCalendar: the events its readers were told."""
    campaign = state.ctx.campaign
    updates = await state.ctx.sites.events(code, now)
    if updates is None:
        path = f"{page_prefix(lang, campaign)}/sites/{code}/calendar.ics"
        return message_rendered(
            state.templates, campaign, state.status_css, path, 404, "not_found_title", "not_found"
        )
    events = calendar_events(updates)
    body = icalendar(events, campaign, lang)
    return Rendered(body, ICS, modified=max((e.changed for e in events), default=None))


async def render_atom(state: WebState, lang: str, code: str, now: datetime) -> Rendered:
    """A site's (or a group's) updates as Atom: the feed its readers subscribe to."""
    campaign = state.ctx.campaign
    news = await state.ctx.sites.news(code, now, limit=FEED_ENTRIES, history=True)
    if news is None:
        path = f"{page_prefix(lang, campaign)}/sites/{code}/feed.atom"
        return message_rendered(
            state.templates, campaign, state.status_css, path, 404, "not_found_title", "not_found"
        )
    title = say(lang, "site_feed", place=news.place.name(lang), union=campaign.union)
    body = atom_feed(
        news.updates, news.notes, campaign, lang, now, path=f"/sites/{code}", title=title
    )
    return Rendered(body, ATOM, modified=max(map(last_change, news.updates), default=None))


def _site_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        code = request.match_info["code"]
        if not CODE.fullmatch(code):
            return not_found_page(request)
        code = code.lower()
        state = state_of(request)
        return await cached(
            request, ("site", lang, code), lambda now: render_site(state, lang, code, now)
        )

    return handle


async def render_site(state: WebState, lang: str, code: str, now: datetime) -> Rendered:
    campaign = state.ctx.campaign
    news = await state.ctx.sites.news(code, now, limit=SHOWN)
    if news is None:
        path = f"{page_prefix(lang, campaign)}/sites/{code}"
        return message_rendered(
            state.templates, campaign, state.status_css, path, 404, "not_found_title", "not_found"
        )
    current, place = news.current, news.place
    prefix = page_prefix(lang, campaign)
    context = base_context(campaign, lang, f"/sites/{code}", state.status_css)
    name = place.name(lang)
    context["title"] = f"{name} — {campaign.union}"
    context["description"] = say(lang, "site_intro", place=name)
    context["place"] = {
        "name": name,
        "address": place.address if isinstance(place, Site) else "",
        "group": None
        if news.group is None
        else {"name": news.group.name(lang), "href": f"{prefix}/sites/{news.group.code}"},
        "sites": [{"name": s.name(lang), "href": f"{prefix}/sites/{s.code}"} for s in news.sites],
        "example": place.example,
    }
    context["status_class"] = str(current.status) if current else "none"
    context["status_label"] = (
        kinds.status_name(campaign, current.status, lang) if current else say(lang, "no_updates")
    )
    day = day_number(campaign, current, now)
    context["day"] = say(lang, "day", n=day) if day is not None else ""
    context["timeline"] = [entry_view(u, campaign, lang, None, now=now) for u in news.updates]
    context["families"] = family_answers(campaign, current, now, lang)
    context["families_title"] = kinds.families_title(campaign, lang)
    context["site_feed"] = f"{prefix}/sites/{place.code}/feed.atom"
    context["site_calendar"] = f"{prefix}/sites/{place.code}/calendar.ics"
    return render_page(state.templates, "site.html", context, modified=None)


def _index_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        state = state_of(request)
        return await cached(request, ("sites", lang), lambda now: render_index(state, lang, now))

    return handle


async def render_index(state: WebState, lang: str, now: datetime) -> Rendered:
    """Every site by group, each with the latest word its readers got."""
    campaign = state.ctx.campaign
    index = await state.ctx.sites.index(now)
    prefix = page_prefix(lang, campaign)

    def latest(update: Update | None) -> dict[str, str] | None:
        if update is None:
            return None
        text = fallback.shown_update(update, lang, campaign.default_language)
        return {"href": f"{prefix}/updates/{update.id}", "headline": text.headline}

    context = base_context(campaign, lang, "/sites", state.status_css)
    context["title"] = f"{say(lang, 'sites_title')} — {campaign.union}"
    context["description"] = say(lang, "sites_intro")
    context["groups"] = [
        {
            "id": f"g-{group.place.code}",
            "name": group.place.name(lang),
            "href": f"{prefix}/sites/{group.place.code}",
            "latest": latest(group.latest),
            "sites": [
                {
                    "name": site.place.name(lang),
                    "href": f"{prefix}/sites/{site.place.code}",
                    "latest": latest(site.latest),
                }
                for site in sites
            ],
        }
        for group, sites in index.groups
    ]
    context["example"] = any(group.place.example for group, _ in index.groups)
    current = index.current
    context["status_class"] = str(current.status) if current else "none"
    context["status_label"] = (
        kinds.status_name(campaign, current.status, lang) if current else say(lang, "no_updates")
    )
    moments = [u.effective_at for _, sites in index.groups for s in sites if (u := s.latest)]
    moments += [u.effective_at for g, _ in index.groups if (u := g.latest)]
    return render_page(state.templates, "sites.html", context, modified=max(moments, default=None))
