"""Sending to channels over REST only, with discord.py's HTTP client.

Its own `discord.http.HTTPClient` (its own session and per-route buckets), logged in once
with the bot token: deliveries keep flowing while the gateway reconnects or even if it
never connects. discord.py honours the `X-RateLimit-*` buckets and sleeps out 429s; the
dispatcher paces the global rate (`DiscordAdapter.pacing`), which discord.py does not.

Every send carries the delivery id as `nonce` (discord.py then sets `enforce_nonce`, so a
retried send returns the message already posted) and mentions switched off. Discord honours
the nonce for a few minutes only, and does not keep it on the message, so the delivery id
also rides in the first embed's link as a fragment (`…#strikebot=<id>`: invisible, and the
page ignores it). `find` looks for it among the channel's messages since the delivery was
made (Read Message History), for a copy whose send outcome is unknown and that is retried
after the nonce window; a message without a link is recognised by its title and text.

Errors become the two the dispatcher understands:
- `PermanentDeliveryError`: 403 (the bot lost access), 404 (channel deleted), other 4xx
  that a retry cannot fix (a malformed request).
- `TransientDeliveryError`: 429 that discord.py gave up on, 5xx, timeouts, connection
  resets, and 401 (a refused token is an operator problem, not the channel's). So is any
  answer that is not Discord's JSON (a proxy's HTML or plain-text page, a body cut short):
  it was not Discord judging the channel, so the channel is not parked for it.

A global 429 (`X-RateLimit-Global: true`, or `"global": true` in the body) is handled here,
not by discord.py: discord.py would clear its global-lock event and sleep out Retry-After
inside the request, and our request timeout cancelling that sleep leaves the event cleared
for good, so every later request hangs; past its `max_ratelimit_timeout` it raises a
`RateLimited` that no longer says the limit was global. The sending client's session
(`GuardedSession`) stops the request as soon as such a response arrives, before discord.py
reads it, and the send raises
`TransientDeliveryError(..., retry_after, is_global=True)`: the dispatcher pauses the whole
platform for that long and then carries on. discord.py's lock is never touched.

A per-route 429 asking for longer than `route_wait_limit(request_timeout)` (a few seconds)
is stopped the same way and raised as a rate limit of that channel, not slept on inside
the request: discord.py only raises `RateLimited` past 30 s, so a Retry-After between the
request timeout and 30 s used to end as "did not answer", unpaused, and the retry fired
straight back into the limit. Shorter ones discord.py sleeps out as before.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from collections import deque
from collections.abc import Awaitable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import aiohttp
import discord
from discord.http import HTTPClient, MultipartParameters, handle_message_parameters
from discord.utils import _from_json

from bot.ports import PermanentDeliveryError, TransientDeliveryError

log = logging.getLogger("strikebot.discord")
T = TypeVar("T")

UNKNOWN_MESSAGE = 10008  # Discord's JSON error code
NO_MENTIONS = discord.AllowedMentions.none()
DISCORD_GLOBAL_LIMIT = 50  # requests per second per bot token, whoever sends them, unless
# Discord has granted the bot more (`[delivery] discord_global_limit`)
MARKER = "strikebot="
FIND_PAGES = 10  # 100 messages each: how far back a copy in doubt is looked for
FIND_MARGIN = timedelta(minutes=1)  # clocks differ: look a little before the delivery
GUARD_SLACK = 0.005  # seconds a paced request may start late without waiting at the guard
ROUND_TRIP_RISE = 0.0005  # seconds the guard's shortest round trip rises at each answer
ACCESS_HINT = (
    "Give the bot View Channel, Send Messages and Embed Links in that channel "
    "(or resubscribe another channel), then retry with `strikebot deliveries retry`."
)


class FanoutHTTPClient(HTTPClient):
    """discord.py's HTTP client, with bucket pruning fit for fan-out to many channels, and
    its session a `GuardedSession` (the window guard and the 429 check per request).

    Past 256 rate-limit buckets, discord.py scans all of them every time it creates a new
    one, removing those idle for five minutes. A fan-out creates one bucket per channel,
    all active, so each send scans every bucket so far: quadratic (for 10,000 channels,
    about 50 million checks). Here the scan runs at most every `PRUNE_EVERY` seconds.
    """

    PRUNE_EVERY = 30.0
    _next_prune = 0.0
    route_limit = 5.0  # see `GuardedSession`
    guard: WindowGuard | None = None
    _session: Any = None

    @property
    def _HTTPClient__session(self) -> Any:
        """discord.py's session, seen through `GuardedSession` once it is made."""
        return self._session

    @_HTTPClient__session.setter
    def _HTTPClient__session(self, session: Any) -> None:
        if isinstance(session, aiohttp.ClientSession):
            session = GuardedSession(session, self.route_limit, self.guard)
        self._session = session

    def _try_clear_expired_ratelimits(self) -> None:
        now = time.monotonic()
        if now < self._next_prune:
            return
        self._next_prune = now + self.PRUNE_EVERY
        super()._try_clear_expired_ratelimits()


class GlobalRateLimit(Exception):
    """Discord answered a global 429: every request of this token must wait `retry_after`."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"global rate limit for {retry_after:g}s")
        self.retry_after = retry_after


DEFAULT_GLOBAL_PAUSE = 1.0  # seconds, when a global 429 names no usable Retry-After


class RouteRateLimit(Exception):
    """Discord answered a 429 for one route (a channel) asking for a long wait."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limit for {retry_after:g}s")
        self.retry_after = retry_after


def route_wait_limit(request_timeout: float) -> float:
    """The longest per-route Retry-After discord.py may sleep out inside a request: short
    enough that the request still ends well inside its timeout."""
    return min(5.0, request_timeout / 2)


async def _retry_after_429(response: aiohttp.ClientResponse) -> tuple[float, bool] | None:
    """(Retry-After, global?) of a 429 from Discord's API (the body's exact value, else the
    header's whole seconds), or None when `response` is not one."""
    if response.status != 429 or not response.headers.get("Via"):
        return None  # no Via: Cloudflare's ban page, which discord.py reports as it is
    try:
        body: Any = _from_json(await response.text(encoding="utf-8"))
    except ValueError:
        body = None
    body = body if isinstance(body, dict) else {}
    header_global = response.headers.get("X-RateLimit-Global", "").lower() == "true"
    is_global = header_global or body.get("global") is True
    for raw in (body.get("retry_after"), response.headers.get("Retry-After")):
        seconds = _seconds(raw)
        if seconds is not None:
            return seconds, is_global
    return (DEFAULT_GLOBAL_PAUSE, True) if is_global else None


def _seconds(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


async def stop_at_429(response: aiohttp.ClientResponse, route_limit: float) -> None:
    """Raise `GlobalRateLimit` for a global 429, `RouteRateLimit` for a per-route one asking
    for more than `route_limit` seconds; return for any other answer."""
    found = await _retry_after_429(response)
    if found is None:
        return
    retry_after, is_global = found
    if is_global:
        raise GlobalRateLimit(retry_after)
    if retry_after > route_limit:
        raise RouteRateLimit(retry_after)


UNTIMED = aiohttp.ClientTimeout(total=None, sock_connect=30.0)  # see `GuardedSession`


class GuardedSession:
    """discord.py's aiohttp session for the sending client, with the last rate check before
    each request (`guard`, right before the request goes on the wire: after discord.py's own
    waits) and the 429 check on its answer. A global 429, and a per-route one asking for
    more than `route_limit` seconds, end the request as soon as its headers arrive, before
    discord.py's rate-limit code sees it (`stop_at_429`). What aiohttp trace hooks did
    before, without aiohttp's tracing machinery on every request (several awaited signals
    each). Everything else is the session's own.

    Its requests carry no total timeout of aiohttp's own (a timer per request, for
    discord.py's five minutes): `RestSender._call` bounds every call, retries and bucket
    waits included, by the request timeout."""

    def __init__(
        self, session: aiohttp.ClientSession, route_limit: float, guard: WindowGuard | None
    ) -> None:
        self.session = session
        self.route_limit = route_limit
        self.guard = guard

    def request(self, method: str, url: Any, **kwargs: Any) -> _GuardedRequest:
        kwargs.setdefault("timeout", UNTIMED)
        return _GuardedRequest(self, method, url, kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


class _GuardedRequest:
    """`async with GuardedSession.request(...) as response`, as aiohttp's own."""

    __slots__ = ("_context", "_kwargs", "_method", "_owner", "_url")

    def __init__(self, owner: GuardedSession, method: str, url: Any, kwargs: Any) -> None:
        self._owner, self._method, self._url, self._kwargs = owner, method, url, kwargs
        self._context: Any = None

    async def __aenter__(self) -> aiohttp.ClientResponse:
        owner = self._owner
        guard = owner.guard
        entry = None if guard is None else await guard.wait()
        self._context = owner.session.request(self._method, self._url, **self._kwargs)
        response: aiohttp.ClientResponse = await self._context.__aenter__()
        if entry is not None:
            guard.answered(entry)  # type: ignore[union-attr]
        if response.status == 429:
            try:
                await stop_at_429(response, owner.route_limit)
            except BaseException:
                response.release()
                raise
        return response

    async def __aexit__(self, *exc: Any) -> None:
        await self._context.__aexit__(*exc)


class WindowGuard:
    """At most `limit` requests start in any sliding `window` seconds.

    The dispatcher paces sends evenly, but a send's slot is reserved before the work that
    precedes it (rendering, a store read, discord.py's bucket locks), so sends can leave in
    small bursts; Discord counts arrivals, and a burst over its global limit earns 429s.
    This is the last check, as discord.py calls its session (`GuardedSession`): after
    discord.py's own waits, right before the request goes on the wire, so that what it
    counts is as close as it can be to what Discord counts (a loaded machine's stalls in
    between would otherwise bunch requests the guard had spaced).

    A request answered later than the shortest recent round trip may have been counted
    that much later too (a server or a network that stalled takes the requests sent
    meanwhile together): past what the window's slack covers, it counts as started then
    (`answered`), so the requests a window later wait for it (see bench/README.md).
    """

    def __init__(
        self,
        limit: int,
        window: float = 1.0,
        *,
        also: tuple[tuple[int, float], ...] = (),
        slack: float = 0.0,
    ) -> None:
        self.limit = max(limit, 1)
        self.window = window
        # Every rule holds at once: at most `limit` starts in any `window` seconds.
        self.rules = ((self.limit, window), *((max(n, 1), w) for n, w in also))
        self._longest = max(w for _, w in self.rules)
        # [counted at, started at] per request, oldest first
        self._starts: deque[list[float]] = deque()
        self._queue = asyncio.Lock()  # held by the request waiting for room, first in line
        self.slack = slack  # how late a request may be counted without a 429 (`for_pace`)
        self.round_trip = math.inf  # the shortest recent round trip, rising slowly

    @classmethod
    def for_pace(cls, pace: float, platform_limit: int, burst: int = 1) -> WindowGuard:
        """About `pace` starts in any second (and `burst`, the pacer's requests that
        leave together: a pair waits for nothing here), and at most `platform_limit` in any
        `platform_limit / pace - GUARD_SLACK` seconds. The second rule keeps the platform's
        one-second window under its limit even when requests bunch on their way by up to
        the difference (at 48/s under Discord's 50/s: 37 ms; at 48.5/s: 26 ms); with the
        first alone, three requests bunched by a loaded machine make a 429.

        Both rules leave `GUARD_SLACK` to a stream sent at exactly `pace`: the pacer's
        requests start a little after their slots (a timer's wake, the work before the
        request), and a rule set at the pace itself made every second request sleep here for
        that jitter (below a whole pace, as 48 for 48.5/s, every request once the queue had
        formed): a wake-up of the event loop each, for nothing. Only a burst waits now."""
        per_second = min(math.floor(pace * (1 + GUARD_SLACK)) + max(burst, 1), platform_limit)
        if pace >= platform_limit:
            return cls(math.floor(pace))
        window = platform_limit / pace - GUARD_SLACK
        return cls(per_second, also=((platform_limit, window),), slack=window - 1.0)

    async def wait(self) -> list[float]:
        """Return when this request may start (counted as started; the entry to hand to
        `answered`). Requests waiting here are let through one at a time, in order: only
        the first sleeps until there is room, the others wait their turn without each
        polling the window."""
        if not self._queue.locked() and (entry := self._try_start()) is not None:
            return entry
        async with self._queue:
            while True:
                entry = self._try_start()
                if entry is not None:
                    return entry
                await asyncio.sleep(self._wait)

    def answered(self, entry: list[float]) -> None:
        """The request of `entry` (from `wait`) got its answer now: counted as started as
        late as it was answered beyond the shortest recent round trip, less the slack."""
        now = time.monotonic()
        took = now - entry[1]
        self.round_trip = low = min(took, self.round_trip + ROUND_TRIP_RISE)
        late = took - low - self.slack
        if late > 0:
            entry[0] = entry[1] + late

    _wait = 0.0

    def _try_start(self) -> list[float] | None:
        """This request's entry when it may start now (counted); else None, with how long
        until one may in `_wait`."""
        now = time.monotonic()
        starts = self._starts
        while starts and starts[0][0] <= now - self._longest:
            starts.popleft()
        wait = 0.0
        for limit, window in self.rules:
            if len(starts) >= limit:
                # The limit-th newest start must have left the window.
                oldest = starts[len(starts) - limit][0]
                if oldest > now - window:
                    wait = max(wait, oldest + window - now)
        if wait > 0:
            self._wait = wait
            return None
        entry = [now, now]
        starts.append(entry)
        return entry


class RestSender:
    """Create, edit and delete channel messages. Logs in lazily, once."""

    def __init__(
        self,
        token: str,
        *,
        request_timeout: float = 25.0,
        global_per_second: float = 48.0,
        global_limit: int = DISCORD_GLOBAL_LIMIT,
        burst: int = 1,
    ) -> None:
        self._token = token
        self.request_timeout = request_timeout
        self.guard = WindowGuard.for_pace(global_per_second, global_limit, burst)
        self._http: HTTPClient | None = None
        self._last_params: tuple[list[discord.Embed], dict[str, Any]] | None = None
        self._bot_id: str | None = None
        self._login_lock = asyncio.Lock()

    async def login(self) -> HTTPClient:
        if self._http is not None:
            return self._http
        async with self._login_lock:
            if self._http is not None:
                return self._http
            # A 429 asking for more than 30 s (discord.py's minimum) is raised instead of
            # slept on, so the dispatcher reschedules it and frees the send slot.
            # A global 429 never reaches discord.py (see the module docstring).
            http = FanoutHTTPClient(asyncio.get_running_loop(), max_ratelimit_timeout=30.0)
            http.route_limit = route_wait_limit(self.request_timeout)
            http.guard = self.guard
            try:
                async with asyncio.timeout(self.request_timeout):
                    me = await http.static_login(self._token)
                self._bot_id = str(me.get("id") or "") or None
            except discord.LoginFailure:
                await http.close()
                raise TransientDeliveryError(
                    "Discord refused DISCORD_TOKEN (401). Copy the bot token again from the "
                    "Developer Portal (Bot → Reset Token) into DISCORD_TOKEN and restart."
                ) from None
            except BaseException:
                await http.close()
                raise
            self._http = http
            return http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def send(self, channel_id: str, embeds: list[discord.Embed], *, nonce: str) -> str:
        if len(nonce) > 25:
            raise PermanentDeliveryError(
                f"The idempotency key {nonce!r} is longer than Discord's 25-character nonce."
            )
        params = self._send_params(embeds, nonce)
        data = await self._call(
            channel_id,
            "send",
            lambda http: http.send_message(_snowflake(channel_id), params=params),
        )
        message_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(message_id, str | int) or isinstance(message_id, bool):
            # A 2xx that is not a message (a proxy's page): whether Discord posted is unknown,
            # and the nonce makes the retry safe.
            raise TransientDeliveryError(
                f"Discord answered the send to channel {channel_id} without a message id "
                f"({_excerpt(data)}); it will be retried (the nonce prevents a duplicate)."
            )
        return str(message_id)

    def _send_params(self, embeds: list[discord.Embed], nonce: str) -> MultipartParameters:
        """What `handle_message_parameters(embeds=embeds, nonce=nonce, allowed_mentions=none)`
        makes, with the delivery's marker in the first embed's link. The embeds are encoded
        once per rendering (every channel of a fan-out is handed the same list) and the
        request gets a copy: its own payload, nonce and first embed's dict; the marker never
        goes into the shared encoding, nor into the embed."""
        last = self._last_params
        if last is None or last[0] is not embeds:
            template = handle_message_parameters(
                embeds=embeds, nonce=nonce, allowed_mentions=NO_MENTIONS
            ).payload
            last = self._last_params = (embeds, template or {})
        payload = dict(last[1])
        payload["nonce"] = nonce
        if first := payload.get("embeds"):
            payload["embeds"] = [dict(first[0]), *first[1:]]
        _mark_payload(payload, nonce)
        return MultipartParameters(payload=payload, multipart=None, files=None)

    async def find(
        self,
        channel_id: str,
        nonce: str,
        embeds: list[discord.Embed],
        *,
        since: datetime,
        pages: int = FIND_PAGES,
    ) -> str | None:
        """The id of the message this bot posted in the channel since `since` for delivery
        `nonce` (its link's marker, else the same title and text), or None."""
        after = discord.utils.time_snowflake(since - FIND_MARGIN)
        marker = MARKER + nonce
        wanted: dict[str, Any] = dict(embeds[0].to_dict()) if embeds else {}
        for _ in range(pages):
            try:
                page = await self._call(
                    channel_id,
                    "read",
                    lambda http, after=after: http.logs_from(
                        _snowflake(channel_id), 100, after=after
                    ),
                )
            except PermanentDeliveryError as exc:
                # No Read Message History here: the copy cannot be looked for, so it is sent
                # again (a duplicate only if the first went out past the nonce window).
                log.warning("cannot look for delivery %s: %s", nonce, exc.reason)
                return None
            if not isinstance(page, list) or not page:
                return None
            for message in page:
                if _is_copy(message, self._bot_id, nonce, marker, wanted):
                    return str(message["id"])
            if len(page) < 100:
                return None
            after = max(int(m.get("id") or 0) for m in page if isinstance(m, dict))
        return None

    async def edit(self, channel_id: str, message_id: str, embeds: list[discord.Embed]) -> None:
        params = handle_message_parameters(
            content=None, embeds=embeds, allowed_mentions=discord.AllowedMentions.none()
        )
        await self._call(
            channel_id,
            "edit",
            lambda http: http.edit_message(
                _snowflake(channel_id), _snowflake(message_id), params=params
            ),
        )

    async def delete(self, channel_id: str, message_id: str) -> None:
        try:
            await self._call(
                channel_id,
                "delete",
                lambda http: http.delete_message(_snowflake(channel_id), _snowflake(message_id)),
                gone_ok=True,
            )
        except _AlreadyGone:
            log.info("message %s in channel %s was already deleted", message_id, channel_id)

    async def _call(
        self,
        channel_id: str,
        what: str,
        request: Any,
        *,
        gone_ok: bool = False,
    ) -> Any:
        where = f"Discord channel {channel_id}"
        try:
            async with asyncio.timeout(self.request_timeout):
                http = await self.login()
                call: Awaitable[Any] = request(http)
                return await call
        except GlobalRateLimit as exc:
            raise TransientDeliveryError(
                f"Discord rate-limited every request of the bot token (global 429) for "
                f"{exc.retry_after:g}s; all sends pause, then carry on.",
                retry_after=exc.retry_after,
                is_global=True,
            ) from None
        except (discord.RateLimited, RouteRateLimit) as exc:
            raise TransientDeliveryError(
                f"Discord rate-limited {where} for {exc.retry_after:.1f}s.",
                retry_after=exc.retry_after,
            ) from None
        except discord.HTTPException as exc:
            raise _classify(exc, what, where, gone_ok=gone_ok) from None
        except ValueError as exc:
            # discord.py could not read the answer: JSON cut short, or not UTF-8.
            raise TransientDeliveryError(
                f"Discord's answer for {where} could not be read ({type(exc).__name__}); "
                "it will be retried (the nonce prevents a duplicate)."
            ) from None
        except TimeoutError:
            raise TransientDeliveryError(
                f"Discord did not answer within {self.request_timeout:g}s for {where}; "
                "it will be retried (the nonce prevents a duplicate).",
                in_doubt=True,
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise TransientDeliveryError(
                f"The connection to Discord failed for {where} ({type(exc).__name__}); "
                "it will be retried.",
                in_doubt=True,
            ) from None


class _AlreadyGone(Exception):
    pass


def marked_url(url: str, key: str) -> str:
    """`url` with the delivery id in its fragment (invisible)."""
    return f"{url}{'&' if '#' in url else '#'}{MARKER}{key}"


def mark(embeds: list[discord.Embed], key: str) -> list[discord.Embed]:
    """The embeds, the first one's link carrying the delivery id (a copy: `embeds` are left
    as they are, since one rendering serves every channel of a fan-out)."""
    if embeds and embeds[0].url:
        first = embeds[0].copy()
        first.url = marked_url(str(embeds[0].url), key)
        return [first, *embeds[1:]]
    return embeds


def _mark_payload(payload: dict[str, Any] | None, key: str) -> None:
    """`mark` on a request's payload: its first embed (a dict of this request's own) gets
    the marked link."""
    embeds = (payload or {}).get("embeds")
    if embeds and embeds[0].get("url"):
        embeds[0]["url"] = marked_url(str(embeds[0]["url"]), key)


def _is_copy(
    message: Any, bot_id: str | None, nonce: str, marker: str, wanted: dict[str, Any]
) -> bool:
    if not isinstance(message, dict):
        return False
    author = message.get("author") or {}
    if bot_id is not None and str(author.get("id")) != bot_id:
        return False
    if message.get("nonce") is not None and str(message.get("nonce")) == nonce:
        return True  # Discord echoes the nonce only sometimes; the marker is what counts
    embeds = message.get("embeds") or []
    if not embeds or not isinstance(embeds[0], dict):
        return False
    first = embeds[0]
    url = str(first.get("url") or "")
    if url:
        return url.endswith(marker) or f"{marker}&" in url
    if wanted.get("url"):
        return False
    return bool(wanted) and (first.get("title"), first.get("description")) == (
        wanted.get("title"),
        wanted.get("description"),
    )


def _snowflake(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise PermanentDeliveryError(
            f"{value!r} is not a Discord id (a number). Subscribe the channel again from Discord "
            "with /strike subscribe."
        ) from None


def _excerpt(data: object, limit: int = 120) -> str:
    """A short, one-line look at an answer for a log or an admin notice: never a whole page
    (an HTML page's tags are dropped, so what is left is its title and words)."""
    text = " ".join(re.sub(r"<[^>]*>?", " ", str(data)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _detail(exc: discord.HTTPException) -> str:
    text = _excerpt(exc.text) if exc.text else "no detail"
    return f"code {exc.code}: {text}" if exc.code else text


def _from_discords_api(exc: discord.HTTPException) -> bool:
    """Discord's API always answers errors in JSON; anything else came from a proxy, a
    load balancer or Cloudflare, and says nothing about the channel."""
    content_type = exc.response.headers.get("Content-Type", "")
    return content_type.split(";")[0].strip().lower() == "application/json"


def _classify(
    exc: discord.HTTPException, what: str, where: str, *, gone_ok: bool = False
) -> PermanentDeliveryError | TransientDeliveryError | _AlreadyGone:
    status = exc.status
    if status == 429:
        headers = exc.response.headers
        retry_after: float | None = None
        for raw in (headers.get("Retry-After"), headers.get("X-RateLimit-Reset-After")):
            retry_after = _seconds(raw)
            if retry_after is not None:
                break
        # Without `Via` the 429 is Cloudflare's, for the whole address: every send must wait.
        is_global = headers.get("X-RateLimit-Global", "").lower() == "true" or not headers.get(
            "Via"
        )
        return TransientDeliveryError(
            f"Discord kept rate-limiting {where} (429{', global' if is_global else ''}).",
            retry_after=retry_after,
            is_global=is_global,
        )
    if status >= 500:
        return TransientDeliveryError(
            f"Discord had a server error ({status}) for {where}; it will be retried."
        )
    if not _from_discords_api(exc):
        return TransientDeliveryError(
            f"Something other than Discord's API answered {status} for {where} "
            f"({_excerpt(exc.text) or 'no body'}); it will be retried. If it keeps happening, "
            "check DISCORD_API_BASE and any proxy in between."
        )
    if isinstance(exc, discord.Forbidden):
        return PermanentDeliveryError(
            f"Discord refused to {what} in {where} (403 {_detail(exc)}). {ACCESS_HINT}"
        )
    if isinstance(exc, discord.NotFound):
        if gone_ok and exc.code == UNKNOWN_MESSAGE:
            return _AlreadyGone()
        thing = "message" if exc.code == UNKNOWN_MESSAGE else "channel"
        return PermanentDeliveryError(
            f"Discord could not find the {thing} to {what} in {where} (404 {_detail(exc)}). "
            "If the channel was deleted, unsubscribe it or subscribe its replacement."
        )
    if status == 401:
        return TransientDeliveryError(
            "Discord refused DISCORD_TOKEN (401). Put the current bot token in DISCORD_TOKEN "
            "and restart."
        )
    if status in (408, 409, 425):
        return TransientDeliveryError(f"Discord asked to retry ({status}) for {where}.")
    return PermanentDeliveryError(
        f"Discord rejected the request to {what} in {where} ({status} {_detail(exc)})."
    )
