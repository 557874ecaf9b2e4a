"""A fake Web Push service on 127.0.0.1, as strict as the real ones.

    async with FakePushService() as push:
        sub = push.subscribe()            # what a browser's PushManager.subscribe() gives
        ... the bot sends to sub["endpoint"] ...
        push.received(sub)                # the decrypted payloads, as the browser reads them

Each push message (RFC 8030 `POST <endpoint>`) must carry:
- `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292): an ES256 JWT whose signature
  checks with `k`, whose `aud` is the endpoint's origin, whose `exp` is in the future and
  at most 24 hours away, and whose `sub` is a mailto: or https: contact; and `k` must be the
  application server key the subscription was made with (as browsers bind it). Else 401 or
  403.
- `TTL`, and `Content-Encoding: aes128gcm` with a body at most 4096 bytes (else 413) that
  decrypts (RFC 8291, `http_ece`) with the subscription's private key and auth secret.
- `Urgency`, when given, one of very-low, low, normal, high.

A good message gets 201 with a `Location`. Scripted answers for the next messages, in
order (`fail`): 404, 410 (the subscription is gone: it stays gone), 413, 429 with
Retry-After, 500 with JSON, 502 with HTML, 503 with plain text, a hang, a reset.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import http_ece
import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.fakes._server import serve


class PushFault(StrEnum):
    NOT_FOUND = "404"
    GONE = "410"
    TOO_LARGE = "413"
    RATE_LIMITED = "429"
    JSON_500 = "500-json"
    HTML_502 = "502-html"
    PLAIN_503 = "503-plain"
    HANG = "hang"
    RESET = "reset"
    LOSE_ANSWER = "201-lost"  # taken (and delivered), then the connection drops


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(slots=True)
class Browser:
    """One subscription: the keys only the browser holds, and what reached it."""

    id: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes
    server_key: str = ""  # the application server key it was made with ("" = any)
    gone: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return b64(point)


@dataclass(slots=True)
class FakePushService:
    retry_after: float = 2.0
    url: str = ""
    browsers: dict[str, Browser] = field(default_factory=dict)
    faults: deque[PushFault] = field(default_factory=deque)
    requests: int = 0
    refusals: list[tuple[int, str]] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _closing: asyncio.Event = field(default_factory=asyncio.Event)

    async def __aenter__(self) -> FakePushService:
        app = web.Application(client_max_size=64 * 1024)
        app.router.add_post("/push/{id}", self._push)
        self._runner, port = await serve(app)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        self._closing.set()
        await self._runner.cleanup()

    def subscribe(self, server_key: str = "") -> dict[str, Any]:
        """A new subscription, as `PushSubscription.toJSON()` gives it."""
        ident = f"{next(self._ids)}-{secrets.token_urlsafe(12)}"
        browser = Browser(ident, ec.generate_private_key(ec.SECP256R1()), secrets.token_bytes(16))
        browser.server_key = server_key
        self.browsers[ident] = browser
        return {
            "endpoint": f"{self.url}/push/{ident}",
            "expirationTime": None,
            "keys": {"p256dh": browser.p256dh, "auth": b64(browser.auth)},
        }

    def browser(self, subscription: dict[str, Any]) -> Browser:
        return self.browsers[str(subscription["endpoint"]).rsplit("/", 1)[1]]

    def received(self, subscription: dict[str, Any]) -> list[dict[str, Any]]:
        return self.browser(subscription).messages

    def fail(self, *faults: PushFault) -> None:
        self.faults.extend(faults)

    async def _push(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        browser = self.browsers.get(request.match_info["id"])
        lose = False
        if self.faults:
            fault = self.faults.popleft()
            lose = fault is PushFault.LOSE_ANSWER
            answer = None if lose else await self._fault(fault, request, browser)
            if answer is not None:
                return answer
        if browser is None or browser.gone:
            return self._refuse(410, "push subscription has unsubscribed or expired")
        problem = self._vapid(request, browser)
        if problem is not None:
            return self._refuse(*problem)
        if "TTL" not in request.headers or not request.headers["TTL"].isdigit():
            return self._refuse(400, "TTL header is missing")
        if request.headers.get("Urgency", "normal") not in ("very-low", "low", "normal", "high"):
            return self._refuse(400, "bad Urgency")
        if request.headers.get("Content-Encoding") != "aes128gcm":
            return self._refuse(415, "Content-Encoding must be aes128gcm")
        body = await request.read()
        if len(body) > 4096:
            return self._refuse(413, "payload too large")
        try:
            plain = http_ece.decrypt(
                body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
            )
            message = json.loads(plain)
        except Exception as exc:  # http_ece raises what cryptography raises
            return self._refuse(400, f"could not decrypt: {type(exc).__name__}")
        browser.messages.append(message)
        browser.headers.append({k.lower(): v for k, v in request.headers.items()})
        if lose:
            assert request.transport is not None
            request.transport.abort()  # taken; the 201 never leaves
            return web.Response(status=201)
        return web.Response(
            status=201, headers={"Location": f"{self.url}/m/{next(self._ids)}", "TTL": "0"}
        )

    async def _fault(
        self, fault: PushFault, request: web.Request, browser: Browser | None
    ) -> web.StreamResponse | None:
        if fault in (PushFault.NOT_FOUND, PushFault.GONE):
            if browser is not None:
                browser.gone = True
            return web.Response(status=int(fault.value), text="Subscription not found")
        if fault is PushFault.TOO_LARGE:
            return web.Response(status=413, text="Payload Too Large")
        if fault is PushFault.RATE_LIMITED:
            return web.Response(
                status=429,
                text="Too Many Requests",
                headers={"Retry-After": f"{self.retry_after:g}"},
            )
        if fault is PushFault.JSON_500:
            return web.json_response({"code": 500, "errno": 999, "error": "Internal"}, status=500)
        if fault is PushFault.HTML_502:
            return web.Response(
                status=502, text="<html><body><h1>502 Bad Gateway</h1></body></html>",
                content_type="text/html",
            )  # fmt: skip
        if fault is PushFault.PLAIN_503:
            return web.Response(status=503, text="upstream connect error")
        if fault is PushFault.HANG:
            await self._closing.wait()
            return web.Response(status=500)
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=500)

    def _vapid(self, request: web.Request, browser: Browser) -> tuple[int, str] | None:
        scheme, _, params = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "vapid":
            return 401, "Authorization must be vapid t=..., k=..."
        parts = dict(p.strip().split("=", 1) for p in params.split(",") if "=" in p)
        token, key = parts.get("t", ""), parts.get("k", "")
        try:
            public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
            claims = jwt.decode(
                token, public, algorithms=["ES256"], audience=self.url,
                options={"require": ["aud", "exp", "sub"]},
            )  # fmt: skip
        except (ValueError, jwt.PyJWTError) as exc:
            return 401, f"bad VAPID JWT: {type(exc).__name__}"
        if int(claims["exp"]) > time.time() + 24 * 3600:
            return 401, "VAPID exp more than 24 hours away"
        if not str(claims["sub"]).startswith(("mailto:", "https://")):
            return 401, "VAPID sub must be mailto: or https:"
        if browser.server_key and key != browser.server_key:
            return 403, "VAPID key does not match the subscription's applicationServerKey"
        return None

    def _refuse(self, status: int, why: str) -> web.Response:
        self.refusals.append((status, why))
        return web.Response(status=status, text=why)
