"""Shared by the e-mail and SMS tests: the bot as `strikebot run` wires it for families.

`Families` holds the web page, the e-mail plugin (against a real SMTP server, `FakeSmtp`)
and the SMS plugin (against `FakeTwilio`), all on one aiohttp server on 127.0.0.1 sharing
one `SignUps`, and a dispatcher draining the outbox into both. Times come from the test's
fixed clock.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from adapters.email import EmailAdapter
from adapters.sms import SmsAdapter
from adapters.web import WebSurface
from adapters.whatsapp import WhatsAppAdapter
from bot.clock import FixedClock
from bot.config import Settings, StrikeConfig
from bot.delivery.dispatcher import Dispatcher, DrainStats, Timings
from bot.editorial.admin import Admin
from bot.people.signups import SignUps, signups_for
from bot.plugins import installed_plugins
from bot.runtime.context import PluginContext, plugin_context
from bot.store import Store
from tests.fakes.smtp import FakeSmtp
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM, FakeTwilio, signed_request
from tests.support import ADMINS, CAMPAIGN, campaign_config

MAIL_FROM = "UTLA Strike News <news@utla.example.org>"


WHATSAPP_FROM = "+12135550199"  # the campaign's WhatsApp sender


def family_env(
    smtp: FakeSmtp | None, twilio: FakeTwilio | None, whatsapp: bool = False
) -> dict[str, str]:
    env: dict[str, str] = {}
    if smtp is not None:
        env |= {"STRIKEBOT_SMTP_URL": smtp.url, "STRIKEBOT_MAIL_FROM": MAIL_FROM}
    if twilio is not None:
        env |= {
            "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
            "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "TWILIO_FROM": FROM,
            "TWILIO_API_BASE": twilio.url,
        }
        if whatsapp:
            env |= {"TWILIO_WHATSAPP_FROM": WHATSAPP_FROM, "TWILIO_CONTENT_API_BASE": twilio.url}
    return env


@dataclass
class Families:
    store: Store
    clock: FixedClock
    admin: Admin
    signups: SignUps
    email: EmailAdapter | None
    sms: SmsAdapter | None
    client: TestClient[web.Request, web.Application]
    dispatcher: Dispatcher
    smtp: FakeSmtp | None
    twilio: FakeTwilio | None
    whatsapp: WhatsAppAdapter | None = None

    @property
    def server(self) -> str:
        return str(self.client.make_url("/")).rstrip("/")

    async def drain(self) -> DrainStats:
        await self.signups.settled()  # sign-ups are written after their answer
        return await self.dispatcher.drain()

    async def sign_up(
        self,
        data: Mapping[str, str],
        path: str = "/subscribe",
        headers: Mapping[str, str] | None = None,
    ) -> ClientResponse:
        """Fill in and send the sign-up form at `path` as a browser would: the form's page
        first (its token and cookie), then the POST from it."""
        token = await self.form_token(path)
        return await self.client.post(
            path, data={**data, "form_token": token}, headers={**(headers or {})}
        )

    async def form_token(self, path: str = "/subscribe") -> str:
        """The hidden token of the form on the page at `path` (its cookie kept)."""
        page = await (await self.client.get(path)).text()
        found = re.search(r'name="form_token" value="([^"]+)"', page)
        return found.group(1) if found else ""  # a page without a form (an expired link)

    async def confirm(self, path: str) -> ClientResponse:
        """Open a confirmation link and press its button."""
        return await self.client.post(path, data={"form_token": await self.form_token(path)})

    async def text_in(self, sender: str, body: str, sid: str) -> tuple[int, str]:
        """An incoming text to the number, signed as Twilio signs it."""
        from tests.fakes.twilio import inbound

        return await signed_request(
            self.server, f"{self.admin.campaign.public_url}/sms/inbound", inbound(sender, body, sid)
        )

    async def whatsapp_in(self, sender: str, body: str, sid: str) -> tuple[int, str]:
        """A WhatsApp message to the campaign's number, signed as Twilio signs it (the fake
        opens the sender's 24-hour window, as WhatsApp would)."""
        assert self.twilio is not None
        params = self.twilio.whatsapp_in(sender, body, sid, to=WHATSAPP_FROM)
        url = f"{self.admin.campaign.public_url}/whatsapp/inbound"
        return await signed_request(self.server, url, params)

    async def callbacks(self) -> list[int]:
        """Twilio's status callbacks for every WhatsApp message sent so far."""
        assert self.twilio is not None
        return await self.twilio.send_callbacks(self.server)


@asynccontextmanager
async def families(
    store: Store,
    clock: FixedClock,
    *,
    smtp: FakeSmtp | None = None,
    twilio: FakeTwilio | None = None,
    config: StrikeConfig | None = None,
    email_timeout: float = 5,
    sms_timeout: float = 2,
    whatsapp: bool = False,
    whatsapp_section: dict[str, Any] | None = None,
    **sections: Any,
) -> AsyncIterator[Families]:
    if whatsapp_section is not None:
        sections["whatsapp"] = whatsapp_section
    config = config or campaign_config(CAMPAIGN, **sections)
    settings = Settings.from_env(family_env(smtp, twilio, whatsapp))
    campaign = config.to_campaign()
    admin = Admin(store, campaign, ADMINS, clock)
    signups = signups_for(store, config, clock)
    plugins = installed_plugins()

    def ctx(name: str) -> PluginContext:
        return plugin_context(
            plugins[name], settings, config, store=store, admin=admin, clock=clock, signups=signups
        )

    email = EmailAdapter(ctx("email"), timeout=email_timeout) if smtp is not None else None
    sms = SmsAdapter(ctx("sms"), timeout=sms_timeout) if twilio is not None else None
    wa = WhatsAppAdapter(ctx("whatsapp"), timeout=sms_timeout) if whatsapp else None
    app = web.Application(client_max_size=256 * 1024)
    WebSurface(ctx("web")).mount(app)
    adapters: dict[str, Any] = {}
    for part in (email, sms, wa):
        if part is not None:
            part.mount(app)
            adapters[part.platform] = part
    dispatcher = Dispatcher(
        store,
        adapters,
        campaign,
        clock,
        settings=config.delivery,
        worker_id="families",
        timings=Timings(retry_base=0.01, retry_cap=0.05, send_timeout=10),
    )
    async with TestClient(TestServer(app)) as client:
        try:
            yield Families(
                store, clock, admin, signups, email, sms, client, dispatcher, smtp, twilio, wa
            )
        finally:
            await signups.settled()  # as `strikebot run` does before the store closes
            await signups.scrubbed()
            for part in (email, sms, wa):
                if part is not None:
                    await part.stop()


CONFIRM_LINK = re.compile(r"https://strike\.example\.org(/(?:es/)?subscribe/confirm/[\w-]+)")


def confirm_path(mail: EmailMessage) -> str:
    """The path of the confirmation link in a confirmation e-mail's text part."""
    text = text_of(mail)
    found = CONFIRM_LINK.search(text)
    assert found is not None, text
    return found.group(1)


def text_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("plain",))
    assert part is not None
    content = part.get_content()
    assert isinstance(content, str)
    return content


def html_of(mail: EmailMessage) -> str:
    part = mail.get_body(preferencelist=("html",))
    assert part is not None
    content = part.get_content()
    assert isinstance(content, str)
    return content


def form(**fields: str) -> Mapping[str, str]:
    return fields


LATER = timedelta(minutes=11)
