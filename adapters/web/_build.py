"""The web surface as a plugin part: `WebSurface(ctx).mount(app)` adds the status page,
feeds, public and admin APIs, /metrics and /healthz to the bot's one aiohttp server."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from aiohttp import web

from bot.ports import PluginContext

from ._app import log
from ._mount import mount_web
from ._publish import Publisher
from ._settings import WebSection, WebSettings


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
        self.door = ctx.sign_in()  # the web desk's (`_desk`): one per process
        token = self.settings.admin_token
        if token is not None and len(token.get_secret_value()) < 24:
            log.warning(
                "STRIKEBOT_ADMIN_TOKEN is short (%d characters); use at least 32 random characters",
                len(token.get_secret_value()),
            )

    def mount(self, app: web.Application) -> None:
        mount_web(app, self.ctx, self.settings, self.door)

    async def start(self) -> None:
        self._stop.clear()
        watcher = self.ctx.watch_public(self._stop)
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
