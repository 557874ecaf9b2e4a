"""The HTML pages: the status page, one page per update, and the list of all updates.

Server-rendered with Jinja2, no JavaScript. The default language lives at `/`, every other
campaign language under `/<lang>/` (e.g. `/es/`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web

from bot.ports import Campaign, fallback, family_answers, i18n, kinds

from ._app import HTML, Handler, WebState, cached, from_memory, state_of
from ._cache import Rendered, Tick
from ._data import load_snapshot
from ._present import (
    TEXT,
    countdown,
    day_number,
    demand_view,
    entry_view,
    html_time,
    last_change,
    page_prefix,
    say,
    when,
    when_term,
)

MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL
ARCHIVE_PAGE = 25


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


def language_of_path(path: str, campaign: Campaign) -> str:
    first = path.strip("/").split("/", 1)[0]
    return first if first in campaign.languages else campaign.default_language


def base_context(
    campaign: Campaign, lang: str, suffix: str, status_css: str, **extra: Any
) -> dict[str, Any]:
    """What base.html needs: wording, links to the same page in other languages, CSS."""
    t = TEXT[lang]
    prefix = page_prefix(lang, campaign)
    alternates = [
        {"lang": other, "href": f"{campaign.public_url}{page_prefix(other, campaign)}{suffix}"}
        for other in campaign.languages
    ]
    feeds = [
        {
            "lang": other,
            "atom": f"{page_prefix(other, campaign)}/feed.atom",
            "ics": f"{page_prefix(other, campaign)}/calendar.ics",
            "atom_title": say(lang, "feed_in", language=_name(other)),
            "ics_title": say(lang, "calendar_in", language=_name(other)),
        }
        for other in sorted(campaign.languages, key=lambda code: code != lang)  # its own first
    ]
    switch = [
        {
            "lang": other,
            "href": f"{page_prefix(other, campaign)}{suffix}",
            "name": i18n.language_name(other),  # each in its own words (CLDR)
        }
        for other in campaign.languages
        if other != lang
    ]
    context: dict[str, Any] = {
        "lang": lang,
        "t": t,
        "campaign": campaign,
        "prefix": prefix,
        "title": say(lang, "title", union=campaign.union),
        "description": say(lang, "description", union=campaign.union),
        "canonical": f"{campaign.public_url}{prefix}{suffix}",
        "alternates": alternates,
        "switch": switch,
        "feeds": feeds,
        "status_css": status_css,
        "with_employer": say(lang, "with", employer=campaign.employer),
        "last_updated": "",
    }
    context.update(extra)
    return context


def _name(code: str) -> i18n.Term:
    """A language's name as a piece of a sentence (CLDR, in the sentence's language)."""
    return i18n.local(lambda shown_in: i18n.language_name(code, shown_in))


def _html(
    state: WebState,
    template: str,
    context: dict[str, Any],
    status: int = 200,
    modified: datetime | None = None,
) -> Rendered:
    body = state.templates.get_template(template).render(context)
    return Rendered(body.encode(), HTML, status, modified, context["lang"])


def message_page(
    request: web.Request,
    status: int,
    title_key: str,
    text_key: str,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """A short page (not found, unavailable) in the language of the address; no store read."""
    out = _message(state_of(request), request.path, status, title_key, text_key)
    return web.Response(
        body=out.body, status=status, headers={"Content-Type": HTML, **(headers or {})}
    )


def _message(state: WebState, path: str, status: int, title_key: str, text_key: str) -> Rendered:
    campaign = state.ctx.campaign
    lang = language_of_path(path, campaign)
    context = base_context(campaign, lang, "/", state.status_css)
    context["title"] = f"{TEXT[lang][title_key]} — {campaign.union}"
    context["heading"] = TEXT[lang][title_key]
    context["message"] = TEXT[lang][text_key]
    return _html(state, "message.html", context, status)


def not_found_page(request: web.Request) -> web.Response:
    return message_page(request, 404, "not_found_title", "not_found")


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
    snap = await load_snapshot(state.ctx.store, now)
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
    return _html(state, "status.html", context, modified=snap.last_updated)


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
    async with state.ctx.store.read() as tx:
        update = await tx.visible_update(update_id, now)
        notes = await tx.revision_notes([update_id]) if update and update.revision > 1 else {}
    if update is None:
        path = f"{page_prefix(lang, campaign)}/updates/{update_id}"
        return _message(state, path, 404, "not_found_title", "not_found")
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
    return _html(state, "update.html", context, modified=last_change(update))


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
    async with state.ctx.store.read() as tx:
        page = await tx.visible_updates(now, limit=ARCHIVE_PAGE + 1, after=after)
        more = len(page) > ARCHIVE_PAGE
        page = await tx.with_revisions(page[:ARCHIVE_PAGE])
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
    return _html(state, "updates.html", context, modified=modified)
