"""Who is at the web desk, and the checks every desk request passes.

- `[admins.web]` lists the people (`emails = [...]`): `WebAdmins` (`_settings`), this plugin's
  admin rule.
- Signing in and out: `_desk_sign_in`.
- The session is a random token in a `__Host-` cookie: `HttpOnly; Secure; SameSite=Strict;
  Path=/` (Strict: the desk is entered through its own pages, and no other site's link or
  form carries the cookie). The store keeps only its SHA-256.
- Every request looks the session up and checks the rule again, so someone removed from
  the campaign file has no access the moment the bot runs with the new file.
- Every POST carries a CSRF token tied to the cookie's token (the sign-in forms', to a
  cookie of their own) and must come from this site (`Origin`, else `Referer`).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from bot.ports import (
    Actor,
    Conflict,
    DeskSession,
    InvalidInput,
    NotAllowed,
    NotFound,
    PluginContext,
    SignIn,
    StrikebotError,
    i18n,
)

from ._app import state_of
from ._shell import HTML

COOKIE = "__Host-strikebot-desk"
PRE_COOKIE = "__Host-strikebot-desk-pre"  # the sign-in forms' CSRF secret, before a session
LANG_COOKIE = "__Host-strikebot-desk-lang"
CSRF_FIELD = "csrf"
FIELD_MAX = 10_000  # longer form values are cut before anything reads them
CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
WORDS = i18n.Words("desk_web")

Form = MultiDictProxy[str]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
DeskHandler = Callable[[web.Request, "Person", Form], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class Person:
    """Someone signed in: who they are to the rules and the audit log, their session, the
    token their forms carry, and the language the desk speaks to them."""

    actor: Actor
    session: DeskSession
    csrf: str
    lang: str

    @property
    def address(self) -> str:
        return self.session.person


@dataclass(slots=True)
class WebDesk:
    """The desk's part of the web plugin: its context and the door (one per process)."""

    ctx: PluginContext
    door: SignIn


DESK = web.AppKey("strikebot_desk", WebDesk)


def desk_of(request: web.Request) -> WebDesk:
    return request.app[DESK]


# -- language, tokens, answers ------------------------------------------------------------


def language(request: web.Request) -> str:
    """`?lang=` when the campaign speaks it, else the desk's cookie, else the browser's
    first language the campaign speaks, else the campaign's first."""
    campaign = desk_of(request).ctx.campaign
    for asked in (request.query.get("lang"), request.cookies.get(LANG_COOKIE)):
        if asked in campaign.languages:
            return str(asked)
    for part in request.headers.get("Accept-Language", "").split(","):
        code = part.split(";")[0].strip().lower().split("-")[0]
        if code in campaign.languages:
            return code
    return campaign.default_language


def csrf_token(secret: str) -> str:
    return hmac.new(secret.encode(), b"strikebot desk form", hashlib.sha256).hexdigest()


def words(lang: str) -> Mapping[str, str]:
    return WORDS[lang]


E = TypeVar("E", bound=StrikebotError)


def desk_error(kind: type[E], sentence: str, /, **values: object) -> E:
    """The error `kind` saying the desk's `sentence` (its key), in every language."""
    texts = {lang: WORDS[lang][sentence].format(**values) for lang in i18n.languages()}
    source = i18n.source_language()
    others = {lang: text for lang, text in texts.items() if lang != source}
    return kind(texts[source], translations=others)


def render(
    request: web.Request,
    template: str,
    context: dict[str, Any],
    *,
    status: int = 200,
) -> web.Response:
    """A desk page: never cached, never framed, sends no Referer to other sites (a link's
    token stays here), its own script and style only."""
    lang = context["lang"]
    campaign = desk_of(request).ctx.campaign
    context.setdefault("w", words(lang))
    context.setdefault("campaign", campaign)
    context.setdefault("person", None)
    context.setdefault("csrf", "")
    context["languages"] = [
        {"code": code, "name": i18n.language_name(code, code)} for code in campaign.languages
    ]
    body = state_of(request).templates.get_template(f"desk/{template}").render(context)
    response = web.Response(
        body=body.encode(),
        status=status,
        headers={
            "Content-Type": HTML,
            "Content-Security-Policy": CSP,
            "Cache-Control": "no-store",
            # Not "no-referrer": a form posted under it says `Origin: null`.
            "Referrer-Policy": "same-origin",
            "X-Frame-Options": "DENY",
            "X-Robots-Tag": "noindex",
        },
    )
    if request.query.get("lang") == lang:
        set_cookie(response, LANG_COOKIE, lang, max_age=365 * 86400)
    return response


def message(
    request: web.Request,
    lang: str,
    heading: str,
    lines: list[str],
    *,
    status: int = 200,
    person: Person | None = None,
    link: tuple[str, str] | None = None,
) -> web.Response:
    context: dict[str, Any] = {"lang": lang, "heading": heading, "lines": lines, "link": link}
    if person is not None:
        context |= {"person": person, "csrf": person.csrf}
    return render(request, "message.html", context, status=status)


def see_other(location: str) -> web.Response:
    """303 to `location`: after a form, the browser GETs the page that shows the result."""
    return web.Response(status=303, headers={"Location": location, "Cache-Control": "no-store"})


def set_cookie(
    response: web.StreamResponse, name: str, value: str, *, max_age: int, http_only: bool = True
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        secure=True,
        httponly=http_only,
        samesite="Strict",
    )


def clear_cookie(response: web.StreamResponse, name: str) -> None:
    response.del_cookie(name, path="/", secure=True, httponly=True, samesite="Strict")


# -- the checks ---------------------------------------------------------------------------


def from_this_site(request: web.Request) -> bool:
    """The request comes from one of the desk's own pages: its `Origin` (or, without one,
    its `Referer`) is this site, as the browser reached it or as `public_url` names it."""
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        referer = request.headers.get("Referer", "")
        parts = urlsplit(referer)
        origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""
    if not origin:
        return False
    public = urlsplit(desk_of(request).ctx.campaign.public_url)
    return origin == f"{public.scheme}://{public.netloc}" or urlsplit(origin).netloc == request.host


def _refused(request: web.Request, lang: str, key: str) -> web.Response:
    w = words(lang)
    again = (w["sign_in_again"], "/desk/sign-in")
    return message(request, lang, w["refused_title"], [w[key]], status=403, link=again)


async def read_form(request: web.Request) -> Form:
    if request.method != "POST":
        return MultiDictProxy(MultiDict())
    raw = await request.post()
    return MultiDictProxy(MultiDict((k, str(v)[:FIELD_MAX]) for k, v in raw.items()))


def checked(request: web.Request, form: Form, secret: str, lang: str) -> web.Response | None:
    """The refusal of a POST from elsewhere or without its form's token, else None."""
    if not from_this_site(request):
        return _refused(request, lang, "refused_origin")
    given = form.get(CSRF_FIELD, "")
    if not secret or not hmac.compare_digest(given.encode(), csrf_token(secret).encode()):
        return _refused(request, lang, "refused_csrf")
    return None


async def signed_in(request: web.Request, *, touch: bool = True) -> Person | None:
    """The person whose session the cookie holds, if it is open and the campaign file still
    lists them."""
    desk = desk_of(request)
    token = request.cookies.get(COOKIE, "")
    if not token:
        return None
    session = await desk.door.who(token, touch=touch)
    if session is None:
        return None
    actor = desk.door.actor(session.person)
    if not desk.ctx.admins.allows(actor):
        return None
    return Person(actor, session, csrf_token(token), language(request))


_STATUS: tuple[tuple[type[StrikebotError], int], ...] = (
    (NotFound, 404),
    (NotAllowed, 403),
    (Conflict, 409),
    (InvalidInput, 422),
)


def guarded(handler: DeskHandler, *, touch: bool = True) -> Handler:
    """A desk page or action for signed-in people only: a GET without a session goes to
    the sign-in page; a POST must come from this site with its form's token. A refusal by
    the core is a page saying what to do, in the person's language."""

    async def handle(request: web.Request) -> web.StreamResponse:
        lang = language(request)
        person = await signed_in(request, touch=touch)
        if person is None:
            if request.method == "GET":
                return see_other(f"/desk/sign-in?lang={lang}")
            return _refused(request, lang, "refused_session")
        form = await read_form(request)
        if request.method == "POST":
            refusal = checked(request, form, request.cookies.get(COOKIE, ""), lang)
            if refusal is not None:
                return refusal
        try:
            return await handler(request, person, form)
        except StrikebotError as exc:
            status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 400)
            w = words(person.lang)
            return message(
                request, person.lang, w["error_title"], [exc.localized(person.lang)],
                status=status, person=person, link=(w["back_home"], "/desk"),
            )  # fmt: skip

    return handle
