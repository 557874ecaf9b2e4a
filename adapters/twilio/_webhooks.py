"""A Twilio number's two webhooks, for texts and WhatsApp alike: `POST /<platform>/inbound`
(the number's "A message comes in") and `POST /<platform>/status/{delivery}` (what became of
one message sent, the status callback).

Every request must carry a valid `X-Twilio-Signature` (HMAC-SHA1 of the public URL and the
sorted parameters with the auth token, checked by `twilio.request_validator`): anything
unsigned or forged gets 403 and changes nothing. A message handled once (`MessageSid`) is
not handled again when Twilio retries it or someone replays it; the plugin's answer to it is
TwiML (`MessagingResponse`), which Twilio sends back as the reply. A receipt is recorded;
one that failed goes on to the plugin with Twilio's error code.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web
from twilio.request_validator import RequestValidator
from twilio.twiml.messaging_response import MessagingResponse

from bot.ports import PluginContext

STATUSES = frozenset(
    {"accepted", "queued", "sending", "sent", "delivered", "undelivered", "failed", "read"}
)
# (the sender's number, the message's body) -> the reply, if any.
Answer = Callable[[str, str], Awaitable[str | None]]
# (delivery id, Twilio's error code, the request) for a message undelivered or failed.
Failed = Callable[[str, str | None, web.Request], Awaitable[None]]


class Webhooks:
    """The inbound and status webhooks of one plugin's number; `channel` is the prefix of
    the numbers Twilio writes ("whatsapp:")."""

    def __init__(
        self,
        ctx: PluginContext,
        token: str,
        *,
        platform: str,
        answer: Answer,
        failed: Failed,
        channel: str = "",
    ) -> None:
        self.ctx, self.platform, self.channel = ctx, platform, channel
        self.answer, self.failed = answer, failed
        self.validator = RequestValidator(token)
        self.inbound_path = f"/{platform}/inbound"
        self.status_path = f"/{platform}/status/{{delivery}}"
        self.log = logging.getLogger(f"strikebot.{platform}")
        self.forged = 0

    def callback(self, delivery: str) -> str:
        """The status callback's public URL for one delivery."""
        return self.public(self.status_path.format(delivery=delivery))

    def public(self, path: str) -> str:
        return f"{self.ctx.campaign.public_url}{path}"

    def mount(self, app: web.Application) -> None:
        app.router.add_post(self.inbound_path, self.inbound)
        app.router.add_post(self.status_path, self.status)

    async def signed_form(self, request: web.Request) -> Mapping[str, str] | None:
        """The POST parameters if Twilio signed them for our public URL, else None."""
        signature = request.headers.get("X-Twilio-Signature", "")
        if request.content_type != "application/x-www-form-urlencoded" or not signature:
            return None
        form = await request.post()
        params = {k: v for k, v in form.items() if isinstance(v, str)}
        if len(params) != len(form):
            return None
        if not self.validator.validate(self.public(request.rel_url.path_qs), params, signature):
            return None
        return params

    async def inbound(self, request: web.Request) -> web.Response:
        params = await self.signed_form(request)
        if params is None:
            return self.refuse(request)
        sid, sender = params.get("MessageSid", ""), params.get("From", "")
        if not sid or not sender or not sender.startswith(self.channel):
            what = f"a {self.channel} From" if self.channel else "From"
            return web.Response(status=400, text=f"MessageSid and {what} are required")
        if not await self.ctx.first_time(sid):
            return twiml(None)  # a retry or a replay: answered the first time
        reply = await self.answer(sender.removeprefix(self.channel), params.get("Body", ""))
        return twiml(reply)

    async def status(self, request: web.Request) -> web.Response:
        params = await self.signed_form(request)
        if params is None:
            return self.refuse(request)
        delivery = request.match_info["delivery"][:25]
        status = params.get("MessageStatus", params.get("SmsStatus", "")).lower()
        if status not in STATUSES:
            return web.Response(status=400, text="MessageStatus is missing or unknown")
        error = (params.get("ErrorCode") or "")[:16] or None
        known = await self.ctx.people.record_receipt(delivery, self.platform, status, error)
        if known and status in ("undelivered", "failed"):
            await self.failed(delivery, error, request)
        return web.Response(status=204)

    def refuse(self, request: web.Request) -> web.Response:
        self.forged += 1
        self.log.warning("refused an unsigned or forged Twilio webhook to %s", request.path)
        return web.Response(
            status=403,
            text="This address only accepts requests signed by Twilio (X-Twilio-Signature).",
        )


def twiml(text: str | None) -> web.Response:
    reply = MessagingResponse()
    if text:
        reply.message(text)
    return web.Response(text=str(reply), content_type="text/xml")
