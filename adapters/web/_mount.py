"""The web surface's routes and middleware on an aiohttp application: what `WebSurface`
mounts on the bot's one server, and `build_app`, the same on an application of its own
(for the static site's renderer, tests and benchmarks)."""

from __future__ import annotations

from aiohttp import web

from bot.ports import PluginContext, SignIn

from . import (
    _admin,
    _api,
    _desk,
    _favicon,
    _feeds,
    _notify,
    _openapi,
    _pages,
    _preferences,
    _sites,
    _subscribe,
    _webhooks,
)
from ._app import MAX_BODY, STATE, WebState, make_templates, surface
from ._settings import WebSettings

MIDDLEWARES = (surface,)


def mount_web(
    app: web.Application, ctx: PluginContext, settings: WebSettings, door: SignIn | None = None
) -> None:
    """Every route of the public web surface, its middleware and its shared state; with a
    `door` (the running bot's), the comms team's web desk at /desk as well."""
    state = WebState(ctx, settings, make_templates())
    app[STATE] = state
    app.middlewares.extend(MIDDLEWARES)
    _pages.add_routes(app, ctx.campaign)
    _sites.add_routes(app, ctx.campaign)
    _feeds.add_routes(app, ctx.campaign)
    _api.add_routes(app)
    _admin.add_routes(app)
    _subscribe.add_routes(app, ctx.campaign)
    _preferences.add_routes(app, ctx)
    state.templates.globals["signup_link"] = _subscribe.link_label(ctx)
    _notify.add_routes(app, ctx.campaign)
    state.templates.globals["reach"] = _notify.reach(ctx, lambda: state.static)
    state.csp_extra = lambda: _notify.csp_extra(ctx)
    _webhooks.add_routes(app)
    _favicon.add_routes(app)
    if door is not None:
        _desk.add_routes(app, door)
    app.router.add_get("/api/v1/openapi.json", _openapi.serve)
    # From the route table just built: the document describes what is served.
    state.openapi = _openapi.document_bytes(ctx.campaign, app.router)


def build_app(ctx: PluginContext, *others: object) -> web.Application:
    """A stand-alone application with the web surface (and any other mountable parts given),
    as `strikebot run` builds it: for tests and benchmarks."""
    app = web.Application(client_max_size=MAX_BODY)
    mount_web(app, ctx, ctx.settings_as(WebSettings))
    for other in others:
        mount = getattr(other, "mount", None)
        if callable(mount):
            mount(app)
    return app
