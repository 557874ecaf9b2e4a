"""The web surface as a plugin part: `WebSurface(ctx).mount(app)` adds the status page,
feeds, public and admin APIs, /metrics and /healthz to the bot's one aiohttp server."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from aiohttp import web

from bot.ports import PluginContext, watch_public_version

from . import _admin, _api, _favicon, _feeds, _openapi, _pages, _subscribe, _webhooks
from ._app import (
    MAX_BODY,
    STATE,
    WebSection,
    WebSettings,
    WebState,
    log,
    make_templates,
    surface,
)
from ._publish import Publisher

MIDDLEWARES = (surface,)


class WebSurface:
    """Mounts every route of the public web surface (and its middlewares) on `app`; while
    running (`start`/`stop`), watches the store for public changes made by other processes,
    so a check of the public version costs nothing while nothing changed, and keeps the
    static copy in `[web] publish_dir` current."""

    def __init__(self, ctx: PluginContext) -> None:
        self.ctx = ctx
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        section = ctx.section if isinstance(ctx.section, WebSection) else WebSection()
        self.publisher = Publisher(ctx, Path(section.publish_dir)) if section.publish_dir else None
        self.settings = ctx.settings_as(WebSettings)
        token = self.settings.admin_token
        if token is not None and len(token.get_secret_value()) < 24:
            log.warning(
                "STRIKEBOT_ADMIN_TOKEN is short (%d characters); use at least 32 random characters",
                len(token.get_secret_value()),
            )

    def mount(self, app: web.Application) -> None:
        state = WebState(self.ctx, self.settings, make_templates())
        state.openapi = _openapi.document_bytes(self.ctx.campaign)
        app[STATE] = state
        app.middlewares.extend(MIDDLEWARES)
        _pages.add_routes(app, self.ctx.campaign)
        _feeds.add_routes(app, self.ctx.campaign)
        _api.add_routes(app)
        _admin.add_routes(app)
        _subscribe.add_routes(app, self.ctx.campaign)
        state.templates.globals["signup_link"] = _subscribe.link_label(self.ctx)
        _webhooks.add_routes(app)
        _favicon.add_routes(app)
        app.router.add_get("/api/v1/openapi.json", _openapi.serve)

    async def start(self) -> None:
        self._stop.clear()
        watcher = watch_public_version(self.ctx.store, self._stop)
        self._tasks.append(asyncio.create_task(watcher, name="public version watcher"))
        if self.publisher is not None:
            publishing = self.publisher.run(self._stop)
            self._tasks.append(asyncio.create_task(publishing, name="static site publisher"))

    async def stop(self) -> None:
        self._stop.set()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def build_app(ctx: PluginContext, *others: object) -> web.Application:
    """A stand-alone application with the web surface (and any other mountable parts given),
    as `strikebot run` builds it: for tests and benchmarks."""
    app = web.Application(client_max_size=MAX_BODY)
    WebSurface(ctx).mount(app)
    for other in others:
        mount = getattr(other, "mount", None)
        if callable(mount):
            mount(app)
    return app
