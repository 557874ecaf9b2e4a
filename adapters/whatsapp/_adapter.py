"""`WhatsAppAdapter`: updates and briefings to families who wrote to the campaign's
WhatsApp number, through Twilio, and the number's messages.

Joining. Nobody is sent anything before they write: a family sends JOIN (UNIRSE, or any
keyword of `bot.ports.Keywords`' join words) to the number, from the page's click-to-chat
link (`https://wa.me/<number>?text=UNIRSE`, offered per language through `Offer.invites`)
or by typing it. That message shows the number is theirs: they are signed up and confirmed
at once, in the keyword's language. STOP (PARAR, BAJA...) forgets the number. Everything
else is read as texts are (`bot.ports.Keywords`): STATUS / ESTADO, DEMANDS, NEXT answered as
chat answers them; anything else gets the short menu and changes nothing.

The 24-hour window. WhatsApp takes free-form messages only within 24 hours of the person's
last message; outside it, only an approved template (Twilio error 63016 otherwise). Each
message a person sends is recorded (`SignUps.heard`); an update or briefing goes free-form
when they wrote within `[whatsapp] window_hours` (23), else as the kind's template
(`[whatsapp.templates.<kind>]`: its content SID per language and what fills its variables).
A template that is missing for the message's kind and language, unknown to Twilio, or not
approved at WhatsApp stops that copy with a sentence for the admins saying which and how
to fix it (`strikebot deliveries retry` sends it once fixed); `strikebot doctor` checks them
all beforehand. Should a free-form message still meet 63016 (it waited in the queue past
the window), its status callback queues the copy again, which then goes as the template:
nothing lost, nothing twice.

Replies to a person's message are the TwiML answer to their webhook (inside the window by
definition). Edits and retractions are new messages, as on texts. Every webhook must carry a
valid `X-Twilio-Signature` (the account's auth token, as for texts); a message handled once
(`MessageSid`) is not handled again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from aiohttp import web
from twilio.request_validator import RequestValidator
from twilio.twiml.messaging_response import MessagingResponse

from bot.ports import (
    ChannelRef,
    Contact,
    Contactable,
    InvalidInput,
    KeywordKind,
    Keywords,
    Link,
    Offer,
    OutboundMessage,
    Outcome,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    ask,
    choice_text,
    guess_language,
    i18n,
    page_url,
)

from ._render import free_form, sender_name, variables
from ._settings import NAME, Template, WhatsAppDelivery, WhatsAppSection, WhatsAppSettings
from ._twilio import NumberRefused, TemplateRefused, WhatsAppClient, template_fields

log = logging.getLogger("strikebot.whatsapp")

INBOUND_PATH = "/whatsapp/inbound"
STATUS_PATH = "/whatsapp/status/{delivery}"
OUTSIDE_WINDOW = "63016"
UNREACHABLE = frozenset({"63003", "63024"})
STATUSES = frozenset(
    {"accepted", "queued", "sending", "sent", "delivered", "undelivered", "failed", "read"}
)
WORDS = i18n.Words("whatsapp")


class WhatsAppAdapter:
    """Delivers WhatsApp messages through Twilio; answers the number's messages."""

    platform = NAME
    edits_in_place = False

    def __init__(self, ctx: PluginContext, *, timeout: float = 20.0) -> None:
        self.ctx = ctx
        self.settings = ctx.settings_as(WhatsAppSettings)
        self.section = ctx.section_as(WhatsAppSection) if ctx.section else WhatsAppSection()
        self.delivery = ctx.delivery_as(WhatsAppDelivery) if ctx.delivery else WhatsAppDelivery()
        self.signups: SignUps = ctx.people
        assert self.settings.account_sid is not None and self.settings.number is not None
        self.client = WhatsAppClient(
            self.settings.api_base,
            self.settings.content_base,
            self.settings.account_sid,
            self.settings.token,
            timeout=timeout,
        )
        self.validator = RequestValidator(self.settings.token)
        self.who = sender_name(ctx.campaign.union, self.section.sender_name)
        self.words = Keywords(ctx.campaign.languages, ctx.campaign.default_language)
        self.window = timedelta(hours=self.section.window_hours)
        self.signups.offer(
            Offer(
                Contact.WHATSAPP,
                NAME,
                quiet_hours=self.section.quiet(),
                countries=tuple(self.section.countries),
                sender_name=self.who,
                by_form=False,
                invites={lang: self.invite(lang) for lang in ctx.campaign.languages},
            )
        )
        self._sent = {"free_form": 0, "template": 0}
        self._refused = 0
        self._forged = 0
        self._resent = 0

    def invite(self, language: str) -> Link:
        """The page's click-to-chat link in `language`: WhatsApp opens a chat with the
        number, the join word already typed."""
        assert self.settings.number is not None
        word = self.words.first_word(KeywordKind.JOIN, language)
        url = f"https://wa.me/{self.settings.number.lstrip('+')}?text={quote(word)}"
        return Link(WORDS[language]["invite"], url)

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Nothing to open: the HTTP session is made with the first message."""

    async def stop(self) -> None:
        await self.client.close()

    def health(self) -> Mapping[str, object]:
        return {
            "connected": True,
            "sent_free_form": self._sent["free_form"],
            "sent_as_template": self._sent["template"],
            "refused": self._refused,
            "sent_again_outside_window": self._resent,
            "refused_unsigned_webhooks": self._forged,
        }

    # -- sending -----------------------------------------------------------------------

    def in_window(self, person: Contactable) -> bool:
        heard = person.heard_at
        return heard is not None and self.ctx.clock() - heard < self.window

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        person = await self.signups.recipient(channel.channel, message)
        free = self.in_window(person)
        fields = {
            "To": f"whatsapp:{person.address}",
            "StatusCallback": self.public(STATUS_PATH.format(delivery=idempotency_key))
            + ("?as=free" if free else "?as=template"),
        }
        if self.settings.messaging_service:
            fields["MessagingServiceSid"] = self.settings.messaging_service
        else:
            fields["From"] = f"whatsapp:{self.settings.number}"
        if free:
            fields["Body"] = free_form(message, sender=self.who)
        else:
            fields |= await self._template(message)
        try:
            sid = await self.client.send(fields)
        except NumberRefused as exc:
            self._refused += 1
            await self.signups.mark_broken(person.key, exc.reason)
            raise PermanentDeliveryError(exc.reason, tell_admins=False) from None
        except TemplateRefused as exc:
            raise PermanentDeliveryError(
                f"{exc.reason}. Check [whatsapp.templates] in the campaign file against "
                "Twilio's Content Template Builder (strikebot doctor lists each template)."
            ) from None
        self._sent["free_form" if free else "template"] += 1
        return sid

    async def find_sent(
        self,
        channel: ChannelRef,
        idempotency_key: str,
        message: OutboundMessage,
        *,
        since: datetime,
    ) -> str | None:
        """The SID of the message a send in doubt created, if Twilio did create it: looked
        for among the messages to the person's number since the delivery was queued, as
        free-form words or as the kind's template filled with this message's values (Twilio
        keeps no key of ours). None when there is none, or when the person has gone."""
        person = await self.signups.contactable(channel.channel)
        if person is None:
            return None
        free = " ".join(free_form(message, sender=self.who).split())
        template = self.section.templates.for_kind(str(message.kind))
        values = variables(message, list(template.variables), sender=self.who) if template else []
        number, service = f"whatsapp:{self.settings.number}", self.settings.messaging_service

        def ours(sent: Mapping[str, Any]) -> bool:
            if (sent.get("messaging_service_sid") if service else sent.get("from")) != (
                service or number
            ):
                return False
            body = " ".join(str(sent.get("body") or "").split())
            return body == free or (bool(values) and all(v in body for v in values))

        return await self.client.find(f"whatsapp:{person.address}", ours, since=since)

    async def _template(self, message: OutboundMessage) -> dict[str, str]:
        """ContentSid and ContentVariables for `message`, or `PermanentDeliveryError` saying
        which template is missing or not approved and how to fix it."""
        kind = str(message.kind)
        template: Template | None = self.section.templates.for_kind(kind)
        sid = template.content.get(message.language) if template is not None else None
        if template is None or sid is None:
            raise PermanentDeliveryError(
                f"WhatsApp takes only an approved template outside the 24-hour window, and "
                f"the campaign file names none for {kind} messages in {message.language}: add "
                f'[whatsapp.templates.{kind}] content.{message.language} = "HX..." (or to '
                "[whatsapp.templates.update]); see docs/whatsapp.md"
            )
        approval = await self.client.approval(sid)
        if approval is not None and not approval.approved:
            why = f" ({approval.reason})" if approval.reason else ""
            raise PermanentDeliveryError(
                f"The WhatsApp template {sid} for {kind} messages in {message.language} is "
                f"{approval.status} at WhatsApp, not approved{why}. Once WhatsApp approves it "
                "(Twilio console, Content Template Builder), send the waiting messages with "
                "strikebot deliveries retry."
            )
        return template_fields(sid, variables(message, list(template.variables), sender=self.who))

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise PermanentDeliveryError("a WhatsApp message is not changed once sent")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("a WhatsApp message is not taken back once sent")

    def public(self, path: str) -> str:
        return f"{self.ctx.campaign.public_url}{path}"

    # -- webhooks ----------------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        app.router.add_post(INBOUND_PATH, self._inbound)
        app.router.add_post(STATUS_PATH, self._status)

    async def _signed_form(self, request: web.Request) -> Mapping[str, str] | None:
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

    async def _inbound(self, request: web.Request) -> web.Response:
        params = await self._signed_form(request)
        if params is None:
            return self._refuse(request)
        sid, sender = params.get("MessageSid", ""), params.get("From", "")
        if not sid or not sender.startswith("whatsapp:"):
            return web.Response(status=400, text="MessageSid and a whatsapp: From are required")
        if not await self.ctx.first_time(sid):
            return _twiml(None)  # a retry or a replay: answered the first time
        reply = await self._answer(sender.removeprefix("whatsapp:"), params.get("Body", ""))
        return _twiml(reply)

    async def _answer(self, sender: str, body: str) -> str | None:
        heard = self.words.read(body)
        kind, word = heard.kind, heard.word.upper()
        campaign = self.ctx.campaign
        language = heard.language
        if kind is None:
            language = guess_language(body, campaign.languages, campaign.default_language)
        try:
            number = self.signups.read(Contact.WHATSAPP, sender)
        except InvalidInput:
            if kind is KeywordKind.STOP:
                return None
            return self._say(language, "bad_number", page_url(campaign, language))
        await self.signups.heard(Contact.WHATSAPP, number)
        url = page_url(campaign, language)
        if kind is KeywordKind.STOP:
            outcome = await self.signups.unsubscribe_address(
                Contact.WHATSAPP, number, via=f"whatsapp {word}"
            )
            return self._say(
                language, "stopped" if outcome is Outcome.UNSUBSCRIBED else "not_subscribed", url
            )
        if kind in (KeywordKind.JOIN, KeywordKind.YES):
            outcome = await self.signups.join(
                Contact.WHATSAPP, number, language=language, via=f"whatsapp {word}"
            )
            await self.signups.heard(Contact.WHATSAPP, number)  # the window of a new person
            key = "already" if outcome is Outcome.ALREADY else "joined"
            return self._say(language, key, url, choice=choice_text("urgent", language))
        person = await self.signups.find(number, Contact.WHATSAPP)
        if kind is None:
            if person is not None:
                language = person.language
            return self._say(language, "menu", page_url(campaign, language))
        if heard.question:
            who = person.key if person is not None and person.confirmed else None
            answer = await ask(
                self.ctx.commands,
                kind,
                platform=NAME,
                person=who,
                language=language,
                argument=heard.argument,  # "ESTADO ROOSEVELT"
            )
            return free_form(answer, sender=self.who)
        mine = await self.ctx.preferences.link_of(Contact.WHATSAPP, number)
        if kind is KeywordKind.PREFS:  # the link to their preferences page, as a text's
            if mine is None:
                return self._say(language, "prefs_none", url)
            return self._say(mine[1], "prefs", url, link=mine[0])
        if mine is None:
            return self._say(language, "help", url)
        if i18n.pick(language) != i18n.source_language():  # both said in one language
            language = i18n.sentence_language(language, ("whatsapp.help", "whatsapp.prefs_line"))
        told = self._say(language, "help", url)
        return f"{told} {self._say(language, 'prefs_line', url, link=mine[0])}"

    def _say(self, language: str, key: str, url: str, **extra: str) -> str:
        values = {"who": self.who, "url": url, "countries": ", ".join(self.section.countries)}
        return WORDS[language][key].format(**(values | extra))

    async def _status(self, request: web.Request) -> web.Response:
        params = await self._signed_form(request)
        if params is None:
            return self._refuse(request)
        delivery = request.match_info["delivery"][:25]
        status = params.get("MessageStatus", params.get("SmsStatus", "")).lower()
        if status not in STATUSES:
            return web.Response(status=400, text="MessageStatus is missing or unknown")
        error = (params.get("ErrorCode") or "")[:16] or None
        known = await self.signups.record_receipt(delivery, NAME, status, error)
        if not known or status not in ("undelivered", "failed"):
            return web.Response(status=204)
        if error == OUTSIDE_WINDOW and request.query.get("as") == "free":
            # The window closed while the message waited: the template goes instead.
            if await self.signups.send_again(
                delivery, NAME, why="WhatsApp 63016: outside the 24-hour window; sent again "
                "as the approved template"
            ):  # fmt: skip
                self._resent += 1
        elif error == OUTSIDE_WINDOW:
            log.error(
                "WhatsApp refused a template outside the 24-hour window (63016): is it "
                "approved? Run strikebot doctor."
            )
        elif error in UNREACHABLE:
            await self.signups.mark_broken_by_delivery(
                delivery, f"the number is not on WhatsApp (Twilio {error})"
            )
        return web.Response(status=204)

    def _refuse(self, request: web.Request) -> web.Response:
        self._forged += 1
        log.warning("refused an unsigned or forged Twilio webhook to %s", request.path)
        return web.Response(
            status=403,
            text="This address only accepts requests signed by Twilio (X-Twilio-Signature).",
        )


def _twiml(text: str | None) -> web.Response:
    reply = MessagingResponse()
    if text:
        reply.message(text)
    return web.Response(text=str(reply), content_type="text/xml")
