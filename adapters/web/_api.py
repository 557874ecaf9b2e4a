"""The public JSON API (`/api/v1/...`), `/healthz`, `/livez`, `/readyz` and `/metrics`.

Read-only and unauthenticated: it shows exactly what the public page shows. Texts come in
the language asked for with `?lang=` (default: the campaign's first), plus every language
under `texts`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.ports import DeliveryState, PluginContext, Site, kinds

from ._app import JSON, cached, from_memory, json_error, json_response, state_of
from ._cache import Rendered, Tick
from ._data import load_snapshot
from ._present import ARCHIVE_PAGE, day_number, first_page_size, page_prefix
from ._schemas import (
    DatabaseHealth,
    DemandDetailOut,
    DemandListOut,
    DemandOut,
    ErrorBody,
    ErrorOut,
    HealthOut,
    SiteGroupOut,
    SiteListOut,
    SiteOut,
    StatusOut,
    UpdateDetailOut,
    UpdateListOut,
    UpdateOut,
    campaign_out,
    colour_of,
    demand_event_out,
    demand_out,
    revisions_out,
    update_out,
    update_url,
)

MAX_ID = 2**31 - 1
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
API_MAX_AGE = 15


SITE_CODE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


class BadQuery(Exception):
    """A query parameter is wrong; the message says which and what to send."""


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/healthz", healthz)
    r.add_get("/livez", livez)
    r.add_get("/readyz", readyz)
    r.add_get("/metrics", metrics)
    r.add_get("/api/v1/status", status)
    r.add_get("/api/v1/updates", updates)
    r.add_get("/api/v1/updates/{id}", update)
    r.add_get("/api/v1/sites", sites)
    r.add_get("/api/v1/demands", demands)
    r.add_get("/api/v1/demands/{key}", demand)


def _language(request: web.Request) -> str:
    campaign = state_of(request).ctx.campaign
    if not request.query_string:  # most requests: no query to parse
        return campaign.default_language
    lang = request.query.get("lang", campaign.default_language)
    if lang not in campaign.languages:
        raise BadQuery(f"lang={lang!r} is not offered; use one of {', '.join(campaign.languages)}.")
    return lang


def _int(request: web.Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query.get(name)
    if raw is None:
        return default
    # isascii: "²".isdigit() is true, but int() refuses it.
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise BadQuery(f"{name}={raw!r} is not valid; give a whole number from {low} to {high}.")
    return int(raw)


def _site(request: web.Request) -> str:
    """`site=CODE`, lower-cased ("" without one)."""
    raw = request.query.get("site", "").strip().lower()
    if raw and not SITE_CODE.fullmatch(raw):
        raise BadQuery(
            f"site={raw[:40]!r} is not a site's code; codes are letters, digits, '-' or '_'."
        )
    return raw


def _bad(exc: BadQuery) -> web.Response:
    return json_error(400, "bad_query", str(exc))


def _path_id(request: web.Request) -> int | None:
    raw = request.match_info["id"]
    return int(raw) if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_ID else None


def _rendered_error(status: int, code: str, message: str) -> Rendered:
    body = ErrorOut(error=ErrorBody(code=code, message=message))
    return Rendered(body.model_dump_json(exclude_none=True).encode(), JSON, status)


def _ok(model: Any) -> Rendered:
    return Rendered(model.model_dump_json().encode(), JSON)


# -- status ------------------------------------------------------------------------------------


async def status(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
    except BadQuery as exc:
        return _bad(exc)
    slot = ("api-status", lang)
    answer = from_memory(request, slot, max_age=API_MAX_AGE, tick=Tick.DAY)
    if answer is not None:  # the API's busiest answer, from memory
        return answer

    async def render(now: datetime) -> Rendered:
        ctx = state_of(request).ctx
        campaign = ctx.campaign
        snap = await load_snapshot(ctx, now, limit=1)
        current = snap.current
        text_ = current.text(lang) if current else None
        out = _ok(
            StatusOut(
                campaign=campaign_out(campaign),
                language=lang,
                status=current.status if current else None,
                status_label=kinds.status_name(campaign, current.status, lang) if current else "",
                colour=colour_of(current.status if current else None),
                on_strike=bool(current and current.status.on_strike),
                day=day_number(campaign, current, now),
                update_id=current.id if current else None,
                update_url=update_url(campaign, current.id) if current else None,
                headline=text_.headline if text_ else "",
                next_step=text_.next_step if text_ else "",
                next_step_at=current.next_step_at if current else None,
                last_updated=snap.last_updated,
            )
        )
        return dataclasses.replace(out, modified=snap.last_updated)

    return await cached(request, slot, render, max_age=API_MAX_AGE, pinned=True, tick=Tick.DAY)


# -- updates -----------------------------------------------------------------------------------


async def updates(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
        limit = _int(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT) or DEFAULT_LIMIT
        after = _int(request, "after", None, 1, MAX_ID)
        site = _site(request)
    except BadQuery as exc:
        return _bad(exc)

    # The static copy pages as the archive does, so its older pages never change.
    aligned = (
        state_of(request).static and after is None and "limit" not in request.query and not site
    )

    async def render(now: datetime) -> Rendered:
        ctx = state_of(request).ctx
        async with ctx.reads() as tx:
            place = await tx.place_codes(site) if site else None
            if site and place is None:
                return _rendered_error(
                    404,
                    "not_found",
                    f"No site or group {site!r}. Updates for everyone are at /api/v1/updates.",
                )
            size = first_page_size(await tx.visible_count(now)) if aligned else limit
            page = await tx.visible_updates(now, limit=size + 1, after=after, place=place)
            more = len(page) > size
            page = page[:size]
            notes = await tx.revision_notes([u.id for u in page if u.revision > 1])
        campaign = ctx.campaign
        next_url = None
        if more:
            step = ARCHIVE_PAGE if aligned else limit
            next_url = f"/api/v1/updates?lang={lang}&limit={step}&after={page[-1].id}"
            next_url += f"&site={site}" if site else ""
        items = [UpdateOut(**update_out(u, campaign, lang, notes.get(u.id))) for u in page]
        return _ok(UpdateListOut(items=items, next=next_url))

    return await cached(
        request, ("api-updates", lang, limit, after, site), render, max_age=API_MAX_AGE
    )


async def update(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
    except BadQuery as exc:
        return _bad(exc)
    update_id = _path_id(request)
    if update_id is None:
        return json_error(
            404, "not_found", "Update ids are whole numbers; list them at /api/v1/updates."
        )

    async def render(now: datetime) -> Rendered:
        ctx = state_of(request).ctx
        async with ctx.reads() as tx:
            found = await tx.visible_update(update_id, now)
            notes = await tx.revision_notes([update_id]) if found else {}
        if found is None:
            return _rendered_error(
                404,
                "not_found",
                f"No public update #{update_id}. List the published ones at /api/v1/updates.",
            )
        note = notes.get(update_id)
        return _ok(
            UpdateDetailOut(
                **update_out(found, ctx.campaign, lang, note),
                revisions=revisions_out(found, note),
            )
        )

    return await cached(request, ("api-update", lang, update_id), render, max_age=API_MAX_AGE)


# -- demands -----------------------------------------------------------------------------------


async def sites(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
    except BadQuery as exc:
        return _bad(exc)

    async def render(now: datetime) -> Rendered:
        ctx = state_of(request).ctx
        groups, found = await ctx.sites.all()
        base = f"{ctx.campaign.public_url}{page_prefix(lang, ctx.campaign)}/sites"

        def site_out(site: Site) -> SiteOut:
            return SiteOut(
                code=site.code, name=site.name(lang), names=dict(site.names),
                address=site.address, example=site.example, url=f"{base}/{site.code}",
            )  # fmt: skip

        items = [
            SiteGroupOut(
                code=g.code,
                name=g.name(lang),
                names=dict(g.names),
                example=g.example,
                url=f"{base}/{g.code}",
                sites=[site_out(s) for s in found if s.group == g.code],
            )
            for g in groups
        ]
        return _ok(SiteListOut(items=items))

    return await cached(request, ("api-sites", lang), render, max_age=API_MAX_AGE)


async def demands(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
    except BadQuery as exc:
        return _bad(exc)

    async def render(now: datetime) -> Rendered:
        async with state_of(request).ctx.reads() as tx:
            found = await tx.list_demands(with_history=False)
        return _ok(DemandListOut(items=[DemandOut(**demand_out(d, lang)) for d in found]))

    return await cached(request, ("api-demands", lang), render, max_age=API_MAX_AGE, pinned=True)


async def demand(request: web.Request) -> web.StreamResponse:
    try:
        lang = _language(request)
    except BadQuery as exc:
        return _bad(exc)
    key = request.match_info["key"]

    async def render(now: datetime) -> Rendered:
        async with state_of(request).ctx.reads() as tx:
            found = await tx.get_demand(key) if len(key) <= 64 else None
            keys = await tx.demand_keys() if found is None else []
        if found is None:
            return _rendered_error(
                404,
                "not_found",
                f"No demand with key {key!r}. Known keys: {', '.join(keys) or 'none yet'}.",
            )
        return _ok(
            DemandDetailOut(
                **demand_out(found, lang),
                history=[demand_event_out(e) for e in found.history],
            )
        )

    return await cached(request, ("api-demand", lang, key), render, max_age=API_MAX_AGE)


# -- operations --------------------------------------------------------------------------------


async def probe_store(ctx: PluginContext) -> DatabaseHealth:
    """Can the store be read, and written (`PluginContext.store_health`)?"""
    found = await ctx.store_health()
    return DatabaseHealth(reachable=found.reachable, writable=found.writable, error=found.error)


async def healthz(request: web.Request) -> web.StreamResponse:
    """ok = the database answers and takes writes; adapters report their own connection
    state."""
    ctx = state_of(request).ctx
    database = await probe_store(ctx)
    adapters = _adapter_states(ctx.health)
    ok = database.reachable and bool(database.writable)
    body = HealthOut(ok=ok, database=database, adapters=adapters)
    return json_response(body, 200 if body.ok else 503, **{"Cache-Control": "no-store"})


async def livez(request: web.Request) -> web.StreamResponse:
    """The process runs and its event loop answers: 200, always. Restart it when this fails."""
    return web.json_response({"live": True}, headers={"Cache-Control": "no-store"})


async def readyz(request: web.Request) -> web.StreamResponse:
    """Ready to do its job: the store can be read and written. 503 with the reason
    otherwise, so a load balancer sends people elsewhere until it is fixed. A chat platform
    being down does not make this instance unready (the page and API still serve, and
    deliveries wait in the outbox); its state is shown for information."""
    ctx = state_of(request).ctx
    database = await probe_store(ctx)
    reasons = [] if database.writable else [database.error or "the database cannot be written"]
    body = {
        "ready": not reasons,
        "reasons": reasons,
        "database": database.model_dump(),
        "adapters": _adapter_states(ctx.health),
    }
    return web.json_response(
        body, status=200 if not reasons else 503, headers={"Cache-Control": "no-store"}
    )


def _adapter_states(health: Any) -> dict[str, dict[str, Any]]:
    try:
        snapshot: Mapping[str, Mapping[str, object]] = health.snapshot()
    except Exception as exc:
        # One adapter failing to report must not hide the others.
        snapshot = {}
        for name, adapter in health.parts.items():
            try:
                snapshot[name] = adapter.health()
            except Exception as inner:
                snapshot[name] = {"error": f"{type(inner).__name__}: {inner}"}
        if not snapshot:
            snapshot = {"health": {"error": f"{type(exc).__name__}: {exc}"}}
    # Whatever an adapter reports must survive JSON: unknown values become strings.
    safe: dict[str, dict[str, Any]] = json.loads(
        json.dumps({k: dict(v) for k, v in snapshot.items()}, default=str)
    )
    return safe


async def metrics(request: web.Request) -> web.StreamResponse:
    ctx = state_of(request).ctx
    try:
        async with ctx.reads() as tx:
            counts = await tx.delivery_counts()
    except Exception:
        counts = None
    if counts is not None:
        pending: dict[str, int] = {}
        for (platform, state), n in counts.items():
            pending.setdefault(platform, 0)
            if state == DeliveryState.PENDING:
                pending[platform] += n
        for platform, n in pending.items():
            ctx.metrics.queue_depth.labels(platform=platform).set(n)
    return web.Response(
        body=generate_latest(ctx.metrics.registry),
        headers={"Content-Type": CONTENT_TYPE_LATEST, "Cache-Control": "no-store"},
    )
