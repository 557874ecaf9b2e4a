"""The HTML pages: the status page, one page per update, and the list of all updates.

Server-rendered with Jinja2, no JavaScript. The default language lives at `/`, every other
campaign language under `/<lang>/` (e.g. `/es/`).
"""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from bot.ports import Campaign, fallback, family_answers, kinds

from ._app import Handler, WebState, cached, from_memory, not_found_page, state_of
from ._cache import Rendered, Tick
from ._data import load_snapshot
from ._present import (
    ARCHIVE_PAGE,
    TEXT,
    countdown,
    day_number,
    demand_view,
    entry_view,
    first_page_size,
    html_time,
    last_change,
    page_prefix,
    say,
    when,
    when_term,
)
from ._shell import base_context, message_rendered, render_page

MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL


def add_routes(app: web.Application, campaign: Campaign) -> None:
    for lang in campaign.languages:
        prefix = page_prefix(lang, campaign)
        app.router.add_get(f"{prefix}/", _status_handler(lang))
        app.router.add_get(f"{prefix}/updates", _archive_handler(lang))
        app.router.add_get(f"{prefix}/updates/{{id:\\d+}}", _update_handler(lang))
        if prefix:
            app.router.add_get(prefix, _redirect(f"{prefix}/"))
    # /en/ for a campaign whose default is English: the same page lives at /.
    default = campaign.default_language
    app.router.add_get(f"/{default}/", _redirect("/"))


def _redirect(location: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently(location)

    return handle


# -- the status page ---------------------------------------------------------------------


def _status_handler(lang: str) -> Handler:
    slot = ("page", lang)

    async def handle(request: web.Request) -> web.StreamResponse:
        answer = from_memory(request, slot, tick=Tick.MINUTE)  # the busiest page's hits
        if answer is not None:
            return answer
        state = state_of(request)
        return await cached(
            request,
            slot,
            lambda now: render_status(state, lang, now),
            pinned=True,
            tick=Tick.MINUTE,
        )

    return handle


async def render_status(state: WebState, lang: str, now: datetime) -> Rendered:
    campaign = state.ctx.campaign
    snap = await load_snapshot(state.ctx, now)
    current = snap.current
    context = base_context(campaign, lang, "/", state.status_css)
    context["status_class"] = str(current.status) if current else "none"
    context["status_label"] = (
        kinds.status_name(campaign, current.status, lang) if current else TEXT[lang]["no_updates"]
    )
    day = day_number(campaign, current, now)
    context["day"] = say(lang, "day", n=day) if day is not None else ""
    context["current"] = None
    context["next_step"] = None
    if current is not None:
        text = fallback.shown_update(current, lang, campaign.default_language)
        context["current"] = {
            "href": f"{page_prefix(lang, campaign)}/updates/{current.id}",
            "headline": text.headline,
        }
        step = text.next_step
        at = current.next_step_at
        if step or at:
            context["next_step"] = {
                "text": step or TEXT[lang]["none"],
                "when": when(at, campaign, lang, now) if at else "",
                "iso": html_time(at) if at else "",
                "countdown": countdown(at, now, lang) if at and not state.static else "",
            }
    context["families"] = family_answers(campaign, current, now, lang)
    context["families_title"] = kinds.families_title(campaign, lang)
    context["sites_link"] = f"{page_prefix(lang, campaign)}/sites" if snap.places else ""
    context["employer_offer"] = say(lang, "employer_offer", employer=campaign.employer)
    context["demands"] = [demand_view(d, campaign, lang, now) for d in snap.demands]
    context["timeline"] = [
        entry_view(u, campaign, lang, snap.notes.get(u.id), now=now) for u in snap.timeline
    ]
    context["showing"] = say(lang, "showing", n=len(snap.timeline)) if snap.more else ""
    if snap.last_updated is not None:
        context["last_updated"] = say(
            lang, "last_updated", when=when_term(snap.last_updated, campaign, now)
        )
    return render_page(state.templates, "status.html", context, modified=snap.last_updated)


# -- one update ----------------------------------------------------------------------------


def _update_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        update_id = int(request.match_info["id"])
        if update_id > MAX_ID:
            return not_found_page(request)
        state = state_of(request)
        return await cached(
            request,
            ("update", lang, update_id),
            lambda now: render_update(state, lang, update_id, now),
        )

    return handle


async def render_update(state: WebState, lang: str, update_id: int, now: datetime) -> Rendered:
    campaign = state.ctx.campaign
    async with state.ctx.reads() as tx:
        update = await tx.visible_update(update_id, now)
        notes = await tx.revision_notes([update_id]) if update and update.revision > 1 else {}
    if update is None:
        path = f"{page_prefix(lang, campaign)}/updates/{update_id}"
        return message_rendered(
            state.templates,
            campaign,
            state.status_css,
            path,
            404,
            "not_found_title",
            "not_found",
        )
    entry = entry_view(
        update, campaign, lang, notes.get(update_id), preview=None, with_history=True, now=now
    )
    context = base_context(
        campaign,
        lang,
        f"/updates/{update_id}",
        state.status_css,
        e=entry,
        posted=say(lang, "posted", when=when_term(update.effective_at, campaign, now)),
        current_version=say(lang, "current_version", n=update.revision),
    )
    context["title"] = f"{entry.headline} — {campaign.union}"
    context["description"] = entry.headline
    return render_page(state.templates, "update.html", context, modified=last_change(update))


# -- all updates -----------------------------------------------------------------------------


def _archive_handler(lang: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        raw = request.query.get("after", "")
        after: int | None = None
        if raw:
            if not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_ID:
                return not_found_page(request)
            after = int(raw)
        state = state_of(request)
        return await cached(
            request,
            ("archive", lang, after),
            lambda now: render_archive(state, lang, after, now),
        )

    return handle


async def render_archive(state: WebState, lang: str, after: int | None, now: datetime) -> Rendered:
    campaign = state.ctx.campaign
    async with state.ctx.reads() as tx:
        # The static copy pages from the oldest, so its older pages never change (one count
        # per publish); the live pages from the newest, with no count.
        aligned = state.static and after is None
        size = first_page_size(await tx.visible_count(now)) if aligned else ARCHIVE_PAGE
        page = await tx.visible_updates(now, limit=size + 1, after=after)
        more = len(page) > size
        page = await tx.with_revisions(page[:size])
        notes = await tx.revision_notes([u.id for u in page if u.revision > 1])
    prefix = page_prefix(lang, campaign)
    context = base_context(
        campaign,
        lang,
        "/updates",
        state.status_css,
        timeline=[entry_view(u, campaign, lang, notes.get(u.id), now=now) for u in page],
        older=f"{prefix}/updates?after={page[-1].id}" if more else "",
    )
    context["title"] = say(lang, "updates_title", union=campaign.union)
    modified = max((last_change(u) for u in page), default=None)
    return render_page(state.templates, "updates.html", context, modified=modified)
