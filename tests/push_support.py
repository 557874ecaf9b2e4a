"""Shared by the browser-notification tests: the page (web plugin) and the Web Push plugin
as `strikebot run` wires them, sharing one `SignUps`, on one aiohttp server on 127.0.0.1,
against `FakePushService`, with a dispatcher draining the outbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from adapters.web import WebSurface
from adapters.webpush import WebPushAdapter
from bot.clock import FixedClock
from bot.config import Settings
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Admin
from bot.models import Campaign
from bot.people.signups import SignUps, signups_for
from bot.plugins import installed_plugins
from bot.runtime.context import PluginContext, plugin_context
from bot.store import Store
from tests.fakes.push import FakePushService
from tests.support import ADMINS, CAMPAIGN, campaign_config

# A fixed VAPID key for tests (`strikebot webpush keys` makes real ones).
VAPID_PRIVATE = "2KRnxRbwjloO2lUjzXs3ub7yCd18x9-OnnzFn2zLjlc"
VAPID_PUBLIC = (
    "BIRP8XZHGhyoRscTwJOUjpFNhWrfy-pOULNCj0uKWRAIMzl30Es8eGbZRhCOxG_NIiJ28a9zAolUe_SmLfzn5mk"
)
SUBJECT = "mailto:comms@utla.example.org"


@dataclass
class PushBot:
    store: Store
    clock: FixedClock
    admin: Admin
    signups: SignUps
    adapter: WebPushAdapter
    client: TestClient[web.Request, web.Application]
    dispatcher: Dispatcher
    push: FakePushService

    async def subscribe(
        self, subscription: dict[str, Any], language: str = "en", receive: str = "all"
    ) -> tuple[int, dict[str, Any]]:
        """What the page's button posts."""
        response = await self.client.post(
            "/push/subscriptions",
            json={"subscription": subscription, "language": language, "receive": receive},
        )
        return response.status, await response.json()


@asynccontextmanager
async def push_bot(
    store: Store,
    clock: FixedClock,
    push: FakePushService,
    *,
    request_timeout: float = 5.0,
    campaign: Campaign = CAMPAIGN,
    env: dict[str, str] | None = None,
) -> AsyncIterator[PushBot]:
    config = campaign_config(campaign, webpush={"services": [push.url]})
    settings = Settings.from_env(
        {"WEBPUSH_VAPID_PRIVATE_KEY": VAPID_PRIVATE, "WEBPUSH_VAPID_SUBJECT": SUBJECT} | (env or {})
    )
    admin = Admin(store, campaign, ADMINS, clock)
    signups = signups_for(store, config, clock)
    plugins = installed_plugins()

    def ctx(name: str) -> PluginContext:
        return plugin_context(
            plugins[name], settings, config, store=store, admin=admin, clock=clock, signups=signups
        )

    adapter = WebPushAdapter(ctx("webpush"), timeout=request_timeout)
    app = web.Application(client_max_size=256 * 1024)
    WebSurface(ctx("web")).mount(app)
    adapter.mount(app)
    dispatcher = Dispatcher(
        store, {"webpush": adapter}, campaign, clock, settings=config.delivery,
        worker_id="push", timings=Timings(retry_base=0.01, retry_cap=0.05, send_timeout=10),
    )  # fmt: skip
    server = TestServer(app, host="127.0.0.1", port=0)
    async with TestClient(server) as client:
        try:
            yield PushBot(store, clock, admin, signups, adapter, client, dispatcher, push)
        finally:
            await signups.scrubbed()  # as `strikebot run` does before it stops
            await adapter.stop()
