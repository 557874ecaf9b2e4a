"""`build_app`: the routes of every part of the web surface on one aiohttp application."""

from __future__ import annotations

from aiohttp import web

from bot.app import Runtime

from . import _admin, _api, _feeds, _openapi, _pages
from ._app import (
    MAX_BODY,
    STATE,
    WebState,
    admin_auth,
    count_requests,
    errors,
    log,
    make_templates,
    security_headers,
)


def build_app(runtime: Runtime) -> web.Application:
    """The whole web surface for `runtime`, plus every `runtime.web_mounts` entry."""
    app = web.Application(
        middlewares=[count_requests, security_headers, errors, admin_auth],
        client_max_size=MAX_BODY,
    )
    state = WebState(runtime, make_templates())
    state.openapi = _openapi.document_bytes(runtime.campaign)
    app[STATE] = state
    token = runtime.settings.admin_token
    if token and len(token) < 24:
        log.warning(
            "STRIKEBOT_ADMIN_TOKEN is short (%d characters); use at least 32 random characters",
            len(token),
        )
    _pages.add_routes(app, runtime.campaign)
    _feeds.add_routes(app, runtime.campaign)
    _api.add_routes(app)
    _admin.add_routes(app)
    app.router.add_get("/api/v1/openapi.json", _openapi.serve)
    for mount in runtime.web_mounts:
        mount(app)
    return app
