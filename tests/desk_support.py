"""Shared by the web desk's tests: the bot as `strikebot run` wires it for the desk.

`desk_rig` serves the web plugin (with the desk) and the e-mail plugin on one real aiohttp
server on 127.0.0.1, sending through a real SMTP server (`FakeSmtp`, aiosmtpd), with a
dispatcher that drains the outbox into e-mail and into a fake chat platform
(`FakePlatform`, as "discord"). The campaign file lists the desk's people under
`[admins.web]`; `public_url` is the server's own address, so the links e-mailed work.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from email.message import EmailMessage
from typing import Any

from aiohttp import web

from adapters.email import EmailAdapter
from adapters.web import WebSurface
from bot.clock import Clock
from bot.config import Settings, StrikeConfig
from bot.delivery.dispatcher import Dispatcher, DrainStats, Timings
from bot.editorial.admin import Admin
from bot.models import Campaign, Subscription
from bot.people.signups import SignUps, signups_for
from bot.plugins import installed_plugins
from bot.runtime.context import PluginContext, plugin_context
from bot.store import Store
from tests.fakes.platform import FakePlatform, FakePlatformAdapter
from tests.fakes.smtp import FakeSmtp
from tests.support import ADMIN, ADMINS, CAMPAIGN, campaign_config, free_port

LEAD = "lead@utla.example.org"
SECOND = "second@utla.example.org"
MAIL_FROM = "UTLA Desk <desk@utla.example.org>"
CHANNELS = (("G1", "picket-news"), ("G1", "familias"))  # the fake platform's channels


@dataclass
class Rig:
    store: Store
    clock: Clock
    campaign: Campaign
    config: StrikeConfig
    admin: Admin
    web: PluginContext
    signups: SignUps
    smtp: FakeSmtp
    chat: FakePlatform
    dispatcher: Dispatcher
    url: str  # http://127.0.0.1:PORT

    async def drain(self) -> DrainStats:
        return await self.dispatcher.drain()

    def mails_to(self, address: str) -> list[EmailMessage]:
        return self.smtp.to(address)


LINK = re.compile(r"(http://127\.0\.0\.1:\d+/desk/sign-in/[\w-]+\?lang=\w+)")


def sign_in_link(mail: EmailMessage) -> str:
    """The sign-in link in a desk e-mail's text part."""
    part = mail.get_body(preferencelist=("plain",))
    assert part is not None
    found = LINK.search(str(part.get_content()))
    assert found is not None, part.get_content()
    return found.group(1)


def desk_config(
    campaign: Campaign, emails: Sequence[str], *, require_approval: bool = True, **sections: Any
) -> StrikeConfig:
    return campaign_config(
        replace(campaign, require_approval=require_approval),
        admins={"web": {"emails": list(emails)}},
        **sections,
    )


@asynccontextmanager
async def desk_rig(
    store: Store,
    clock: Clock,
    *,
    emails: Sequence[str] = (LEAD, SECOND),
    port: int | None = None,
    smtp: FakeSmtp | None = None,
    chat: FakePlatform | None = None,
    require_approval: bool = True,
) -> AsyncIterator[Rig]:
    """The desk on 127.0.0.1 at `port` (a free one by default); `smtp` and `chat` may be
    carried over from a rig before (the bot restarted with another campaign file)."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    campaign = replace(CAMPAIGN, public_url=url, require_approval=require_approval)
    config = desk_config(campaign, emails, require_approval=require_approval)
    async with _maybe(smtp, FakeSmtp) as mail, _maybe(chat, FakePlatform) as platform:
        env = {"STRIKEBOT_SMTP_URL": mail.url, "STRIKEBOT_MAIL_FROM": MAIL_FROM}
        settings = Settings.from_env(env)
        admin = Admin(store, campaign, config.to_admins(), clock)
        signups = signups_for(store, config, clock)
        plugins = installed_plugins()
        commands = None

        def ctx(name: str) -> PluginContext:
            return plugin_context(
                plugins[name], settings, config, store=store, admin=admin, clock=clock,
                signups=signups, commands=commands,
            )  # fmt: skip

        web_ctx = ctx("web")
        commands = web_ctx.commands
        email = EmailAdapter(ctx("email"), timeout=5)
        chat_adapter = FakePlatformAdapter(platform.url, platform="discord")
        await chat_adapter.start()
        app = web.Application(client_max_size=256 * 1024)
        WebSurface(web_ctx).mount(app)
        email.mount(app)
        dispatcher = Dispatcher(
            store,
            {"email": email, "discord": chat_adapter},
            campaign,
            clock,
            settings=config.delivery,
            worker_id="desk",
            timings=Timings(retry_base=0.01, retry_cap=0.05, send_timeout=10),
        )
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        try:
            yield Rig(
                store, clock, campaign, config, admin, web_ctx, signups, mail, platform,
                dispatcher, url,
            )  # fmt: skip
        finally:
            await runner.cleanup()
            await email.stop()
            await chat_adapter.stop()


@asynccontextmanager
async def _maybe(given: Any, kind: Any) -> AsyncIterator[Any]:
    if given is not None:
        yield given
        return
    async with kind() as made:
        yield made


async def subscribe_channels(rig: Rig) -> list[Subscription]:
    """The fake platform's channels, subscribed to every update (one in Spanish)."""
    admin = Admin(rig.store, rig.campaign, ADMINS, rig.clock)
    subs = []
    for (workspace, channel), language in zip(CHANNELS, ("en", "es"), strict=True):
        subs.append(
            await admin.subscribe(
                ADMIN,
                Subscription(
                    id=0,
                    platform="discord",
                    workspace=workspace,
                    channel=channel,
                    language=language,
                    timezone=rig.campaign.timezone,
                    label=f"#{channel}",
                ),
            )
        )
    return subs
