"""The aiohttp application: routes, middlewares and the state every handler shares."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
from aiohttp import hdrs, web
from multidict import CIMultiDict
from pydantic import BaseModel

from bot.ports import (
    STORE_FAILURES,
    Conflict,
    InvalidInput,
    NotAllowed,
    NotFound,
    PluginContext,
    SharedCheck,
    StoreUnavailable,
    StrikebotError,
    i18n,
)

from ._admin_limit import AdminAttempts
from ._cache import (
    CODINGS,
    Cached,
    Moment,
    Rendered,
    ResponseCache,
    Tick,
    Validators,
    compressible,
    make_etag,
    variant_etag,
)
from ._present import chip_css, paragraphs_of, say
from ._schemas import BadRequest, ErrorBody, ErrorOut
from ._settings import WebSettings
from ._shell import HTML, language_of_path, message_rendered

log = logging.getLogger("strikebot.web")

TEMPLATES = Path(__file__).parent / "templates"
ADMIN_PREFIX = "/api/v1/admin"
ADMIN_DIR = ADMIN_PREFIX + "/"
JSON = "application/json"
MAX_BODY = 256 * 1024  # bytes of request body the server reads at most (413 beyond)
PAGE_MAX_AGE = 30  # seconds a browser or CDN may reuse a public page or feed
# What a CDN may do beyond max-age: serve its copy while it asks us again, and keep serving
# it for a day if we cannot answer at all.
STALE_DIRECTIVES = "stale-while-revalidate=60, stale-if-error=86400"
STORE_TIMEOUT = 3.0  # seconds a request waits for the store before serving what it has
# A static build has no reader waiting, so it waits for a slow store instead of failing.
PUBLISH_STORE_TIMEOUT = 60.0
STORE_BACKOFF = 1.0  # after a failure, seconds before the store is asked again
STALE_MARKER = b"<!--strikebot:stale-notice-->"
# No scripts, no frames, nothing fetched from elsewhere: the pages need none of it.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; manifest-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True, slots=True)
class EmbargoTimer:
    """The next embargo to pass, as read at `asked` for public version `version`."""

    version: int
    asked: datetime
    due: datetime | None

    def covers(self, version: int, now: datetime) -> bool:
        return (
            version == self.version and self.asked <= now and (self.due is None or now < self.due)
        )


@dataclass(frozen=True, slots=True)
class HotKeys:
    """The cache key of every tick from `start` to `end` (one minute) at one public version
    and embargo timer."""

    version: int
    timer: EmbargoTimer
    start: datetime
    end: datetime
    keys: dict[Tick, Hashable]

    def serves(self, version: int, timer: EmbargoTimer, now: datetime) -> bool:
        return version == self.version and timer is self.timer and self.start <= now < self.end


class StoreDown(Exception):
    """The store failed a moment ago: serve what is cached without asking it again yet."""


@dataclass(slots=True)
class WebState:
    """What every handler shares: the plugin's context, the templates, the rendered
    responses, and what the store said last (the embargo timer, whether it is down)."""

    ctx: PluginContext
    settings: WebSettings
    templates: jinja2.Environment
    cache: ResponseCache = field(default_factory=ResponseCache)
    status_css: str = field(default_factory=chip_css)
    openapi: bytes = b""
    zone: ZoneInfo = field(init=False)
    timer: EmbargoTimer | None = None
    down_until: float = 0.0  # loop time before which the store is not asked again
    static: bool = False  # rendering for static files: no relative countdowns
    store_timeout: float = STORE_TIMEOUT  # seconds a render waits for the store
    # (route, status) -> the labels it is counted under in strikebot_http_requests_total
    counters: dict[tuple[Hashable, int], tuple[str, str]] = field(default_factory=dict)
    admin_attempts: AdminAttempts = field(default_factory=AdminAttempts)
    _timer_check: SharedCheck[EmbargoTimer] = field(init=False)
    _hot: HotKeys | None = None
    # What the pages' CSP adds (the "Notify me" button's script, when it is offered).
    csp_extra: Callable[[], str] = lambda: ""

    def __post_init__(self) -> None:
        self.zone = ZoneInfo(self.ctx.campaign.timezone)
        self._timer_check = SharedCheck(self._read_timer)

    async def _read_timer(self) -> EmbargoTimer:
        version = await self.ctx.public.current()
        now = self.ctx.clock()
        async with self.ctx.reads() as tx:
            due = await tx.next_embargo(now)
        return EmbargoTimer(version, now, due)

    def hot_key(self, tick: Tick) -> tuple[Hashable, datetime] | None:
        """`moment().key(tick)` and the time now, without waiting, when memory answers (the
        hot path), else None. The keys are worked out once a minute: within one UTC minute
        the local date and year cannot change (zones are offset by whole minutes)."""
        version = self.ctx.public.vouched()
        timer = self.timer
        if version is None or timer is None or self.down_until:
            return None
        now = self.ctx.clock()
        if not timer.covers(version, now):
            return None
        hot = self._hot
        if hot is None or not hot.serves(version, timer, now):
            moment = Moment(now, version, timer.due, now.astimezone(self.zone))
            start = now.replace(second=0, microsecond=0)
            keys = {t: moment.key(t) for t in Tick}
            hot = self._hot = HotKeys(version, timer, start, start + timedelta(minutes=1), keys)
        return hot.keys[tick], now

    async def moment(self) -> Moment:
        """The public version and next embargo now: from memory while nothing changed (a
        watcher vouches for it), else one primary-key read, plus one indexed read when the
        version moved or an embargo passed."""
        loop = asyncio.get_running_loop()
        if loop.time() < self.down_until:
            raise StoreDown
        now = self.ctx.clock()
        version = await self.ctx.public.current()
        timer = self.timer
        if timer is None or not timer.covers(version, now):
            timer = self.timer = await self._timer_check.get()
        was_down, self.down_until = self.down_until, 0.0
        if was_down:
            log.info("the store answers again: serving fresh pages")
        return Moment(now, max(version, timer.version), timer.due, now.astimezone(self.zone))

    def store_failed(self, exc: BaseException) -> None:
        """Serve cached pages without asking the store for `STORE_BACKOFF` seconds."""
        if not self.down_until:
            log.warning(
                "the store failed (%s: %s): serving the last good pages, marked as possibly "
                "out of date, until it answers again",
                type(exc).__name__,
                exc,
            )
        self.down_until = asyncio.get_running_loop().time() + STORE_BACKOFF


STATE = web.AppKey("strikebot_web", WebState)


def state_of(request: web.Request) -> WebState:
    return request.app[STATE]


def make_templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html"], default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["paragraphs"] = paragraphs_of
    return env


# -- responses -----------------------------------------------------------------------


def json_response(model: BaseModel, status: int = 200, **headers: str) -> web.Response:
    return web.Response(
        body=model.model_dump_json().encode(),
        status=status,
        headers={"Content-Type": JSON, **headers},
    )


def json_error(
    status: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    body = ErrorOut(error=ErrorBody(code=code, message=message, details=details))
    return web.Response(
        body=body.model_dump_json(exclude_none=True).encode(),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


async def cached(
    request: web.Request,
    slot: Hashable,
    render: Callable[[datetime], Awaitable[Rendered]],
    *,
    max_age: int = PAGE_MAX_AGE,
    pinned: bool = False,
    tick: Tick = Tick.NEVER,
) -> web.StreamResponse:
    """Serve `render(now)`'s output from the cache while what it shows is unchanged, with
    validators (ETag, Last-Modified) and a caching policy a CDN can act on.

    `pinned`: one of the few hot slots that must never be evicted (see ResponseCache).
    `tick`: how often the view changes with the clock alone. When the store fails, the last
    good render is served, marked as possibly out of date; never a 500."""
    answer = from_memory(request, slot, max_age=max_age, tick=tick)
    if answer is not None:
        return answer
    state = state_of(request)
    try:
        async with asyncio.timeout(state.store_timeout):
            moment = await state.moment()
    except Exception as exc:
        if not isinstance(exc, StoreDown):
            state.store_failed(exc)
        return stale_response(request, slot)
    unchanged = not_modified(request, slot, moment.key(tick), max_age)
    if unchanged is not None:
        return unchanged
    try:
        async with asyncio.timeout(state.store_timeout):
            entry = await state.cache.get(
                slot,
                moment.key(tick),
                lambda: render(moment.now),
                now=moment.now,
                floor=moment.floor(tick),
                pinned=pinned,
            )
    except Exception as exc:
        if isinstance(exc, (*STORE_FAILURES, OSError, TimeoutError)):
            state.store_failed(exc)
        else:
            log.exception("rendering %s failed; serving the last good one", request.path)
        return stale_response(request, slot)
    return ready(request, entry, max_age)


def from_memory(
    request: web.Request, slot: Hashable, *, max_age: int = PAGE_MAX_AGE, tick: Tick = Tick.NEVER
) -> Ready | None:
    """`cached`'s answer when memory holds it (nothing changed and nothing due), without
    waiting; else None. A hot route asks this first, so that its hits skip making the
    render closure and `cached`'s coroutine."""
    state = state_of(request)
    hot = state.hot_key(tick)
    if hot is None:
        return None
    entry = state.cache.fresh(slot, *hot)
    return None if entry is None else ready(request, entry, max_age)


def cache_control(max_age: int, status: int = 200) -> str:
    if status != 200:
        max_age = min(max_age, 10)  # a missing update may be published any moment
    return f"public, max-age={max_age}, {STALE_DIRECTIVES}"


def conditional(
    request: web.Request, body: bytes, entry: Cached, max_age: int, etag: str | None = None
) -> web.Response:
    """`body` with its validators, or 304 when the client already holds it."""
    etag = etag or entry.etag
    headers = {
        "ETag": etag,
        "Last-Modified": entry.last_modified,
        "Cache-Control": cache_control(max_age, entry.status),
    }
    if entry.status == 200 and _not_modified(request, etag, entry.modified):
        return web.Response(status=304, headers=headers)
    return web.Response(
        body=body, status=entry.status, headers={"Content-Type": entry.content_type, **headers}
    )


class Ready(web.Response):
    """An answer from the cache with headers made once per entry, the security headers
    included (the middleware leaves it alone)."""


def ready(request: web.Request, entry: Cached, max_age: int) -> Ready:
    """`conditional(request, entry.body, entry, max_age)` with the security headers, in the
    content coding the client takes best (compressed once per entry), from headers made
    once per entry: the hot path."""
    path = request.path
    varies = compressible(entry.content_type, len(entry.body))
    coding = coding_for(request) if varies else ""
    etag = variant_etag(entry.etag, coding)
    unchanged = entry.status == 200 and _not_modified(request, etag, entry.modified)
    shape = (max_age, unchanged, is_public_data(path), coding, varies)
    headers = entry.ready.get(shape)
    if headers is None:
        headers = entry.ready[shape] = answer_headers(
            path, entry.validators(), max_age, unchanged=unchanged, coding=coding, varies=varies,
            csp=state_of(request).csp_extra(),
        )  # fmt: skip
    if unchanged:
        return Ready(status=304, headers=headers)
    return Ready(body=entry.body_in(coding), status=entry.status, headers=headers)


def answer_headers(
    path: str,
    known: Validators,
    max_age: int,
    *,
    unchanged: bool,
    coding: str,
    varies: bool,
    csp: str = "",
) -> CIMultiDict[str]:
    """The headers of a cached answer (a 200 or its 304), security headers included."""
    made = {
        "ETag": variant_etag(known.etag, coding),
        "Last-Modified": format_datetime(known.modified, usegmt=True),
        "Cache-Control": cache_control(max_age, known.status),
    }
    if varies:
        made["Vary"] = "Accept-Encoding"
    if not unchanged:
        made = {"Content-Type": known.content_type, **made}
        if coding:
            made["Content-Encoding"] = coding
    shell = web.StreamResponse(headers=made)  # as `surface` would complete them
    secure(path, shell, csp)
    return shell.headers


def not_modified(request: web.Request, slot: Hashable, key: Hashable, max_age: int) -> Ready | None:
    """A 304 from what is known of `slot` at `key` (its validators outlive its body), before
    any rendering; None when the request is not conditional or the client's copy is not
    the current one."""
    if not (hdrs.IF_NONE_MATCH in request.headers or hdrs.IF_MODIFIED_SINCE in request.headers):
        return None
    known = state_of(request).cache.known(slot, key)
    if known is None or known.status != 200:
        return None
    varies = compressible(known.content_type, known.size)  # as its 200 would say
    coding = coding_for(request) if varies else ""
    if not _not_modified(request, variant_etag(known.etag, coding), known.modified):
        return None
    headers = answer_headers(
        request.path, known, max_age, unchanged=True, coding=coding, varies=varies,
        csp=state_of(request).csp_extra(),
    )  # fmt: skip
    return Ready(status=304, headers=headers)


def coding_for(request: web.Request) -> str:
    """The content coding to answer in: the best of `CODINGS` that Accept-Encoding takes
    ("" for none). Read once per distinct header."""
    header = request.headers.get(hdrs.ACCEPT_ENCODING, "")
    found = _CODING_OF.get(header)
    if found is None:
        found = _negotiate(header)
        if len(_CODING_OF) < 1000:  # a hostile client cannot grow it without end
            _CODING_OF[header] = found
    return found


_CODING_OF: dict[str, str] = {}


def _negotiate(header: str) -> str:
    """RFC 9110 12.5.3: codings with their weights (q=0 refuses one; `*` stands for the
    others); the best weight wins, `CODINGS`' order breaking ties."""
    weights: dict[str, float] = {}
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        weight = 1.0
        key, _, value = params.strip().partition("=")
        if key.strip().lower() == "q":
            try:
                weight = float(value)
            except ValueError:
                weight = 0.0
        if name.strip():
            weights[name.strip().lower()] = weight
    best, best_weight = "", 0.0
    for coding in CODINGS:
        weight = weights.get(coding, weights.get("*", 0.0))
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def _not_modified(request: web.Request, etag: str, modified: datetime) -> bool:
    """RFC 9110 13.2.2: If-None-Match decides when present; else If-Modified-Since."""
    if request.method not in ("GET", "HEAD"):
        return False
    none_match = request.headers.get(hdrs.IF_NONE_MATCH)
    if none_match is not None:
        return _etag_matches(none_match, etag)
    since = request.headers.get(hdrs.IF_MODIFIED_SINCE)
    if since:
        try:
            moment = parsedate_to_datetime(since)
        except (TypeError, ValueError, IndexError):
            return False
        return moment.tzinfo is not None and modified <= moment
    return False


def _etag_matches(header: str, etag: str) -> bool:
    # Weak comparison (RFC 9110 8.8.3.2), as If-None-Match asks.
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


def stale_response(request: web.Request, slot: Hashable) -> web.Response:
    """The last good render of `slot`, marked as possibly out of date; 503 if there is none."""
    state = state_of(request)
    entry = state.cache.last(slot)
    if entry is None:
        return unavailable(request)
    body = entry.body
    if entry.language and STALE_MARKER in body:
        when = i18n.format_datetime(entry.confirmed.astimezone(state.zone), entry.language)
        notice = (
            f'<p class="stale" role="status">{say(entry.language, "stale", when=when)}</p>'
        ).encode()
        body = body.replace(STALE_MARKER, notice, 1)
    response = conditional(request, body, entry, 5, make_etag(body))
    response.headers["Strikebot-Stale"] = "1"  # JSON and feeds carry the mark here
    response.headers["Cache-Control"] = "public, max-age=5, stale-if-error=86400"
    return response


def unavailable(request: web.Request) -> web.Response:
    """Nothing rendered yet and the store is not answering: 503, in the reader's words."""
    state = state_of(request)
    lang = language_of_path(request.path, state.ctx.campaign)
    headers = {"Retry-After": "30", "Cache-Control": "no-store"}
    if request.path.startswith("/api/"):
        return json_error(503, "unavailable", say(lang, "unavailable"), headers=headers)
    if request.path.endswith((".atom", ".ics")):
        return web.Response(status=503, text=say(lang, "unavailable"), headers=headers)
    return message_page(request, 503, "unavailable_title", "unavailable", headers=headers)


def message_page(
    request: web.Request,
    status: int,
    title_key: str,
    text_key: str,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """A short page (not found, unavailable) in the language of the address; no store read."""
    state = state_of(request)
    out = message_rendered(
        state.templates,
        state.ctx.campaign,
        state.status_css,
        request.path,
        status,
        title_key,
        text_key,
    )
    return web.Response(
        body=out.body, status=status, headers={"Content-Type": HTML, **(headers or {})}
    )


def not_found_page(request: web.Request) -> web.Response:
    return message_page(request, 404, "not_found_title", "not_found")


# -- the middleware -----------------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def surface(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The web surface's one middleware (every layer costs each request), outermost first:
    counts requests, adds the security headers, answers errors (JSON under /api/, a page
    elsewhere; every message says what to do) and keeps the admin API behind its token."""
    status = 500
    path = request.path
    try:
        response: web.StreamResponse | None
        if not (_plain(path) and _plain(request.query_string)):
            # Refused before any handler runs: such text would reach the store as a key.
            response = json_error(
                400,
                "bad_request",
                "The address holds a NUL character (%00) or text that is not UTF-8. Remove "
                "it and try again.",
            )
        else:
            try:
                response = admin_refusal(request) if is_admin_path(path) else None
                if response is None:
                    response = await handler(request)
            except Exception as exc:  # each kind is answered, or raised again, below
                response = error_response(request, exc)
        if type(response) is not Ready:  # a Ready response holds them already
            secure(path, response, state_of(request).csp_extra())
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        count(request, status)


def _plain(text: str) -> bool:
    return (text.isascii() and "\x00" not in text) or storable(text)


def count(request: web.Request, status: int) -> None:
    """strikebot_http_requests_total{route, status}: routes by template, never raw paths."""
    state = state_of(request)
    info = request.match_info
    route = info.route if info.http_exception is None else None
    labels = state.counters.get((route, status))
    if labels is None:
        name = "unmatched"
        if route is not None and route.resource is not None:
            name = route.resource.canonical
        labels = state.counters[route, status] = (name, str(status))
    state.ctx.metrics.http_requests.inc(*labels)


_ERROR_STATUS: list[tuple[type[StrikebotError], int, str]] = [
    (NotFound, 404, "not_found"),
    (NotAllowed, 403, "not_allowed"),
    (Conflict, 409, "conflict"),
    (InvalidInput, 422, "invalid"),
    (StoreUnavailable, 503, "store_unavailable"),
]


def storable(text: str) -> bool:
    """False for text no database takes: a NUL (PostgreSQL refuses it in text) or a lone
    surrogate (not UTF-8)."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def error_response(request: web.Request, exc: Exception) -> web.StreamResponse:
    """The answer to `exc` raised by a handler; HTTP exceptions meant as answers (redirects,
    a page's 405) are raised again for aiohttp to send."""
    api = request.path.startswith("/api/")
    if isinstance(exc, web.HTTPNotFound):
        if api:
            return json_error(
                404,
                "not_found",
                f"Nothing at {request.path}. See /api/v1/openapi.json for the API's addresses.",
            )
        return not_found_page(request)
    if isinstance(exc, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(exc.allowed_methods))
        if api:
            return json_error(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed on {request.path}; use {allowed}.",
                headers={"Allow": allowed},
            )
        raise exc
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        limit = MAX_BODY // 1024
        return json_error(
            413,
            "too_large",
            f"The body is larger than the {limit} KB this server takes. Send a shorter one.",
        )
    if isinstance(exc, web.HTTPException):
        if api and exc.status >= 400:
            code = (exc.reason or "error").lower().replace(" ", "_")
            return json_error(exc.status, code, f"{exc.reason}: {exc.text or ''}".strip(": "))
        raise exc
    if isinstance(exc, BadRequest):
        return json_error(exc.status, exc.code, exc.message, exc.details)
    if isinstance(exc, StrikebotError):
        for kind, status, code in _ERROR_STATUS:
            if isinstance(exc, kind):
                return json_error(status, code, exc.message)
        return json_error(400, "refused", exc.message)
    log.exception("%s %s failed", request.method, request.path, exc_info=exc)
    message = (
        "Something went wrong on the server and it has been logged. Try again in a "
        "minute, and tell the site's operator if it keeps happening."
    )
    if api:
        return json_error(500, "internal", message)
    return web.Response(status=500, text=message, content_type="text/plain")


def security_headers(path: str, content_type: str | None, csp_extra: str = "") -> dict[str, str]:
    """The headers every answer carries (those it does not set itself); `csp_extra` adds
    sources to the pages' policy (the "Notify me" button's script)."""
    headers = {}
    if is_public_data(path):
        # Other sites (a union website, a news desk's tools) may read the public data.
        headers["Access-Control-Allow-Origin"] = "*"
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
    if content_type == "text/html":
        headers["Content-Security-Policy"] = f"{CSP}; {csp_extra}" if csp_extra else CSP
    return headers


def secure(path: str, response: web.StreamResponse, csp_extra: str = "") -> None:
    for name, value in security_headers(path, response.content_type, csp_extra).items():
        response.headers.setdefault(name, value)


def is_public_data(path: str) -> bool:
    """The read-only JSON API and the feeds (not the admin API)."""
    if path.startswith("/api/v1/"):
        return not is_admin_path(path)
    return path.endswith(("/feed.atom", "/calendar.ics")) or path == "/healthz"


def is_admin_path(path: str) -> bool:
    return path.startswith(ADMIN_PREFIX) and (path == ADMIN_PREFIX or path.startswith(ADMIN_DIR))


def admin_refusal(request: web.Request) -> web.Response | None:
    """Every /api/v1/admin/ path, existing or not, needs the bearer token before anything:
    the refusal when it is missing or wrong, else None."""
    secret = state_of(request).settings.admin_token
    token = secret.get_secret_value() if secret is not None else ""
    if not token:
        return json_error(
            403,
            "admin_api_disabled",
            "The admin API is off because STRIKEBOT_ADMIN_TOKEN is not set. Set it to a long "
            "random value (e.g. `openssl rand -hex 32`) and restart strikebot.",
        )
    state = state_of(request)
    client = state.ctx.clients.address(request.remote, request.headers.get("X-Forwarded-For"))
    now = asyncio.get_running_loop().time()
    wait = state.admin_attempts.waiting(client, now)
    if wait:
        state.ctx.metrics.http_refused.inc("admin_limited")
        return json_error(
            429,
            "too_many_attempts",
            f"Too many wrong admin tokens from your address. Wait {wait / 60:.0f} min and "
            "send the right one (`Authorization: Bearer <STRIKEBOT_ADMIN_TOKEN>`).",
            headers={"Retry-After": f"{wait:.0f}"},
        )
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        if hdrs.AUTHORIZATION in request.headers:  # a guess (no header at all is not one)
            state.admin_attempts.failed(client, now, state.ctx.metrics)
        return json_error(
            401,
            "unauthorized",
            "Send the admin token as `Authorization: Bearer <STRIKEBOT_ADMIN_TOKEN>`.",
            headers={"WWW-Authenticate": 'Bearer realm="strikebot admin"'},
        )
    return None
