"""`WhatsAppAdapter`: updates and briefings to families who wrote to the campaign's
WhatsApp number, through Twilio, and the number's messages.

Joining. Nobody is sent anything before they write: a family sends JOIN (UNIRSE, or any
join word) to the number, from the page's click-to-chat link
(`https://wa.me/<number>?text=UNIRSE`, offered per language through `Offer.invites`) or by
typing it. That message shows the number is theirs: they are signed up and confirmed at
once, in the keyword's language (YES does the same here), and welcomed with their
preferences link. STOP (PARAR, BAJA...) forgets the number. Messages are answered by the
core's one conversation for texts and WhatsApp (`bot.ports.Conversation`), in this plugin's
sentences: STATUS / ESTADO, DEMANDS, NEXT answered as chat answers them; anything else gets
the short menu and changes nothing.

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
definition). Edits and retractions are new messages, as on texts. The webhooks are signed
and handled once, as texts' are (`adapters/twilio/_webhooks.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from urllib.parse import quote

from aiohttp import web

from bot.ports import (
    ChannelRef,
    Contact,
    Contactable,
    Conversation,
    Link,
    Offer,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    i18n,
)

from .._client import NumberRefused, Sender
from .._settings import sender_name
from .._webhooks import Webhooks
from ._content import REFUSED, Approvals, TemplateRefused, template_fields
from ._render import free_form, variables
from ._settings import NAME, Template, WhatsAppDelivery, WhatsAppSection, WhatsAppSettings

log = logging.getLogger("strikebot.whatsapp")

OUTSIDE_WINDOW = "63016"
UNREACHABLE = frozenset({"63003", "63024"})
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
        assert self.settings.number is not None
        self.client = self.settings.client(NAME, timeout=timeout, refusals=REFUSED)
        self.approvals = Approvals(self.client, self.settings.content_base)
        channel = "whatsapp:"
        self.sender = Sender(self.settings.number, self.settings.messaging_service, channel)
        self.hooks = Webhooks(
            ctx,
            self.settings.token,
            platform=NAME,
            answer=self._answer,
            failed=self._failed,
            channel=channel,
        )
        self.who = sender_name(ctx.campaign, self.section)
        self.talk = Conversation(
            ctx.people,
            ctx.commands,
            Contact.WHATSAPP,
            NAME,
            via="whatsapp",
            yes_joins=True,  # nothing waits for a YES here: it joins, as JOIN does
            window=True,  # each message opens the 24-hour window again
        )
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
        self._resent = 0

    def invite(self, language: str) -> Link:
        """The page's click-to-chat link in `language`: WhatsApp opens a chat with the
        number, the join word already typed."""
        assert self.settings.number is not None
        word = self.talk.join_word(language)
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
            "refused_unsigned_webhooks": self.hooks.forged,
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
        callback = self.hooks.callback(idempotency_key) + ("?as=free" if free else "?as=template")
        if free:
            content = {"Body": free_form(message, sender=self.who)}
        else:
            content = await self._template(message)
        try:
            sid = await self.client.send(person.address, self.sender, callback, content)
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

        def ours(body: str) -> bool:
            body = " ".join(body.split())
            return body == free or (bool(values) and all(v in body for v in values))

        return await self.client.find(person.address, self.sender, ours, since=since)

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
        approval = await self.approvals.approval(sid)
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

    # -- webhooks ----------------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        self.hooks.mount(app)

    async def _answer(self, sender: str, body: str) -> str | None:
        """The answer to a message (`bot.ports.Conversation`), in this plugin's sentences."""
        said = await self.talk.answer(sender, body)
        if said is None:
            return None
        if said.answer is not None:  # a question's
            return free_form(said.answer, sender=self.who)
        return said.say(WORDS, who=self.who, countries=", ".join(self.section.countries))

    async def _failed(self, delivery: str, error: str | None, request: web.Request) -> None:
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
