"""`WebPushAdapter`: browser notifications to people who pressed "Notify me" on the page.

Subscribing. The page's button (served by the web plugin, shown only where the browser can
subscribe) asks the browser for a push subscription with this plugin's application server
key (`Offer.key`: the VAPID public key) and posts it here, `POST /push/subscriptions`,
with the page's language and what to receive. The subscription is a person like an e-mail
address (`bot.ports.SignUps`): nothing is kept but its endpoint and its two keys; the
browser's own permission prompt and the press are the consent, so it is confirmed at once.
The endpoint must be at one of `[webpush] services` (the browsers' push services): the bot
never posts to an address a forged subscription chose. `POST /push/subscriptions/delete`
(the button again) forgets it.

Sending. Each message is JSON (`_render.payload`), encrypted to the subscription's keys
(RFC 8291, aes128gcm) and signed with the VAPID key (RFC 8292) by `pywebpush`, with a TTL
(`[webpush] ttl_hours`) and the RFC 8030 `Urgency` of the update. The push service answers:

- 201: accepted;
- 404 / 410: the subscription is gone (the person turned notifications off, or the browser
  dropped it): the person is forgotten at once, nothing more is tried;
- 413: the payload was too large (it is cut below the limit, so this is a bug to report);
- 429: retried after Retry-After; 5xx, hangs and resets: retried.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from pywebpush import WebPushException, webpush_async

from bot.ports import (
    ChannelRef,
    Choice,
    Contact,
    InvalidInput,
    Offer,
    OutboundMessage,
    Pacing,
    PermanentDeliveryError,
    PluginContext,
    SignUps,
    TooManySignups,
    TransientDeliveryError,
    Urgency,
    i18n,
)

from . import _keys
from ._render import payload
from ._settings import (
    NAME,
    SUBSCRIBE_PATH,
    UNSUBSCRIBE_PATH,
    WebPushDelivery,
    WebPushSection,
    WebPushSettings,
)

log = logging.getLogger("strikebot.webpush")

BODY_MAX = 4096  # bytes of a subscription request
GONE = frozenset({404, 410})
WORDS = i18n.Words("webpush")


class WebPushAdapter:
    """Delivers browser notifications through the browsers' push services; takes the
    page's subscriptions."""

    platform = NAME
    edits_in_place = False

    def __init__(self, ctx: PluginContext, *, timeout: float = 20.0) -> None:
        self.ctx = ctx
        self.settings = ctx.settings_as(WebPushSettings)
        self.section = ctx.section_as(WebPushSection) if ctx.section else WebPushSection()
        self.delivery = ctx.delivery_as(WebPushDelivery) if ctx.delivery else WebPushDelivery()
        self.signups: SignUps = ctx.people
        self.vapid = _keys.load(self.settings.key)
        self.public_key = _keys.public_key(self.vapid)
        self.timeout = timeout
        self.who = ctx.campaign.short_union
        self._session: aiohttp.ClientSession | None = None
        self.signups.offer(
            Offer(
                Contact.PUSH,
                NAME,
                quiet_hours=self.section.quiet(),
                sender_name=self.who,
                by_form=False,
                key=self.public_key,
                path=SUBSCRIBE_PATH,
            )
        )
        self._counts = {"sent": 0, "gone": 0, "refused_subscriptions": 0}

    @property
    def pacing(self) -> Pacing:
        return self.delivery.pacing()

    async def start(self) -> None:
        """Nothing to open: the HTTP session is made with the first message."""

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def health(self) -> Mapping[str, object]:
        return {"connected": True, **self._counts}

    # -- sending -----------------------------------------------------------------------

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        person = await self.signups.recipient(channel.channel, message)
        if self._session is None:
            self._session = aiohttp.ClientSession()
        info: dict[str, Any] = {"endpoint": person.address, "keys": dict(person.keys)}
        urgent = message.urgency is Urgency.URGENT
        try:
            response = await webpush_async(
                info,
                data=payload(message, sender=self.who).decode(),
                vapid_private_key=self.vapid,
                vapid_claims={"sub": self.settings.subject or ""},
                ttl=int(self.section.ttl_hours * 3600),
                # RFC 8030's Topic: a copy sent again replaces one the service still holds.
                headers={"Urgency": "high" if urgent else "normal", "Topic": idempotency_key},
                aiohttp_session=self._session,
                timeout=self.timeout,
            )
        except WebPushException as exc:
            raise await self._refused(exc, person.address) from None
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise TransientDeliveryError(
                f"the push service did not answer: {type(exc).__name__}"
            ) from None
        self._counts["sent"] += 1
        location = response.headers.get("Location", "") if not isinstance(response, str) else ""
        return location[-200:] or idempotency_key

    async def _refused(self, exc: WebPushException, endpoint: str) -> Exception:
        """What the dispatcher is told of a push service's refusal (a 404 or 410 first
        forgets the subscription)."""
        response = exc.response
        status = getattr(response, "status", None)
        service = endpoint.split("/")[2] if endpoint.count("/") >= 2 else "the push service"
        if status in GONE:
            self._counts["gone"] += 1
            await self.signups.unsubscribe_address(
                Contact.PUSH, endpoint, via=f"push service {status}"
            )
            return PermanentDeliveryError(
                f"{service} says the subscription is gone ({status}); it was forgotten",
                tell_admins=False,
            )
        if status == 413:
            return PermanentDeliveryError(
                f"{service} refused the message as too large (413); please report it"
            )
        reason = f"{service} answered {status}" if status else f"{service} failed"
        if status == 429:
            wait = _seconds(getattr(response, "headers", {}).get("Retry-After"))
            return TransientDeliveryError(f"{reason}: slow down", retry_after=wait)
        if status is not None and 400 <= status < 500:
            log.error("a push service refused a message for the VAPID key's sake: %s", reason)
        return TransientDeliveryError(reason)

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        raise PermanentDeliveryError("a notification is not changed once shown")

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        raise PermanentDeliveryError("a notification is not taken back once shown")

    # -- the page's subscriptions ------------------------------------------------------------

    def mount(self, app: web.Application) -> None:
        app.router.add_post(SUBSCRIBE_PATH, self._subscribe)
        app.router.add_post(UNSUBSCRIBE_PATH, self._unsubscribe)

    async def _subscribe(self, request: web.Request) -> web.Response:
        asked = await self._read(request)
        if isinstance(asked, web.Response):
            return asked
        lang = _language(asked, self.ctx.campaign.languages, self.ctx.campaign.default_language)
        sub = asked.get("subscription")
        endpoint = sub.get("endpoint") if isinstance(sub, dict) else None
        keys = sub.get("keys") if isinstance(sub, dict) else None
        checked = _keys_of(keys)
        if not isinstance(endpoint, str) or checked is None:
            return self._answer(400, lang, "bad_subscription", refused=True)
        if not self.section.allows(endpoint):
            return self._answer(400, lang, "bad_service", refused=True)
        try:
            await self.signups.join(
                Contact.PUSH,
                endpoint,
                language=lang,
                via="web notify button",
                choice=_choice(asked.get("receive")),
                keys=checked,
                client=request.remote or "unknown",
            )
        except InvalidInput as exc:
            return _json(422, {"ok": False, "message": exc.localized(lang)})
        except TooManySignups as exc:
            return _json(429, {"ok": False, "message": exc.localized(lang)})
        return self._answer(201, lang, "on")

    async def _unsubscribe(self, request: web.Request) -> web.Response:
        asked = await self._read(request)
        if isinstance(asked, web.Response):
            return asked
        lang = _language(asked, self.ctx.campaign.languages, self.ctx.campaign.default_language)
        endpoint = asked.get("endpoint")
        if not isinstance(endpoint, str) or len(endpoint) > 2048:
            return self._answer(400, lang, "bad_subscription")
        await self.signups.unsubscribe_address(Contact.PUSH, endpoint, via="web notify button")
        return self._answer(200, lang, "off")

    async def _read(self, request: web.Request) -> dict[str, Any] | web.Response:
        """The request's JSON object, if it came from the page itself."""
        lang = self.ctx.campaign.default_language
        if request.content_type != "application/json":
            return self._answer(415, lang, "bad_subscription")
        origin = request.headers.get("Origin")
        mine = {_origin(self.ctx.campaign.public_url), f"{request.scheme}://{request.host}"}
        if origin is not None and origin not in mine:
            return self._answer(403, lang, "bad_subscription")
        if (request.content_length or 0) > BODY_MAX:
            return self._answer(413, lang, "bad_subscription")
        raw = await request.content.read(BODY_MAX + 1)
        try:
            value = json.loads(raw[:BODY_MAX])
        except ValueError:
            return self._answer(400, lang, "bad_subscription")
        return value if isinstance(value, dict) else self._answer(400, lang, "bad_subscription")

    def _answer(self, status: int, lang: str, key: str, *, refused: bool = False) -> web.Response:
        if refused:
            self._counts["refused_subscriptions"] += 1
        return _json(status, {"ok": status < 300, "message": WORDS[lang][key]})


def _json(status: int, body: Mapping[str, object]) -> web.Response:
    return web.Response(
        text=json.dumps(body, ensure_ascii=False),
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _language(asked: Mapping[str, Any], languages: tuple[str, ...], default: str) -> str:
    lang = asked.get("language")
    return lang if isinstance(lang, str) and lang in languages else default


def _choice(value: object) -> Choice:
    try:
        return Choice(str(value or Choice.URGENT))
    except ValueError:
        return Choice.URGENT


def _keys_of(keys: object) -> dict[str, str] | None:
    """The subscription's p256dh (a P-256 public key) and auth (16 bytes), or None."""
    if not isinstance(keys, dict):
        return None
    p256dh, auth = keys.get("p256dh"), keys.get("auth")
    if not isinstance(p256dh, str) or not isinstance(auth, str):
        return None
    try:
        point = _unb64(p256dh)
        secret = _unb64(auth)
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        return None
    if len(point) != 65 or len(secret) != 16:
        return None
    return {"p256dh": p256dh, "auth": auth}


def _unb64(text: str) -> bytes:
    if len(text) > 200:
        raise ValueError("too long")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _seconds(value: object) -> float:
    try:
        return min(max(float(str(value or 1.0)), 0.0), 3600.0)
    except ValueError:
        return 1.0
