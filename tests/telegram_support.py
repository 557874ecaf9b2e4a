"""The Telegram plugin as `strikebot run` builds it, against the fake Bot API."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from adapters.telegram import TelegramAdapter
from adapters.webhooks import WebhookAdapter
from bot.clock import FixedClock
from bot.config import StrikeConfig
from bot.delivery.dispatcher import Dispatcher, DrainStats, Timings
from bot.plugins.outbound import Adapter
from bot.store import Store
from tests.fakes.telegram import FakeTelegram
from tests.support import campaign_config, plugin_ctx

ADMIN_ID = 111  # listed in [admins.telegram] user_ids
CHAT_ADMIN_ID = 222  # an administrator of the admin group
MEMBER_ID = 333
SPANISH_ID = 444
GROUP = -1001000000001
SECOND_GROUP = -1001000000002
FORUM = -1001000000003
CHANNEL = -1001000000004
ADMIN_GROUP = -1001000000009


def telegram_config(**extra: Any) -> StrikeConfig:
    sections: dict[str, Any] = {
        "admins": {
            "telegram": {"user_ids": [str(ADMIN_ID)], "admin_chat_ids": [str(ADMIN_GROUP)]},
            "console": {"user_ids": ["console"]},
        },
        "webhooks": {"allowed_networks": ["127.0.0.0/8"]},
    }
    return campaign_config(**{**sections, **extra})


class TelegramRig:
    """`async with TelegramRig(store, clock, tg) as rig:` the adapter started against the
    fake (long polling, or webhook mode with `webhook=True`), and a dispatcher."""

    def __init__(
        self,
        store: Store,
        clock: FixedClock,
        tg: FakeTelegram,
        *,
        webhook_url: str | None = None,
        request_timeout: float = 5.0,
        config: StrikeConfig | None = None,
        env: Mapping[str, str] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.clock, self.tg = store, clock, tg
        self.config = config or telegram_config(
            telegram={"mode": "webhook" if webhook_url else "polling"},
            delivery={"admin_channels": [f"telegram:{ADMIN_GROUP}/{ADMIN_GROUP}"]},
        )
        self.env = {"TELEGRAM_BOT_TOKEN": tg.token, "TELEGRAM_API_BASE": tg.base_url}
        if webhook_url:
            self.env["TELEGRAM_WEBHOOK_URL"] = webhook_url
        self.env.update(env or {})
        self.ctx = plugin_ctx(
            "telegram", store, clock, env=self.env, config=self.config,
            admins=self.config.to_admins(),
        )  # fmt: skip
        self.admin = self.ctx.admin
        self.adapter = TelegramAdapter(
            self.ctx, request_timeout=request_timeout, poll_timeout=1, monotonic=monotonic
        )
        self.extra: dict[str, Adapter] = {}

    async def __aenter__(self) -> TelegramRig:
        await self.adapter.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.adapter.stop()
        for extra in self.extra.values():
            await extra.stop()

    async def with_webhooks(self) -> WebhookAdapter:
        ctx = plugin_ctx(
            "webhooks", self.store, self.clock, config=self.config, admins=self.config.to_admins()
        )
        adapter = WebhookAdapter(ctx)
        await adapter.start()
        self.extra["webhooks"] = adapter
        return adapter

    async def deliver(self) -> DrainStats:
        dispatcher = Dispatcher(
            self.store,
            {"telegram": self.adapter, **self.extra},
            self.ctx.campaign,
            self.clock,
            settings=self.config.delivery,
            worker_id="telegram-test",
            rng=random.Random(7),
            timings=Timings(inline_retry_limit=0.0, send_timeout=10.0),
        )
        return await dispatcher.drain()
