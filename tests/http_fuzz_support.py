"""The whole web surface as `strikebot run` serves it, for the bad-input and fuzz tests: the
public pages and API, the admin API (token set), Slack's `/slack/events` in HTTP mode, and the
endpoints the other plugins add: the sign-up form and its confirmations, e-mail's one-click
unsubscribe, Twilio's inbound texts and status callbacks, Telegram's webhook, Discord's
Interactions Endpoint URL. One aiohttp server on 127.0.0.1; Slack, SMTP, Twilio, Telegram
and Discord answered by their fakes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from aiohttp import web
from aiohttp.test_utils import TestClient

from adapters.discord import DiscordAdapter
from adapters.email import EmailAdapter
from adapters.slack import SlackAdapter
from adapters.telegram import TelegramAdapter
from adapters.twilio.sms import SmsAdapter
from bot.clock import FixedClock
from bot.config import Settings
from bot.editorial.admin import Admin
from bot.people.signups import signups_for
from bot.plugins import installed_plugins
from bot.runtime.context import PluginContext, plugin_context
from bot.store import Store
from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import SIGNING_SECRET, FakeSlack, bot_config, sign
from tests.fakes.smtp import FakeSmtp
from tests.fakes.telegram import FakeTelegram
from tests.fakes.twilio import FakeTwilio
from tests.family_support import family_env
from tests.strike_week import strike_week
from tests.web_support import TOKEN, client_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
TELEGRAM_WEBHOOK = "https://strike.example.org/telegram/webhook"


@dataclass(slots=True)
class Served:
    client: TestClient[web.Request, web.Application]
    ctx: PluginContext  # the web plugin's
    slack: FakeSlack
    telegram_secret: str  # what Telegram sends in X-Telegram-Bot-Api-Secret-Token
    discord_sign: Callable[[bytes], dict[str, str]]  # Discord's signature headers for a body


@asynccontextmanager
async def served(store: Store, clock: FixedClock) -> AsyncIterator[Served]:
    async with AsyncExitStack() as stack:
        slack = await stack.enter_async_context(FakeSlack())
        smtp = await stack.enter_async_context(FakeSmtp())
        twilio = await stack.enter_async_context(FakeTwilio())
        tg = await stack.enter_async_context(FakeTelegram())
        discord = await stack.enter_async_context(FakeDiscord())
        slack.add_channel("C0GENERAL")
        slack.add_user("U0MEMBER", "maria")
        env = {
            "STRIKEBOT_ADMIN_TOKEN": TOKEN,
            "SLACK_BOT_TOKEN": slack.bot_token,
            "SLACK_API_URL": slack.api_url,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "TELEGRAM_BOT_TOKEN": tg.token,
            "TELEGRAM_API_BASE": tg.base_url,
            "TELEGRAM_WEBHOOK_URL": TELEGRAM_WEBHOOK,
            "DISCORD_TOKEN": discord.token,
            "DISCORD_API_BASE": discord.api_base,
            "DISCORD_GATEWAY_URL": discord.gateway_url,
            "DISCORD_PUBLIC_KEY": discord.public_key,
            **family_env(smtp, twilio),
        }
        config = bot_config("http", telegram={"mode": "webhook"}, sms={"sender_name": "UTLA"})
        settings = Settings.from_env(env)
        signups = signups_for(store, config, clock)
        admin = Admin(store, config.to_campaign(), config.to_admins(), clock)
        plugins = installed_plugins()

        def ctx(name: str) -> PluginContext:
            return plugin_context(
                plugins[name], settings, config, store=store, admin=admin, clock=clock,
                signups=signups,
            )  # fmt: skip

        site = ctx("web")
        await strike_week(store, clock)
        slack_adapter = SlackAdapter(ctx("slack"), request_timeout=5.0)
        telegram = TelegramAdapter(ctx("telegram"), request_timeout=5.0, poll_timeout=1)
        email = EmailAdapter(ctx("email"), timeout=5)
        sms = SmsAdapter(ctx("sms"), timeout=2)
        discord_adapter = DiscordAdapter(ctx("discord"), guild_ready_timeout=0)
        for part in (slack_adapter, telegram, email, sms, discord_adapter):
            stack.push_async_callback(part.stop)
        await slack_adapter.start()
        await telegram.start()
        await discord_adapter.start()
        client = await stack.enter_async_context(
            client_for(site, slack_adapter, telegram, email, sms, discord_adapter)
        )
        yield Served(client, site, slack, telegram.secret, discord.sign)


def signed(body: bytes | str, content_type: str | None = None) -> dict[str, str]:
    """Headers Slack would send with `body`, signed with the test signing secret now."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    headers = sign(SIGNING_SECRET, text, int(time.time()))
    if content_type is not None:
        headers["Content-Type"] = content_type
    return headers
