"""The main job (`strikebot run`): one process, every resource handed in, `async with` down.

Order of start: store (migrate + seed) → the installed platform plugins that are switched on
(each built from its own `PluginContext`) → the web server with every plugin's routes →
each plugin started → dispatcher → briefing scheduler. Shutdown runs in reverse; a failing
step is logged and the rest still run. The core never names a platform: it finds them
through `bot.plugins.installed_plugins()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from aiohttp import web

from bot.briefings.schedule import BriefingScheduler
from bot.clock import Clock, utcnow
from bot.commands import Commands
from bot.config import Settings, StrikeConfig, clients_for
from bot.delivery.dispatcher import Dispatcher
from bot.delivery.leadership import dispatcher_lock_key, leadership_for
from bot.editorial.admin import Admin
from bot.errors import StrikebotError
from bot.metrics import Metrics
from bot.people.signups import SignUps, signups_for
from bot.plugins import Mountable, Plugin, Plugins, installed_plugins
from bot.plugins.outbound import Adapter, HealthBoard, Reporting, Service
from bot.runtime.context import PluginContext, commands_for, plugin_context
from bot.runtime.doctor import startup_notes, startup_warnings
from bot.runtime.housekeeping import keep_house
from bot.runtime.seed import apply_seed
from bot.runtime.serving import (
    ConnectionGuard,
    Listener,
    accept_batch,
    budget,
    listen,
    quiet_connection_noise,
    raise_file_limit,
    report_refusals,
    request_limits,
    runner_options,
)
from bot.store import Store
from bot.store.wakeups import watch_other_writers

log = logging.getLogger("strikebot")
MAX_REQUEST_BYTES = 256 * 1024  # any request body larger than this gets 413


@dataclass(frozen=True, slots=True)
class Part:
    """One switched-on plugin and what its factory built."""

    plugin: Plugin
    context: PluginContext
    instance: object

    @property
    def adapter(self) -> Adapter | None:
        return self.instance if isinstance(self.instance, Adapter) else None


def build_parts(
    plugins: Plugins,
    settings: Settings,
    config: StrikeConfig,
    *,
    store: Store,
    admin: Admin,
    clock: Clock,
    commands: Commands,
    metrics: Metrics,
    health: HealthBoard,
    signups: SignUps | None = None,
) -> list[Part]:
    """Build every plugin whose settings switch it on; say how to switch on the others.
    Every plugin shares one `SignUps` (e-mail and SMS register what they offer; the web page
    and texts to the number use it)."""
    signups = signups or signups_for(store, config, clock)
    parts = []
    off = []
    for plugin in plugins.values():
        own = settings.plugin(plugin)
        if plugin.create is None:
            continue
        if not own.enabled:
            off.append(plugin.title)
            continue
        context = plugin_context(
            plugin,
            settings,
            config,
            store=store,
            admin=admin,
            clock=clock,
            metrics=metrics,
            health=health,
            commands=commands,
            signups=signups,
        )
        parts.append(Part(plugin, context, plugin.create(context)))
    if off:  # one line, not one per platform: doctor says how to switch each on
        log.info("switched off: %s (`strikebot doctor` says how to switch each on)", ", ".join(off))
    return parts


def adapters_of(parts: list[Part]) -> dict[str, Adapter]:
    return {part.plugin.name: part.adapter for part in parts if part.adapter is not None}


async def serve(
    settings: Settings,
    config: StrikeConfig,
    *,
    clock: Clock = utcnow,
    stop: asyncio.Event | None = None,
    plugins: Plugins | None = None,
) -> None:
    """Run until `stop` is set (or SIGINT/SIGTERM): web, plugins, dispatcher, scheduler."""
    plugins = installed_plugins() if plugins is None else plugins
    stop = stop or asyncio.Event()
    async with AsyncExitStack() as stack:
        # Before anything listens: a SIGTERM while start-up runs (the page already answers,
        # the adapters are still connecting) stops cleanly once start-up ends, not mid-way.
        stack.enter_context(_signals_set(stop))
        # Once, clearly: members would get dead links, or nobody could post.
        for warning in startup_warnings(settings, config, plugins):
            log.warning("check the campaign file: %s", warning)
        store = await stack.enter_async_context(Store.open(settings.database_url))
        await apply_seed(store, config, clock)
        # Once: file entries the database does not follow, and partial catalogues.
        for note in await startup_notes(store, config, clock):
            log.warning("%s", note)
        campaign = config.to_campaign()
        admin = Admin(store, campaign, config.to_admins(), clock)
        metrics, health = Metrics(), HealthBoard()
        commands = commands_for(config, store, admin, clock, metrics, plugins)
        signups = signups_for(store, config, clock)
        # Stops after the web server: the sign-ups it accepted are written before the store
        # closes, and what they deleted is cleared from its files.
        stack.push_async_callback(_logged, "sign-ups", _settle_signups, signups)
        parts = build_parts(
            plugins,
            settings,
            config,
            store=store,
            admin=admin,
            clock=clock,
            commands=commands,
            metrics=metrics,
            health=health,
            signups=signups,
        )
        for part in parts:
            if isinstance(part.instance, Reporting):
                health.parts[part.plugin.name] = part.instance

        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        for mountable in _mountable(parts):
            mountable.mount(app)
        server = config.server
        app.middlewares.append(request_limits(server, metrics))
        runner = web.AppRunner(app, access_log=None, **runner_options(server))
        await runner.setup()
        stack.push_async_callback(_logged, "web server", runner.cleanup)
        stack.enter_context(quiet_connection_noise())
        file_limit = raise_file_limit()
        guard = ConnectionGuard(
            server, clients_for(settings, config), metrics, budget(file_limit, server)
        )
        # What start-up made so far (modules, the app, the plugins) lives as long as the
        # process: out of the collector's full passes before the first answer, so none of
        # them (60-70 ms with this heap, in whichever thread allocates) lands while the
        # catch-up below runs and requests are being answered. Again once started.
        gc.freeze()
        try:
            listening = await listen(
                runner,
                settings.http_host,
                settings.http_port,
                guard,
                batch=accept_batch(file_limit, guard.max_connections),
            )
        except OSError as exc:
            raise StrikebotError(
                f"Cannot listen on {settings.http_host}:{settings.http_port} ({exc.strerror}). "
                "Stop the other program using it or set STRIKEBOT_HTTP_PORT to a free port."
            ) from None
        stack.push_async_callback(_logged, "listener", _close_server, listening)
        reporting_stop = asyncio.Event()
        reporting = asyncio.create_task(report_refusals(guard, reporting_stop))
        stack.push_async_callback(
            _logged, "refusal reports", _stop_task, _setter(reporting_stop), reporting
        )
        log.info(
            "the web server takes %d connections at once (%d per client), headers within "
            "%g s, bodies within %g s",
            guard.max_connections,
            guard.per_client,
            server.header_timeout,
            server.body_timeout,
        )

        for part in parts:
            if isinstance(part.instance, Service):
                await part.instance.start()
                stack.push_async_callback(_logged, part.plugin.title, part.instance.stop)

        adapters = adapters_of(parts)
        # One dispatcher per platform among all instances: one pace per token.
        dispatcher = Dispatcher(
            store,
            adapters,
            campaign,
            clock,
            settings=config.delivery,
            metrics=metrics,
            leadership=lambda platform: leadership_for(store, dispatcher_lock_key(platform)),
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

        housekeeping_stop = asyncio.Event()
        housekeeping = asyncio.create_task(keep_house(store, clock, housekeeping_stop))
        stack.push_async_callback(
            _logged, "housekeeping", _stop_task, _setter(housekeeping_stop), housekeeping
        )

        scheduler = BriefingScheduler(
            store,
            campaign,
            clock,
            grace=timedelta(minutes=config.briefings.grace_minutes),
            metrics=metrics,
        )
        await scheduler.start()
        stack.push_async_callback(_logged, "briefing scheduler", scheduler.stop)

        # Start-up objects live as long as the process: keep them out of the collector's
        # full passes, whose pauses would bunch paced sends into 429s.
        gc.freeze()
        log.info(
            "strikebot serving %s at http://%s:%d (delivering to: %s)",
            campaign.slug,
            settings.http_host,
            settings.http_port,
            ", ".join(sorted(adapters)) or "none",
        )
        await stop.wait()
        log.info("shutting down: finishing in-flight deliveries")


async def _settle_signups(signups: SignUps) -> None:
    async with asyncio.timeout(30):
        await signups.settled()
        await signups.scrubbed()


async def _close_server(listener: Listener) -> None:
    """Stop accepting; the runner's cleanup (next) closes the open connections."""
    listener.close()


def _mountable(parts: list[Part]) -> Iterator[Mountable]:
    for part in parts:
        if isinstance(part.instance, Mountable):
            yield part.instance


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


@contextlib.contextmanager
def _signals_set(stop: asyncio.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` while serving; the process's own handlers after."""
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
