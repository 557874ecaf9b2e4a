"""The aiohttp application: routes, middlewares and the state every handler shares."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from pydantic import BaseModel, Field, SecretStr

from bot.ports import (
    Conflict,
    Fingerprint,
    InvalidInput,
    NotAllowed,
    NotFound,
    PluginContext,
    PluginSettings,
    StoreUnavailable,
    StrikebotError,
)

from ._cache import Rendered, ResponseCache, SharedCheck
from ._present import chip_css, paragraphs_of

log = logging.getLogger("strikebot.web")

TEMPLATES = Path(__file__).parent / "templates"
ADMIN_PREFIX = "/api/v1/admin"
JSON = "application/json"
HTML = "text/html; charset=utf-8"
MAX_BODY = 256 * 1024  # bytes of request body the server reads at most (413 beyond)
PAGE_MAX_AGE = 30  # seconds a browser or CDN may reuse a public page or feed
# No scripts, no frames, nothing fetched from elsewhere: the pages need none of it.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class WebSettings(PluginSettings):
    """The web plugin's environment: the admin API's bearer token (off when unset)."""

    admin_token: SecretStr | None = Field(default=None, alias="STRIKEBOT_ADMIN_TOKEN")
    # Proxies in front of the bot that append to X-Forwarded-For (0: people connect directly).
    # The sign-up form's per-client cap counts the address the outermost one saw.
    proxy_hops: int = Field(default=0, ge=0, le=10, alias="STRIKEBOT_PROXY_HOPS")


@dataclass(slots=True)
class WebState:
    ctx: PluginContext
    settings: WebSettings
    templates: jinja2.Environment
    cache: ResponseCache = field(default_factory=ResponseCache)
    check: SharedCheck[Fingerprint] | None = None
    status_css: str = field(default_factory=chip_css)
    openapi: bytes = b""

    def __post_init__(self) -> None:
        store, clock = self.ctx.store, self.ctx.clock

        async def fingerprint() -> Fingerprint:
            async with store.read() as tx:
                return await tx.public_fingerprint(clock())

        self.check = SharedCheck(fingerprint)

    async def freshness(self) -> tuple[Hashable, datetime]:
        """(cache key, now): the store's fingerprint and the current minute."""
        assert self.check is not None
        fp = await self.check.get()
        now = self.ctx.clock()
        return (fp, now.replace(second=0, microsecond=0)), now


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


class BadRequest(Exception):
    """A request the API refuses before any use case runs (bad JSON, bad fields)."""

    def __init__(
        self, status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


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
    from ._schemas import ErrorBody, ErrorOut

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
) -> web.Response:
    """Serve `render(now)`'s output from the cache while the store and minute are unchanged.

    `pinned`: one of the few hot slots that must never be evicted (see ResponseCache)."""
    state = state_of(request)
    try:
        key, now = await state.freshness()
        entry = await state.cache.get(slot, key, lambda: render(now), pinned=pinned)
    except Exception:
        # The store is failing: people still get the last page rendered, if there is one.
        stale = state.cache.last(slot)
        if stale is None:
            raise
        log.warning("serving a stale %s: the store failed", request.path, exc_info=True)
        entry = stale
    headers = {"ETag": entry.etag, "Cache-Control": f"public, max-age={max_age}"}
    if entry.status == 200 and _etag_matches(request.headers.get("If-None-Match"), entry.etag):
        return web.Response(status=304, headers=headers)
    return web.Response(
        body=entry.body,
        status=entry.status,
        headers={"Content-Type": entry.content_type, **headers},
    )


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = {t.strip().removeprefix("W/") for t in header.split(",")}
    return "*" in tags or etag in tags


# -- middlewares -----------------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    """strikebot_http_requests_total{route, status}: routes by template, never raw paths."""
    state = state_of(request)
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        route = "unmatched"
        info = request.match_info
        if info.http_exception is None and info.route.resource is not None:
            route = info.route.resource.canonical
        state.ctx.metrics.http_requests.labels(route=route, status=str(status)).inc()


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


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Errors as JSON under /api/, as a page elsewhere; every message says what to do."""
    api = request.path.startswith("/api/")
    if not storable(request.path) or not storable(request.query_string):
        # Refused before any handler runs: such text would reach the store as a key.
        return json_error(
            400,
            "bad_request",
            "The address holds a NUL character (%00) or text that is not UTF-8. Remove it "
            "and try again.",
        )
    try:
        return await handler(request)
    except web.HTTPNotFound:
        if api:
            return json_error(
                404,
                "not_found",
                f"Nothing at {request.path}. See /api/v1/openapi.json for the API's addresses.",
            )
        from ._pages import not_found_page

        return not_found_page(request)
    except web.HTTPMethodNotAllowed as exc:
        allowed = ", ".join(sorted(exc.allowed_methods))
        if api:
            return json_error(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed on {request.path}; use {allowed}.",
                headers={"Allow": allowed},
            )
        raise
    except web.HTTPRequestEntityTooLarge:
        limit = MAX_BODY // 1024
        return json_error(
            413,
            "too_large",
            f"The body is larger than the {limit} KB this server takes. Send a shorter one.",
        )
    except web.HTTPException as exc:
        if api and exc.status >= 400:
            code = (exc.reason or "error").lower().replace(" ", "_")
            return json_error(exc.status, code, f"{exc.reason}: {exc.text or ''}".strip(": "))
        raise
    except BadRequest as exc:
        return json_error(exc.status, exc.code, exc.message, exc.details)
    except StrikebotError as exc:
        for kind, status, code in _ERROR_STATUS:
            if isinstance(exc, kind):
                return json_error(status, code, exc.message)
        return json_error(400, "refused", exc.message)
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        message = (
            "Something went wrong on the server and it has been logged. Try again in a "
            "minute, and tell the site's operator if it keeps happening."
        )
        if api:
            return json_error(500, "internal", message)
        return web.Response(status=500, text=message, content_type="text/plain")


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    if is_public_data(request.path):
        # Other sites (a union website, a news desk's tools) may read the public data.
        response.headers.setdefault("Access-Control-Allow-Origin", "*")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "strict-origin-when-cross-origin")
    if response.content_type == "text/html":
        response.headers.setdefault("Content-Security-Policy", CSP)
    return response


def is_public_data(path: str) -> bool:
    """The read-only JSON API and the feeds (not the admin API)."""
    if path.startswith("/api/v1/"):
        return not is_admin_path(path)
    return path.endswith(("/feed.atom", "/calendar.ics")) or path == "/healthz"


def is_admin_path(path: str) -> bool:
    return path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")


@web.middleware
async def admin_auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every /api/v1/admin/ path, existing or not, needs the bearer token before anything."""
    if not is_admin_path(request.path):
        return await handler(request)
    secret = state_of(request).settings.admin_token
    token = secret.get_secret_value() if secret is not None else ""
    if not token:
        return json_error(
            403,
            "admin_api_disabled",
            "The admin API is off because STRIKEBOT_ADMIN_TOKEN is not set. Set it to a long "
            "random value (e.g. `openssl rand -hex 32`) and restart strikebot.",
        )
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        return json_error(
            401,
            "unauthorized",
            "Send the admin token as `Authorization: Bearer <STRIKEBOT_ADMIN_TOKEN>`.",
            headers={"WWW-Authenticate": 'Bearer realm="strikebot admin"'},
        )
    return await handler(request)
