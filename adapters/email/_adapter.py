"""`EmailAdapter`: updates to people who signed up, through an SMTP server (aiosmtplib).

A subscription's channel is a person's opaque key; the address is looked up in the store at
send time (`SignUps.contactable`) and never leaves this function: not in a log line, not in
a delivery's error. Each message carries `Message-ID: <delivery id@sender's domain>`, so a
copy sent twice after a crash is the same message to the mailbox provider.

Errors: a 5xx refusal of the recipient (550 no such mailbox, 553 bad address) marks the
address broken (nothing more goes there until the person signs up again) and is counted,
not notified, to admins. 4xx, timeouts, dropped connections, and refusals that are not
about the recipient (the sender, the login, the content) are retried by the dispatcher.

Beside it, every e-mail links to the person's preferences page (the web plugin's, signed
by the core: `Contactable.preferences`). It also serves the unsubscribe link every e-mail
carries: `GET /email/unsubscribe/{token}`
shows a page whose button POSTs; `POST` to the same address unsubscribes at once
(RFC 8058 one-click, `List-Unsubscribe=One-Click`, no login), idempotently.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import re
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from typing import Any

import aiosmtplib
from aiohttp import web
from aiosmtplib import SMTPResponse, SMTPStatus
from aiosmtplib.email import quote_address
from aiosmtplib.protocol import normalize_message_line_endings

from bot.ports import (
    Campaign,
    ChannelRef,
    Contact,
    Contactable,
    MessageKind,
    Offer,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    TransientDeliveryError,
    i18n,
    page_url,
)

from ._render import Envelope, build_email
from ._rendition import Marks, Rendition, Renditions, rendition
from ._settings import NAME, EmailDelivery, EmailSection, EmailSettings, SmtpServer

log = logging.getLogger("strikebot.email")

UNSUBSCRIBE_PATH = "/email/unsubscribe/{token}"
EMAIL_PATTERN = re.compile(r"[^\s<>@]+@[^\s<>@]+")
# 552 is "mailbox full" in practice: it passes when the person makes room.
RETRYABLE_5XX = frozenset({552})
LOOKUP_WAIT = 0.05  # seconds a send waits at most for others to share its address lookup
PAGE_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

PAGE_WORDS = i18n.Words("email.page")


class _Client(aiosmtplib.SMTP):
    """An SMTP connection that knows whether the message itself went out on it: after
    DATA, a lost answer leaves in doubt whether the server took the message."""

    sent_data = False

    async def data(self, message: str | bytes, **options: Any) -> SMTPResponse:
        self.sent_data = True
        return await super().data(message, **options)

    async def transfer(self, sender: str, recipient: str, message: bytes) -> None:
        """`sendmail(sender, [recipient], message)` for addresses already checked: `sender`
        quoted once (`quote_address`), `recipient` a plain address (`Rendition.fill` takes
        no other). `sendmail` parses each address twice per message, a quarter of the
        Python an e-mail cost. Refusals raise as there; no RSET (the pool closes a
        connection after any failure)."""
        if self.is_ehlo_or_helo_needed:
            try:
                await self.ehlo()
            except aiosmtplib.SMTPHeloError:
                if not self.is_connected:
                    raise
                await self.helo()
        options = []
        if self.supports_extension("size"):
            options.append(b"size=%d" % len(normalize_message_line_endings(message)))
        answer = await self.execute_command(b"MAIL", b"FROM:" + sender.encode("ascii"), *options)
        if answer.code != SMTPStatus.completed:
            raise aiosmtplib.SMTPSenderRefused(answer.code, answer.message, sender)
        answer = await self.execute_command(b"RCPT", b"TO:<" + recipient.encode("ascii") + b">")
        if answer.code not in (SMTPStatus.completed, SMTPStatus.will_forward):
            refused = aiosmtplib.SMTPRecipientRefused(answer.code, answer.message, recipient)
            raise aiosmtplib.SMTPRecipientsRefused([refused])
        await self.data(message)


class _Pool:
    """Up to `size` SMTP connections, opened on demand and reused between messages."""

    def __init__(self, server: SmtpServer, size: int, timeout: float, helo: str) -> None:
        self.server = server
        self.timeout = timeout
        self.helo = helo  # the name we greet with (never a DNS lookup of our own host)
        self._idle: asyncio.LifoQueue[_Client] = asyncio.LifoQueue()
        self._slots = asyncio.Semaphore(size)
        self._all: set[_Client] = set()

    async def send(self, mail: EmailMessage | bytes, *, sender: str = "", to: str = "") -> None:
        """Hand `mail` over (a message, or a copy already flattened, from `sender`, quoted,
        to the plain address `to`: `_Client.transfer`).
        A kept connection the server closed meanwhile fails before the
        message goes (MAIL FROM, RCPT TO): that is tried once more at once on a new one.
        Raises `LostAnswer` when the connection failed after the message itself went out
        (the server may have it), else what aiosmtplib raised."""
        for fresh in (False, True):
            async with self._slots:
                client = None if fresh else self._idle_client()
                reused = client is not None
                if client is None:
                    client = await self._connect()
                client.sent_data = False
                try:
                    if isinstance(mail, bytes):
                        await client.transfer(sender, to, mail)
                    else:
                        await client.send_message(mail)
                except BaseException as exc:
                    await self._close(client)
                    if client.sent_data and isinstance(exc, Exception):
                        if not isinstance(exc, aiosmtplib.SMTPResponseException):
                            raise LostAnswer(exc) from exc
                    elif reused and isinstance(exc, aiosmtplib.SMTPServerDisconnected):
                        continue  # closed while idle: nothing went out, try a new one
                    raise
                self._idle.put_nowait(client)
                return

    def _idle_client(self) -> _Client | None:
        while not self._idle.empty():
            candidate = self._idle.get_nowait()
            if candidate.is_connected:
                return candidate
            self._all.discard(candidate)
        return None

    async def _connect(self) -> _Client:
        s = self.server
        client = _Client(
            hostname=s.host,
            port=s.port,
            use_tls=s.use_tls,
            start_tls=True if s.start_tls else (None if s.use_tls else False),
            timeout=self.timeout,
            local_hostname=self.helo,
        )
        await client.connect()
        if s.username and s.password:
            await client.login(s.username, s.password)
        self._all.add(client)
        return client

    async def _close(self, client: _Client) -> None:
        self._all.discard(client)
        with contextlib.suppress(Exception):
            client.close()

    async def close(self) -> None:
        for client in list(self._all):
            with contextlib.suppress(Exception):
                if client.is_connected:
                    await asyncio.wait_for(client.quit(), 5)
            await self._close(client)


class EmailAdapter:
    """Delivers to people who signed up by e-mail; serves their unsubscribe links."""

    platform = NAME
    edits_in_place = False

    def __init__(self, ctx: PluginContext, *, timeout: float = 30.0) -> None:
        self.ctx = ctx
        self.settings = ctx.settings_as(EmailSettings)
        self.section = ctx.section_as(EmailSection) if ctx.section else EmailSection()
        self.delivery = ctx.delivery_as(EmailDelivery) if ctx.delivery else EmailDelivery()
        self.signups: SignUps = ctx.people
        self.sender = self.settings.sender()
        self._from = quote_address(self.sender.addr_spec)  # checked once, not per message
        self.pool = _Pool(
            self.settings.server(), self.delivery.connections(), timeout, self.sender.domain
        )
        self.signups.offer(Offer(Contact.EMAIL, NAME, quiet_hours=self.section.quiet()))
        self.renditions = Renditions()
        # Sends paced apart share one read of their addresses if each waits for the next few
        # (at most 50 ms: 5 sends at 100 a second).
        self._gather = min(LOOKUP_WAIT, 5 / self.delivery.email_per_second)
        self._sent = 0
        self._refused = 0
        self._last_error = ""

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Nothing to open: connections are made when the first message goes."""

    async def stop(self) -> None:
        await self.pool.close()

    def health(self) -> Mapping[str, object]:
        return {
            "connected": True,
            "sent": self._sent,
            "refused": self._refused,
            "last_error": self._last_error,
        }

    # -- sending -----------------------------------------------------------------------

    def unsubscribe_url(self, token: str, language: str) -> str:
        path = UNSUBSCRIBE_PATH.format(token=token)
        campaign = self.ctx.campaign
        language = i18n.pick(language)
        suffix = f"?lang={language}" if language != campaign.default_language else ""
        return f"{self.ctx.campaign.public_url}{path}{suffix}"

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        person = await self.signups.recipient(channel.channel, message, within=self._gather)
        message_id = f"<{idempotency_key}@{self.sender.domain}>"
        copy = self._copy(message, person, idempotency_key)
        try:
            if copy is not None:
                await self.pool.send(copy, sender=self._from, to=person.address)
            else:
                await self.pool.send(self._mail(message, person, message_id))
        except LostAnswer as lost:
            self._last_error = failure(lost.cause, self.pool, after_data=True)
            raise TransientDeliveryError(self._last_error, in_doubt=True) from None
        except aiosmtplib.SMTPRecipientsRefused as exc:
            refusal = exc.recipients[0] if exc.recipients else None
            code = refusal.code if refusal is not None else 550
            reason = _reason(code, refusal.message if refusal else "", person.address)
            if 500 <= code < 600 and code not in RETRYABLE_5XX:
                self._refused += 1
                await self.signups.mark_broken(person.key, reason)
                raise PermanentDeliveryError(reason, tell_admins=False) from None
            raise TransientDeliveryError(reason) from None
        except aiosmtplib.SMTPResponseException as exc:
            self._last_error = _reason(exc.code, exc.message, person.address)
            if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
                self._last_error += "; check the user name and password in STRIKEBOT_SMTP_URL"
            log.warning("the mail server refused a message: %s", self._last_error)
            raise TransientDeliveryError(self._last_error) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            self._last_error = failure(exc, self.pool, after_data=False)
            raise TransientDeliveryError(self._last_error) from None
        self._sent += 1
        return message_id

    def _envelope(
        self,
        to: str,
        message_id: str,
        unsubscribe_url: str | None,
        preferences_url: str | None = None,
    ) -> Envelope:
        return Envelope(
            sender=self.sender,
            to=to,
            message_id=message_id,
            union=self.ctx.campaign.union,
            list_id=f"{self.ctx.campaign.slug}.{self.sender.domain}",
            unsubscribe_url=unsubscribe_url,
            reply_to=self.section.reply_to,
            preferences_url=preferences_url,
        )

    def _mail(self, message: OutboundMessage, person: Contactable, message_id: str) -> EmailMessage:
        """One person's e-mail, built for them alone (a confirmation, an unusual address)."""
        link = prefs = None
        if message.kind is not MessageKind.CONFIRM:
            link = self.unsubscribe_url(person.manage_token, person.language)
            if person.preferences:
                prefs = self.signups.preferences_url(person.preferences, person.language)
        envelope = self._envelope(person.address, message_id, link, prefs)
        return build_email(message, envelope, now=self.ctx.clock(), colour=_colour(message))

    def _copy(self, message: OutboundMessage, person: Contactable, key: str) -> bytes | None:
        """This person's copy of the e-mail everyone reading `message` in their language
        gets (rendered once: `Rendition`), or None when it must be built for them alone."""
        if message.kind is MessageKind.CONFIRM:  # its body is this person's own link
            return None
        language = i18n.pick(person.language)
        found = self.renditions.get((message, language), lambda: self._rendition(message, language))
        if found is None:
            return None
        return found.fill(
            person.address, key, person.manage_token, self.ctx.clock(), person.preferences
        )

    def _rendition(self, message: OutboundMessage, language: str) -> Rendition | None:
        marks = Marks.new()
        message_id = f"<{marks.key}@{self.sender.domain}>"
        envelope = self._envelope(
            marks.address,
            message_id,
            self.unsubscribe_url(marks.token, language),
            self.signups.preferences_url(marks.prefs, language),
        )
        mail = build_email(message, envelope, now=marks.now, colour=_colour(message))
        return rendition(mail, marks)

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise PermanentDeliveryError("an e-mail cannot be changed once sent")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("an e-mail cannot be taken back once sent")

    # -- the unsubscribe link --------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        app.router.add_get(UNSUBSCRIBE_PATH, self._ask)
        app.router.add_post(UNSUBSCRIBE_PATH, self._unsubscribe)

    async def _ask(self, request: web.Request) -> web.Response:
        """The visible link: a page whose button unsubscribes (opening it changes nothing)."""
        lang = _language(request, self.ctx.campaign)
        w = PAGE_WORDS[lang]
        form = (
            f'<p>{html.escape(w["ask"])}</p><form method="post"><button type="submit" '
            f'name="List-Unsubscribe" value="One-Click">{html.escape(w["button"])}</button></form>'
        )
        return self._page(lang, w["title"], form)

    async def _unsubscribe(self, request: web.Request) -> web.Response:
        """RFC 8058 one-click, and the page's button: unsubscribe at once, idempotently."""
        token = request.match_info["token"]
        lang = _language(request, self.ctx.campaign)
        await self.signups.unsubscribe(token, via="e-mail one-click")
        w = PAGE_WORDS[lang]
        page = page_url(self.ctx.campaign, lang)
        link = f'<a href="{html.escape(page)}">{html.escape(w["page"])}</a>'
        body = f"<p>{html.escape(w['done'])}</p><p>{link}</p>"
        return self._page(lang, w["done_title"], body)

    def _page(self, lang: str, title: str, body: str) -> web.Response:
        union = html.escape(self.ctx.campaign.union)
        text = (
            f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)} — {union}</title>"
            "<style>body{font:18px/1.5 system-ui,sans-serif;max-width:36em;margin:2em auto;"
            "padding:0 1em}button{font-size:1.1em;padding:.6em 1.2em}</style></head>"
            f"<body><main><p>{union}</p><h1>{html.escape(title)}</h1>{body}</main></body></html>"
        )
        return web.Response(
            text=text,
            content_type="text/html",
            headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-store"},
        )


def _colour(message: OutboundMessage) -> str:
    """The badge's colour: the status's, or the union's blue."""
    if message.status is None:
        return "#1f4e8c"
    return f"#{i18n.STATUS_COLOURS[message.status]:06x}"


def _language(request: web.Request, campaign: Campaign) -> str:
    """The page's language: `?lang=` if the campaign speaks it, else its first language."""
    asked = request.query.get("lang", "")
    return asked if asked in campaign.languages else campaign.default_language


class LostAnswer(Exception):
    """The connection failed after the message itself went out: the server may have it."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def failure(exc: BaseException, pool: _Pool, *, after_data: bool) -> str:
    """What went wrong talking to the mail server, and what to do about it, in one line
    (an admin reads it in `strikebot deliveries` and on /healthz)."""
    server = pool.server
    where = f"{server.host}:{server.port}"
    text = " ".join(str(exc).split())
    if "STARTTLS extension not supported" in text:
        return (
            f"the mail server at {where} offers no STARTTLS; for a relay on this machine add "
            "?tls=off to STRIKEBOT_SMTP_URL, else use the provider's submission port (587) or "
            "smtps:// (465)"
        )
    if "AUTH extension is not supported" in text or "No suitable authentication" in text:
        return (
            f"the mail server at {where} offers no login that strikebot can use here; for a "
            "relay that needs none, leave the user and password out of STRIKEBOT_SMTP_URL, "
            "else use the provider's submission port (587) or smtps:// (465)"
        )
    if isinstance(exc, ssl.SSLError) or "SSL" in type(exc).__name__ or "SSL" in text:
        return (
            f"TLS with the mail server at {where} failed ({text[:80]}); smtps:// is for port "
            "465, smtp:// (STARTTLS) for 587: check STRIKEBOT_SMTP_URL"
        )
    if isinstance(exc, aiosmtplib.SMTPConnectTimeoutError):
        return (
            f"the mail server at {where} did not answer the connection within "
            f"{pool.timeout:g} s; check the host and port in STRIKEBOT_SMTP_URL and that this "
            "machine may reach it; retrying"
        )
    if isinstance(exc, aiosmtplib.SMTPConnectError | ConnectionRefusedError):
        return (
            f"cannot connect to the mail server at {where} ({text[:80]}); check the host and "
            "port in STRIKEBOT_SMTP_URL; retrying"
        )
    if after_data:
        what = (
            f"did not answer within {pool.timeout:g} s"
            if isinstance(exc, TimeoutError)
            else f"dropped the connection ({type(exc).__name__})"
        )
        return (
            f"the mail server at {where} {what} after the message went out: it may have it; "
            "sent again later with the same Message-ID"
        )
    if isinstance(exc, TimeoutError):
        return f"the mail server at {where} stopped answering ({pool.timeout:g} s); retrying"
    if isinstance(exc, aiosmtplib.SMTPServerDisconnected):
        return f"the mail server at {where} closed the connection; retrying"
    return f"the mail server at {where} failed ({type(exc).__name__}: {text[:80]}); retrying"


def _reason(code: int, message: str, address: str) -> str:
    """The server's answer without the address (servers often echo it back)."""
    text = message.replace(address, "<address>")
    text = EMAIL_PATTERN.sub("<address>", text)
    return f"the mail server answered {code}: {' '.join(text.split())[:200]}"
