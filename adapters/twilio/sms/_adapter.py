"""`SmsAdapter`: texts to people who signed up, through Twilio, and the number's replies.

Sending. The subscription's channel is a person's opaque key; the number is read from the
store at send time and goes nowhere else (not a log line, not an error). Each text is cut to
`[sms] max_segments` with the link to the page (`_render.py`); the campaign's quiet hours
are in the subscription (urgent updates skip them; see `bot.delivery.planning.release_time`). Twilio
calls back `/sms/status/{delivery id}` with what became of each text: recorded as a
receipt; a number that cannot receive (30003, 30005, 30006) is marked broken. A send
whose answer was lost after it went out is in doubt: before it is sent again, `find_sent`
looks for the text at Twilio (`bot.ports.FindsSent`), so it goes once.

Receiving, `POST /sms/inbound` (the number's "A message comes in" webhook, signed and
handled once: `adapters/twilio/_webhooks.py`), answered by the core's one conversation for
texts and WhatsApp (`bot.ports.Conversation`) in this plugin's sentences. A message is a
keyword only when the whole of it is one (trimmed, case and accents ignored, as Twilio reads
STOP), in English or the campaign's languages:

    JOIN / UNIRSE / START        sign up (and confirm: the text came from the phone itself);
                                 with the web form's code (JOIN 482913), its choices;
                                 the welcome ends with the preferences link
    YES / SÍ                     confirm a sign-up made on the web page
    STOP, STOPALL, UNSUBSCRIBE,  unsubscribe at once, and the number is deleted
      CANCEL, END, QUIT, REVOKE,
      OPTOUT, PARAR, BAJA...
    HELP / AYUDA / INFO          who is sending and how to stop
    STATUS / ESTADO, DEMANDS /   answered as `/strike status`, `demands`, `next` answer in
      DEMANDAS, NEXT / SIGUIENTE chat, cut to the text's segments, with the page's link

Anything else ("End of the strike, when?") gets a short menu in the sender's language and
changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from aiohttp import web

from bot.ports import (
    ChannelRef,
    Contact,
    Conversation,
    Offer,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    i18n,
    show_phone,
)

from .._client import OPTED_OUT, NumberRefused, Sender
from .._settings import sender_name
from .._webhooks import Webhooks
from ._render import fit_own, render_text
from ._segments import smart
from ._settings import NAME, SmsDelivery, SmsSection, SmsSettings

# Twilio's answers to a send that refuse this number: it opted out (21610), or is not a
# valid, mobile or reachable number.
REFUSED = dict.fromkeys((OPTED_OUT, 21211, 21265, 21408, 21612, 21614), NumberRefused)
# Twilio's delivery errors that mean the number cannot receive texts at all.
UNREACHABLE = frozenset({"30003", "30005", "30006", "21610", "21614"})

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
        self.client = self.settings.client(NAME, timeout=timeout, noun="text", refusals=REFUSED)
        self.sender = Sender(self.settings.sender, self.settings.messaging_service)
        self.hooks = Webhooks(
            ctx, self.settings.token, platform=NAME, answer=self._answer, failed=self._failed
        )
        self.who = sender_name(ctx.campaign, self.section)
        self.talk = Conversation(
            ctx.people, ctx.commands, Contact.PHONE, NAME, via="text", codes=True
        )
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
            "refused_unsigned_webhooks": self.hooks.forged,
        }

    # -- sending -----------------------------------------------------------------------

    def render(self, message: OutboundMessage) -> str:
        return render_text(message, sender=self.who, max_segments=self.section.max_segments)

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        person = await self.signups.recipient(channel.channel, message)
        callback = self.hooks.callback(idempotency_key)
        try:
            sid = await self.client.send(
                person.address, self.sender, callback, {"Body": self.render(message)}
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
        words (`TwilioClient.find`; Twilio keeps no key of ours on a message), with the
        characters a messaging service's Smart Encoding may swap for GSM-7 ones folded and
        the spacing ignored. None when there is none, or when the person has gone meanwhile
        (the send then refuses)."""
        person = await self.signups.contactable(channel.channel)
        if person is None:
            return None
        wanted = _words(self.render(message))
        return await self.client.find(
            person.address, self.sender, lambda body: _words(body) == wanted, since=since
        )

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise PermanentDeliveryError("a text cannot be changed once sent")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("a text cannot be taken back once sent")

    # -- webhooks ----------------------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        self.hooks.mount(app)

    async def _answer(self, sender: str, body: str) -> str | None:
        """The answer to a text (`bot.ports.Conversation`), in this plugin's sentences, fit
        to `[sms] max_segments`."""
        said = await self.talk.answer(sender, body)
        if said is None:
            return None
        if said.answer is not None:  # a question's: cut to the segments, with the link
            return self.render(said.answer)
        text = said.say(REPLIES, who=self.who, countries=", ".join(self.section.countries))
        return fit_own(text, self.section.max_segments)

    async def _failed(self, delivery: str, error: str | None, request: web.Request) -> None:
        if error in UNREACHABLE:
            await self.signups.mark_broken_by_delivery(
                delivery, f"the number cannot receive texts (Twilio {error})"
            )


def _words(body: str) -> str:
    """A text as compared with what Twilio lists: typographic punctuation folded as Smart
    Encoding folds it, the spacing ignored."""
    return " ".join(smart(body).split())
