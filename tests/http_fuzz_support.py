"""The whole web surface as `strikebot run` serves it, for the bad-input and fuzz tests: the
public pages and API, the admin API (token set) and Slack's `/slack/events` in HTTP mode,
on one aiohttp server on 127.0.0.1, with the Slack Web API answered by the fake Slack."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from aiohttp.test_utils import TestClient

from adapters.slack import SlackAdapter
from bot.clock import FixedClock
from bot.context import PluginContext
from bot.store import Store
from tests.fakes.slack import SIGNING_SECRET, FakeSlack, bot_config, sign
from tests.strike_week import strike_week
from tests.support import plugin_ctx
from tests.web_support import TOKEN, client_for, web_context

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass(slots=True)
class Served:
    client: TestClient[web.Request, web.Application]
    ctx: PluginContext  # the web plugin's
    slack: FakeSlack


@asynccontextmanager
async def served(store: Store, clock: FixedClock) -> AsyncIterator[Served]:
    async with FakeSlack() as slack:
        slack.add_channel("C0GENERAL")
        slack.add_user("U0MEMBER", "maria")
        site = web_context(store, clock)
        slack_ctx = plugin_ctx(
            "slack",
            store,
            clock,
            env={
                "SLACK_BOT_TOKEN": slack.bot_token,
                "SLACK_API_URL": slack.api_url,
                "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            },
            config=bot_config("http"),
        )
        await strike_week(store, clock, site.admin)
        adapter = SlackAdapter(slack_ctx, request_timeout=5.0)
        await adapter.start()
        try:
            async with client_for(site, adapter) as client:
                yield Served(client, site, slack)
        finally:
            await adapter.stop()


def signed(body: bytes | str, content_type: str | None = None) -> dict[str, str]:
    """Headers Slack would send with `body`, signed with the test signing secret now."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    headers = sign(SIGNING_SECRET, text, int(time.time()))
    if content_type is not None:
        headers["Content-Type"] = content_type
    return headers
