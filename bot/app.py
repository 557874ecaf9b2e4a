"""The main job (`strikebot run`): one process, every resource handed in, `async with` down.

Order of start: store (migrate + seed) → web server → platform adapters whose credentials
are present → dispatcher → briefing scheduler. Shutdown runs in reverse; a failing step is
logged and the rest still run.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import time
from typing import Any

from aiohttp import web

from bot.admin import Admin
from bot.clock import Clock, utcnow
from bot.config import Settings, StrikeConfig
from bot.errors import StrikebotError
from bot.metrics import Metrics
from bot.models import Campaign, Platform
from bot.ports import Adapter, HealthBoard
from bot.store import Store

WebMount = Callable[[web.Application], None]
log = logging.getLogger("strikebot")


@dataclass(slots=True)
class Runtime:
    """Everything a running strikebot holds. Built once in `serve`, handed to each part."""

    settings: Settings
    config: StrikeConfig
    campaign: Campaign
    store: Store
    admin: Admin
    clock: Clock
    metrics: Metrics = field(default_factory=Metrics)
    health: HealthBoard = field(default_factory=HealthBoard)
    adapters: dict[Platform, Adapter] = field(default_factory=dict)
    # Extra routes on the one web server (Slack's /slack/events in HTTP mode).
    web_mounts: list[WebMount] = field(default_factory=list)


async def serve(
    settings: Settings,
    config: StrikeConfig,
    *,
    clock: Clock = utcnow,
    stop: asyncio.Event | None = None,
) -> None:
    """Run until `stop` is set (or SIGINT/SIGTERM): web, adapters, dispatcher, scheduler."""
    from adapters.web import build_app
    from bot.commands import Commands
    from bot.dispatcher import Dispatcher
    from bot.schedule import BriefingScheduler
    from bot.seed import apply_seed
    from bot.store.wakeups import watch_other_writers

    stop = stop or asyncio.Event()
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(Store.open(settings.database_url))
        await apply_seed(store, config, clock)
        campaign = config.to_campaign()
        admin = Admin(store, campaign, config.to_admins(), clock)
        runtime = Runtime(settings, config, campaign, store, admin, clock)
        commands = Commands(
            store,
            campaign,
            admin,
            clock,
            metrics=runtime.metrics,
            default_briefing_time=time.fromisoformat(config.briefings.default_time),
        )

        for platform, adapter in _platform_adapters(runtime, commands).items():
            runtime.adapters[platform] = adapter
            runtime.health.adapters[str(platform)] = adapter

        runner = web.AppRunner(build_app(runtime), access_log=None)
        await runner.setup()
        stack.push_async_callback(_logged, "web server", runner.cleanup)
        site = web.TCPSite(runner, settings.http_host, settings.http_port)
        try:
            await site.start()
        except OSError as exc:
            raise StrikebotError(
                f"Cannot listen on {settings.http_host}:{settings.http_port} ({exc.strerror}). "
                "Stop the other program using it or set STRIKEBOT_HTTP_PORT to a free port."
            ) from None

        for platform, adapter in runtime.adapters.items():
            await adapter.start()
            stack.push_async_callback(_logged, f"{platform} adapter", adapter.stop)

        dispatcher = Dispatcher(
            store,
            runtime.adapters,
            campaign,
            clock,
            settings=config.delivery,
            metrics=runtime.metrics,
        )
        dispatching = asyncio.create_task(dispatcher.run(), name="dispatcher")
        # Posts from the CLI or another instance wake the dispatcher too.
        watching_stop = asyncio.Event()
        watching = asyncio.create_task(watch_other_writers(store, watching_stop))
        stack.push_async_callback(
            _logged, "outbox watcher", _stop_task, _setter(watching_stop), watching
        )
        # Registered after the adapters, so it stops first: in-flight sends finish while
        # the adapters are still connected.
        stack.push_async_callback(_logged, "dispatcher", _stop_task, dispatcher.stop, dispatching)

        scheduler = BriefingScheduler(runtime)
        await scheduler.start()
        stack.push_async_callback(_logged, "briefing scheduler", scheduler.stop)

        # Start-up objects live as long as the process: keep them out of the collector's
        # full passes, whose pauses would bunch paced sends into 429s.
        gc.freeze()
        _install_signal_handlers(stop)
        log.info(
            "strikebot serving %s at http://%s:%d (adapters: %s)",
            campaign.slug,
            settings.http_host,
            settings.http_port,
            ", ".join(sorted(str(p) for p in runtime.adapters)) or "none",
        )
        await stop.wait()
        log.info("shutting down: finishing in-flight deliveries")


def _platform_adapters(runtime: Runtime, commands: Any) -> dict[Platform, Adapter]:
    """The adapters whose credentials are present in the environment."""
    found: dict[Platform, Adapter] = {}
    settings = runtime.settings
    if settings.discord_token:
        from adapters.discord import DiscordAdapter

        found[Platform.DISCORD] = DiscordAdapter(runtime, commands)
    else:
        log.info("Discord is off: set DISCORD_TOKEN to connect (README: Connect to Discord)")
    if settings.slack_bot_token:
        from adapters.slack import SlackAdapter

        slack = SlackAdapter(runtime, commands)
        found[Platform.SLACK] = slack
        runtime.web_mounts.append(slack.mount)  # HTTP mode: POST /slack/events
    else:
        log.info("Slack is off: set SLACK_BOT_TOKEN to connect (README: Connect to Slack)")
    return found


def _setter(event: asyncio.Event) -> Callable[[], Awaitable[None]]:
    async def set_event() -> None:
        event.set()

    return set_event


async def _stop_task(stop: Callable[[], Awaitable[None]], task: asyncio.Task[None]) -> None:
    await stop()
    await task


async def _logged(name: str, step: Callable[..., Awaitable[None]], *args: Any) -> None:
    """Run one shutdown step; a failure is logged and the remaining steps still run."""
    try:
        await step(*args)
    except Exception:
        log.exception("shutting down the %s failed; carrying on", name)


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
