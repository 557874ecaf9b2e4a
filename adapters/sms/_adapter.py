"""`SmsAdapter`: texts to people who signed up, through Twilio, and the number's replies.

Sending. The subscription's channel is a person's opaque key; the number is read from the
store at send time and goes nowhere else (not a log line, not an error). Each text is cut to
`[sms] max_segments` with the link to the page (`_render.py`); the campaign's quiet hours
are in the subscription (urgent updates skip them; see `bot.delivery.planning.release_time`). Twilio
calls back `/sms/status/{delivery id}` with what became of each text: recorded as a
receipt; a number that cannot receive (30003, 30005, 30006) is marked broken. A send
whose answer was lost after it went out is in doubt: before it is sent again, `find_sent`
looks for the text at Twilio (`bot.ports.FindsSent`), so it goes once.

Receiving, `POST /sms/inbound` (the number's "A message comes in" webhook). Every request
must carry a valid `X-Twilio-Signature` (HMAC-SHA1 of the public URL and the sorted
parameters with the auth token, checked by `twilio.request_validator`): anything unsigned
or forged gets 403 and changes nothing. A message handled once (`MessageSid`) is not
handled again when Twilio retries it or someone replays it. A message is a keyword only
when the whole of it is one (`bot.ports.Keywords`: trimmed, case and accents ignored, as
Twilio reads STOP), in English or the campaign's languages:

    JOIN / UNIRSE / START        sign up (and confirm: the text came from the phone itself);
                                 with the web form's code (JOIN 482913), its choices
    YES / SÍ                     confirm a sign-up made on the web page
    STOP, STOPALL, UNSUBSCRIBE,  unsubscribe at once, and the number is deleted
      CANCEL, END, QUIT, REVOKE,
      OPTOUT, PARAR, BAJA...
    HELP / AYUDA / INFO          who is sending and how to stop
    STATUS / ESTADO, DEMANDS /   answered as `/strike status`, `demands`, `next` answer in
      DEMANDAS, NEXT / SIGUIENTE chat, cut to the text's segments, with the page's link

Anything else ("End of the strike, when?") gets a short menu in the sender's language and
changes nothing.

The answer is TwiML (`MessagingResponse`): Twilio sends it back as the reply.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import datetime

from aiohttp import web
from twilio.request_validator import RequestValidator
from twilio.twiml.messaging_response import MessagingResponse

from bot.ports import (
    ChannelRef,
    Contact,
    InvalidInput,
    KeywordKind,
    Keywords,
    Offer,
    OutboundMessage,
    Outcome,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    ask,
    choice_term,
    guess_language,
    i18n,
    page_url,
    show_phone,
)

from ._render import fit_own, render_text, short_name
from ._settings import NAME, SmsDelivery, SmsSection, SmsSettings
from ._twilio import NumberRefused, Sender, TwilioClient

log = logging.getLogger("strikebot.sms")

INBOUND_PATH = "/sms/inbound"
JOIN_CODE = re.compile(r"(?<!\d)(\d{6})(?!\d)")  # the web form's code after JOIN
STATUS_PATH = "/sms/status/{delivery}"
# Twilio's delivery errors that mean the number cannot receive texts at all.
UNREACHABLE = frozenset({"30003", "30005", "30006", "21610", "21614"})
STATUSES = frozenset(
    {"accepted", "queued", "sending", "sent", "delivered", "undelivered", "failed", "read"}
)

REPLIES = i18n.Words("sms")


class SmsAdapter:
    """Delivers texts through Twilio; answers the number's inbound texts and callbacks."""

    platform = NAME
    edits_in_place = False

    def __init__(self, ctx: PluginContext, *, timeout: float = 20.0) -> None:
        self.ctx = ctx
        self.settings = ctx.settings_as(SmsSettings)
        self.section = ctx.section_as(SmsSection) if ctx.section else SmsSection()
        self.delivery = ctx.delivery_as(SmsDelivery) if ctx.delivery else SmsDelivery()
        self.signups: SignUps = ctx.people
        assert self.settings.account_sid is not None
        self.client = TwilioClient(
            self.settings.api_base, self.settings.account_sid, self.settings.token, timeout=timeout
        )
        self.sender = Sender(self.settings.sender, self.settings.messaging_service)
        self.validator = RequestValidator(self.settings.token)
        self.who = short_name(ctx.campaign, self.section)
        self.words = Keywords(ctx.campaign.languages, ctx.campaign.default_language)
        self.signups.offer(
            Offer(
                Contact.PHONE,
                NAME,
                quiet_hours=self.section.quiet(),
                countries=tuple(self.section.countries),
                sender_name=self.who,
                number=show_phone(self.settings.sender),
            )
        )
        self._sent = 0
        self._refused = 0
        self._forged = 0

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Nothing to open: the HTTP session is made with the first text."""

    async def stop(self) -> None:
        await self.client.close()

    def health(self) -> Mapping[str, object]:
        return {
            "connected": True,
            "sent": self._sent,
            "refused": self._refused,
            "refused_unsigned_webhooks": self._forged,
        }

    # -- sending -----------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> str:
        return render_text(message, sender=self.who, max_segments=self.section.max_segments)

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        person = await self.signups.recipient(channel.channel, message)
        callback = self.public(STATUS_PATH.format(delivery=idempotency_key))
        try:
            sid = await self.client.send(
                person.address, self.render(message), self.sender, callback
            )
        except NumberRefused as exc:
            self._refused += 1
            if exc.opted_out:
                await self.signups.unsubscribe_address(
                    Contact.PHONE, person.address, via="carrier STOP (Twilio 21610)"
                )
            else:
                await self.signups.mark_broken(person.key, exc.reason)
            raise PermanentDeliveryError(exc.reason, tell_admins=False) from None
        self._sent += 1
        return sid

    async def find_sent(
        self,
        channel: ChannelRef,
        idempotency_key: str,
        message: OutboundMessage,
        *,
        since: datetime,
    ) -> str | None:
        """The SID of the text a send in doubt created, if Twilio did create it: looked for
        among the messages to the person's number since the delivery was queued, by its
        words (`TwilioClient.find`; Twilio keeps no key of ours on a message). None when
        there is none, or when the person has gone meanwhile (the send then refuses)."""
        person = await self.signups.contactable(channel.channel)
        if person is None:
            return None
        return await self.client.find(
            person.address, self.render(message), self.sender, since=since
        )

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise PermanentDeliveryError("a text cannot be changed once sent")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("a text cannot be taken back once sent")

    def public(self, path: str) -> str:
        return f"{self.ctx.campaign.public_url}{path}"

    # -- webhooks ----------------------------------------------------------------------------

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
        url = self.public(request.rel_url.path_qs)
        if not self.validator.validate(url, params, signature):
            return None
        return params

    async def _inbound(self, request: web.Request) -> web.Response:
        params = await self._signed_form(request)
        if params is None:
            return self._refuse(request)
        sid, sender, body = (
            params.get("MessageSid", ""),
            params.get("From", ""),
            params.get("Body", ""),
        )
        if not sid or not sender:
            return web.Response(status=400, text="MessageSid and From are required")
        if not await self.ctx.first_time(sid):
            return _twiml(None)  # a retry or a replay: answered the first time
        return _twiml(await self._answer(sender, body))

    async def _answer(self, sender: str, body: str) -> str | None:
        heard = self.words.read(body)
        kind, word = heard.kind, heard.word.upper()
        campaign = self.ctx.campaign
        language = heard.language
        try:
            number = self.signups.read(Contact.PHONE, sender)
        except InvalidInput:
            if kind is KeywordKind.STOP:
                return None
            if kind is None:
                language = guess_language(body, campaign.languages, campaign.default_language)
            return self._say(language, "bad_number", page_url(campaign, language))
        if kind is None or heard.question:
            person = await self.signups.find(number, Contact.PHONE)
            if kind is None:
                language = (
                    person.language
                    if person is not None
                    else guess_language(body, campaign.languages, campaign.default_language)
                )
                return self._say(language, "menu", page_url(campaign, language))
            key = person.key if person is not None and person.confirmed else None
            answer = await ask(
                self.ctx.commands,
                kind,
                platform=NAME,
                person=key,
                language=language,
                argument=heard.argument,  # "STATUS ROOSEVELT"
            )
            return self.render(answer)
        url = page_url(campaign, language)
        if kind is KeywordKind.STOP:
            outcome = await self.signups.unsubscribe_address(
                Contact.PHONE, number, via=f"text {word}"
            )
            key = "stopped" if outcome is Outcome.UNSUBSCRIBED else "not_subscribed"
            return self._say(language, key, url)
        if kind is KeywordKind.JOIN:
            # "JOIN 482913": the code the web form gave carries its language and choice.
            # "JOIN ROOSEVELT": a site's (or a group's) code, followed from now on.
            code = heard.argument if JOIN_CODE.fullmatch(heard.argument) else None
            outcome = await self.signups.join(
                Contact.PHONE,
                number,
                language=language,
                via=f"text {word}",
                code=code,
                follow=None if code else heard.argument or None,
            )
            if outcome is not Outcome.ALREADY:
                person = await self.signups.find(number)
                if person is not None and person.language != language:
                    language, url = person.language, page_url(campaign, person.language)
                if person is not None:
                    what = choice_term(person.choice, campaign)
                    link = await self._prefs(number)
                    return self._say(language, "joined", url, choice=what, prefs=link)
            return self._say(language, "already" if outcome is Outcome.ALREADY else "joined", url)
        if kind is KeywordKind.YES:
            outcome = await self.signups.confirm_by_reply(
                Contact.PHONE, number, via=f"reply {word}"
            )
            person = await self.signups.find(number, Contact.PHONE)
            if person is not None and outcome is Outcome.CONFIRMED:
                language = person.language
                url = page_url(campaign, language)
                return self._say(
                    language,
                    "confirmed",
                    url,
                    choice=choice_term(person.choice, campaign),
                    prefs=await self._prefs(number),
                )
            return self._say(language, str(outcome), url)
        mine = await self.ctx.preferences.link_of(Contact.PHONE, number)
        if kind is KeywordKind.PREFS:
            if mine is None:
                return self._say(language, "prefs_none", url)
            return self._say(mine[1], "prefs", url, link=mine[0])
        return self._say(language, "help", url, prefs=mine[0] if mine else "")

    async def _prefs(self, number: str) -> str:
        """The link to the preferences page of the person at `number` ("" if not signed up)."""
        mine = await self.ctx.preferences.link_of(Contact.PHONE, number)
        return mine[0] if mine else ""

    def _say(self, language: str, key: str, url: str, prefs: str = "", **extra: object) -> str:
        """Reply `key` in `language`; with `prefs`, the person's preferences link after it
        (the welcome and HELP: not in every text, docs/email-sms.md says why)."""
        values: dict[str, object] = {
            "who": self.who,
            "url": url,
            "countries": ", ".join(self.section.countries),
            "choice": choice_term("urgent"),
            **extra,
        }
        if prefs and i18n.pick(language) != i18n.source_language():  # both in one language
            terms = [c for v in values.values() if isinstance(v, i18n.Term) for c in v.contexts]
            language = i18n.sentence_language(language, (f"sms.{key}", "sms.prefs_line", *terms))
        text = REPLIES.say(language, key, **values)
        if prefs:
            text = f"{text} {REPLIES.say(language, 'prefs_line', link=prefs)}"
        return fit_own(text, self.section.max_segments)

    async def _status(self, request: web.Request) -> web.Response:
        params = await self._signed_form(request)
        if params is None:
            return self._refuse(request)
        delivery = request.match_info["delivery"][:25]
        status = params.get("MessageStatus", params.get("SmsStatus", "")).lower()
        if status not in STATUSES:
            return web.Response(status=400, text="MessageStatus is missing or unknown")
        error = params.get("ErrorCode") or None
        known = await self.signups.record_receipt(delivery, NAME, status, error and error[:16])
        if known and status in ("undelivered", "failed") and error in UNREACHABLE:
            await self.signups.mark_broken_by_delivery(
                delivery, f"the number cannot receive texts (Twilio {error})"
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
