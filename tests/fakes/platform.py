"""A generic chat platform on 127.0.0.1 (aiohttp), and a tiny adapter that talks to it.

It behaves like the parts of Discord the dispatcher must survive:

    POST   /channels/{workspace}/{channel}/messages       {"nonce", "message"} -> {"id"}
    PATCH  /channels/{workspace}/{channel}/messages/{id}  {"message"}          -> {"id"}
    DELETE /channels/{workspace}/{channel}/messages/{id}                       -> 204

- Limits: an optional global rate (per token) and per-channel rate, each counted over a
  sliding window. Over a limit: 429 with `Retry-After`, a `Via` header and a JSON body
  `{"retry_after": seconds, "global": bool}`.
- Deduplication: a POST whose nonce the channel has already seen returns the message it
  created then, like Discord's `enforce_nonce`.
- Faults, scripted per channel: the next requests to a channel get them in order (429,
  global 429, 500/502, a hang before or after creating the message, a connection reset, a
  hold the test releases). `refuse()` makes a channel answer 403 or 404 for good.

Everything is recorded (`requests`, `messages`) so tests assert what the platform saw.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import aiohttp
from aiohttp import web

from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.models import Platform
from bot.ports import ChannelRef, OutboundMessage, Pacing
from tests.fakes._server import serve


class Fault(StrEnum):
    RATE_LIMITED = "429"  # this channel's bucket
    GLOBAL_RATE_LIMITED = "429-global"  # every request of the token
    SERVER_ERROR = "500"
    BAD_GATEWAY = "502"
    HANG = "hang"  # never answers, creates nothing (client times out)
    HANG_AFTER_POSTING = "hang-after-posting"  # creates the message, then never answers
    RESET = "reset"  # drops the connection without an answer
    HOLD = "hold"  # waits until the test calls release(), then answers normally


@dataclass(slots=True)
class Message:
    id: str
    workspace: str
    channel: str
    nonce: str | None
    message: dict[str, Any]
    versions: list[dict[str, Any]] = field(default_factory=list)  # every edit, in order
    deleted: bool = False

    @property
    def current(self) -> dict[str, Any]:
        return self.versions[-1] if self.versions else self.message


@dataclass(frozen=True, slots=True)
class Request:
    at: float  # the platform's clock (`FakePlatform.monotonic`) on arrival
    method: str
    workspace: str
    channel: str
    nonce: str | None
    status: int
    fault: Fault | None = None


class FakePlatform:
    """`async with FakePlatform(...) as fake:` serves on 127.0.0.1 at `fake.url`."""

    def __init__(
        self,
        *,
        global_per_second: float | None = None,
        per_channel_per_second: float | None = None,
        window: float = 1.0,
        retry_after: float = 0.05,
        latency: float = 0.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.monotonic = monotonic  # the platform's clock: its windows and `Request.at`
        self.global_limit = global_per_second
        self.channel_limit = per_channel_per_second
        self.window = window
        self.retry_after = retry_after
        self.latency = latency
        self.url = ""
        self.messages: dict[str, Message] = {}
        self.requests: list[Request] = []
        self.unscripted_429s = 0
        self._ids = itertools.count(100_000_000_000_000_000)
        self._nonces: dict[tuple[str, str, str], str] = {}
        self._faults: dict[tuple[str, str], deque[Fault]] = {}
        self._refused: dict[tuple[str, str], int] = {}
        self._global_window: deque[float] = deque()
        self._channel_windows: dict[tuple[str, str], deque[float]] = {}
        self._changed = asyncio.Condition()
        self._closing = asyncio.Event()
        self._held = asyncio.Event()
        self._runner: web.AppRunner | None = None

    # -- lifecycle -------------------------------------------------------------

    async def __aenter__(self) -> FakePlatform:
        app = web.Application()
        base = "/channels/{workspace}/{channel}/messages"
        app.router.add_post(base, self._post)
        app.router.add_patch(base + "/{id}", self._patch)
        app.router.add_delete(base + "/{id}", self._delete)
        self._runner, port = await serve(app, access_log=None, shutdown_timeout=0.1)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing.set()
        self._held.set()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- scripting -------------------------------------------------------------

    def script(self, workspace: str, channel: str, *faults: Fault) -> None:
        """The next requests to this channel meet `faults`, one each, in order."""
        self._faults.setdefault((workspace, channel), deque()).extend(faults)

    def clear_faults(self) -> None:
        """Forget every scripted fault not yet met."""
        self._faults.clear()

    def refuse(self, workspace: str, channel: str, status: int = 403) -> None:
        """Answer every request to this channel with 403 (Missing Access) or 404."""
        self._refused[(workspace, channel)] = status

    def allow(self, workspace: str, channel: str) -> None:
        """Let a refused channel answer again (the bot was given access)."""
        self._refused.pop((workspace, channel), None)

    def release(self) -> None:
        """Let every HOLD request (now and later) answer."""
        self._held.set()

    # -- what the platform saw -------------------------------------------------

    def messages_in(self, workspace: str, channel: str) -> list[Message]:
        return [
            m
            for m in self.messages.values()
            if (m.workspace, m.channel) == (workspace, channel) and not m.deleted
        ]

    def posts_per_nonce(self) -> Counter[str]:
        """How many POST requests carried each nonce (retries included)."""
        return Counter(r.nonce for r in self.requests if r.method == "POST" and r.nonce)

    def messages_per_channel(self) -> Counter[tuple[str, str]]:
        return Counter((m.workspace, m.channel) for m in self.messages.values() if not m.deleted)

    async def wait_until(self, check: Callable[[], bool], within: float = 10.0) -> None:
        """Wait (without polling) until `check()` holds after some request."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(check)

    # -- handlers --------------------------------------------------------------

    async def _post(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        nonce = body.get("nonce")
        return await self._handle(request, "POST", nonce, lambda ws, ch: self._create(ws, ch, body))

    async def _patch(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        return await self._handle(request, "PATCH", None, lambda ws, ch: self._edit(request, body))

    async def _delete(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "DELETE", None, lambda ws, ch: self._remove(request))

    async def _handle(
        self,
        request: web.Request,
        method: str,
        nonce: str | None,
        act: Callable[[str, str], web.Response],
    ) -> web.StreamResponse:
        ws, ch = request.match_info["workspace"], request.match_info["channel"]
        if self.latency:
            await asyncio.sleep(self.latency)
        refused = self._refused.get((ws, ch))
        if refused is not None:
            text = "Missing Access" if refused == 403 else "Unknown Channel"
            return await self._answer(
                method, ws, ch, nonce, None, _json(refused, {"message": text})
            )
        queued = self._faults.get((ws, ch))
        fault = queued.popleft() if queued else None
        if fault is None:
            limited = self._over_limit(ws, ch)
            if limited is not None:
                self.unscripted_429s += 1
                return await self._answer(method, ws, ch, nonce, None, limited)
        if fault in (Fault.RATE_LIMITED, Fault.GLOBAL_RATE_LIMITED):
            response = _rate_limited(self.retry_after, fault is Fault.GLOBAL_RATE_LIMITED)
            return await self._answer(method, ws, ch, nonce, fault, response)
        if fault in (Fault.SERVER_ERROR, Fault.BAD_GATEWAY):
            status = 500 if fault is Fault.SERVER_ERROR else 502
            response = _json(status, {"message": "internal error"})
            return await self._answer(method, ws, ch, nonce, fault, response)
        if fault is Fault.HANG:
            await self._record(method, ws, ch, nonce, 0, fault)
            await self._closing.wait()
            return _json(503, {"message": "shutting down"})
        if fault is Fault.RESET:
            await self._record(method, ws, ch, nonce, 0, fault)
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        if fault is Fault.HOLD:
            await self._record(method, ws, ch, nonce, 0, fault)  # arrived; answers later
            await self._held.wait()
        response = act(ws, ch)
        if fault is Fault.HANG_AFTER_POSTING:
            await self._record(method, ws, ch, nonce, 0, fault)
            await self._closing.wait()
            return _json(503, {"message": "shutting down"})
        return await self._answer(method, ws, ch, nonce, fault, response)

    async def _answer(
        self,
        method: str,
        ws: str,
        ch: str,
        nonce: str | None,
        fault: Fault | None,
        response: web.Response,
    ) -> web.Response:
        await self._record(method, ws, ch, nonce, response.status, fault)
        return response

    async def _record(
        self, method: str, ws: str, ch: str, nonce: str | None, status: int, fault: Fault | None
    ) -> None:
        self.requests.append(Request(self.monotonic(), method, ws, ch, nonce, status, fault))
        async with self._changed:
            self._changed.notify_all()

    def _over_limit(self, ws: str, ch: str) -> web.Response | None:
        now = self.monotonic()
        checks: list[tuple[deque[float], float | None, bool]] = [
            (self._global_window, self.global_limit, True),
            (self._channel_windows.setdefault((ws, ch), deque()), self.channel_limit, False),
        ]
        for window, limit, is_global in checks:
            while window and window[0] <= now - self.window:
                window.popleft()
            if limit is not None and len(window) >= limit * self.window:
                return _rate_limited(window[0] + self.window - now, is_global)
        for window, _, _ in checks:
            window.append(now)
        return None

    def _create(self, ws: str, ch: str, body: Mapping[str, Any]) -> web.Response:
        nonce = body.get("nonce")
        if nonce is not None and (ws, ch, nonce) in self._nonces:
            return _json(200, {"id": self._nonces[(ws, ch, nonce)]})
        message_id = str(next(self._ids))
        self.messages[message_id] = Message(message_id, ws, ch, nonce, dict(body["message"]))
        if nonce is not None:
            self._nonces[(ws, ch, nonce)] = message_id
        return _json(200, {"id": message_id})

    def _edit(self, request: web.Request, body: Mapping[str, Any]) -> web.Response:
        found = self.messages.get(request.match_info["id"])
        if found is None or found.deleted:
            return _json(404, {"message": "Unknown Message"})
        found.versions.append(dict(body["message"]))
        return _json(200, {"id": found.id})

    def _remove(self, request: web.Request) -> web.Response:
        found = self.messages.get(request.match_info["id"])
        if found is None or found.deleted:
            return _json(404, {"message": "Unknown Message"})
        found.deleted = True
        return web.Response(status=204)


def _json(status: int, data: Mapping[str, Any]) -> web.Response:
    return web.json_response(data, status=status)


def _rate_limited(seconds: float, is_global: bool) -> web.Response:
    seconds = max(seconds, 0.001)
    response = _json(
        429, {"message": "You are being rate limited.", "retry_after": seconds, "global": is_global}
    )
    response.headers["Retry-After"] = f"{seconds:.3f}"
    response.headers["Via"] = "1.1 google"
    if is_global:
        response.headers["X-RateLimit-Global"] = "true"
    return response


class FakePlatformAdapter:
    """A `bot.ports.Adapter` for `FakePlatform`: each outcome maps to the dispatcher's errors
    the way a real adapter's would (429/5xx/timeouts transient, 403/404 permanent)."""

    def __init__(
        self,
        url: str,
        *,
        platform: Platform = "discord",
        pacing: Pacing | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.url = url
        self.platform = platform
        self._pacing = pacing or Pacing(
            global_per_second=200.0, per_channel_per_second=50.0, max_in_flight=16
        )
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def pacing(self) -> Pacing:
        return self._pacing

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> FakePlatformAdapter:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        data = await self._call(
            "POST", channel, "", {"nonce": idempotency_key, "message": message.to_json()}
        )
        return str(data["id"])

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        await self._call("PATCH", channel, f"/{message_id}", {"message": message.to_json()})

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        await self._call("DELETE", channel, f"/{message_id}", None)

    def health(self) -> Mapping[str, object]:
        return {"connected": self._session is not None}

    async def _call(
        self, method: str, channel: ChannelRef, suffix: str, body: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if self._session is None:
            raise TransientDeliveryError("the adapter is not started")
        url = f"{self.url}/channels/{channel.workspace}/{channel.channel}/messages{suffix}"
        try:
            async with self._session.request(method, url, json=body) as response:
                status = response.status
                data = await response.json() if status != 204 else {}
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise TransientDeliveryError(f"{type(exc).__name__}: {exc}") from exc
        if status == 429:
            raise TransientDeliveryError(
                "rate limited (429)",
                retry_after=float(data.get("retry_after", 1.0)),
                is_global=bool(data.get("global")),
            )
        if status >= 500:
            raise TransientDeliveryError(f"server error ({status})")
        if status >= 400:
            raise PermanentDeliveryError(f"{data.get('message', 'refused')} ({status})")
        return dict(data)
