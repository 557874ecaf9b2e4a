"""Sign-up pages: `/subscribe` and `/es/subscribe` (a form, no JavaScript), and the page
behind a confirmation link, `/subscribe/confirm/{token}`, whose button confirms.

Everything about sign-ups (checking the address, the limits, the consent record, sending
the confirmation) is the core's `SignUps` (`ctx.people`); these handlers only translate a
form into its calls and its answers into pages. The answer to a sign-up is the same, and
as quick, whether the address was new, known or over its limit: no one learns who signed
up. Opening a confirmation link confirms nothing (mail scanners open links); its button's
POST does.

Texts: the form takes no number. Asking for texts shows a short code to text with JOIN
from the phone (`SignUps.join_code`); the reply to that text is the confirmation. No text
goes to a number that has not written first.

Every form carries a token bound to a cookie (`bot.ports.FormTokens`), and a POST whose
`Origin` (or `Referer`) is another site's is refused: another site cannot make its
visitors sign strangers up. Who is asking (for the limits) is `ctx.clients`: the peer, or
behind a trusted proxy the address it saw.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bot.ports import (
    Campaign,
    Choice,
    Contact,
    InvalidInput,
    NotFound,
    PluginContext,
    TooManySignups,
    choice_text,
    i18n,
)

from ._app import state_of
from ._present import page_prefix
from ._shell import HTML, base_context

log = logging.getLogger("strikebot.web")

FIELD_MAX = 2_000  # longer form values are cut before anything reads them
SITE_FIELDS = 3  # empty school fields on the sign-up form
SITE_FIELDS_MOST = 60  # values of the school fields read from one form
COOKIE = "strikebot_form"  # the browser's form cookie (see FormTokens)
TOKEN_FIELD = "form_token"  # noqa: S105 (the hidden field's name, not a secret)
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)

WORDS = i18n.Words("web.subscribe")


def add_routes(app: web.Application, campaign: Campaign) -> None:
    for lang in campaign.languages:
        prefix = page_prefix(lang, campaign)
        app.router.add_get(f"{prefix}/subscribe", _form_handler(lang))
        app.router.add_post(f"{prefix}/subscribe", _submit_handler(lang))
        app.router.add_get(f"{prefix}/subscribe/confirm/{{token}}", _confirm_page_handler(lang))
        app.router.add_post(f"{prefix}/subscribe/confirm/{{token}}", _confirm_handler(lang))


def link_label(ctx: PluginContext) -> Any:
    """For templates: the status page's sign-up link in `lang`, or "" when neither e-mail
    nor texts are switched on."""

    def label(lang: str) -> str:
        return WORDS[lang]["link"] if ctx.signups is not None and ctx.people.offered else ""

    return label


# -- handlers -----------------------------------------------------------------------------


def _form_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        return await _form(request, lang, {})

    return handle


def _submit_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        form = await request.post()
        if not await same_form(request, form):
            return await _refused(request, lang)
        values: dict[str, Any] = {
            k: str(form.get(k, ""))[:FIELD_MAX] for k in ("email", "texts", "receive", "language")
        }
        # The schools named (several fields, or ticked ones kept from a page shown again).
        sites = [str(v)[:FIELD_MAX] for v in form.getall("site", [])][:SITE_FIELDS_MOST]
        values["sites"] = [" ".join(v.split()) for v in sites if v.strip()]
        if not values["receive"]:
            values["receive"] = str(form.get("choice", ""))[:FIELD_MAX]
        # A page from before texts began with a text (it sent a number): texts, no number.
        texts = bool(values["texts"].strip() or str(form.get("phone", "")).strip())
        wanted = {Contact.EMAIL: bool(values["email"].strip()), Contact.PHONE: texts}
        asked = [c for c in ctx.people.offered if wanted[c]]
        if not asked:
            field = "email" if Contact.EMAIL in ctx.people.offered else "texts"
            return await _form(request, lang, values, WORDS[lang]["missing"], field, status=422)
        client = ctx.clients.address(request.remote, request.headers.get("X-Forwarded-For"))
        via = f"web {request.path}"[:64]
        language = values["language"] or lang
        code = ""
        try:
            if Contact.EMAIL in asked:
                try:
                    ctx.people.ask(
                        Contact.EMAIL,
                        values["email"],
                        language=language,
                        choice=values["receive"],
                        client=client,
                        via=via,
                        site=values["sites"],  # the schools to follow, if named
                    )
                except InvalidInput as exc:
                    return await _form(request, lang, values, exc.localized(lang), "email", 422)
            if Contact.PHONE in asked:
                code = await ctx.people.join_code(
                    language=language,
                    choice=values["receive"],
                    client=client,
                    site=values["sites"],
                )
        except InvalidInput as exc:
            return await _form(request, lang, values, exc.localized(lang), "", status=422)
        except TooManySignups as exc:
            w = WORDS[lang]
            ctx.metrics.http_refused.inc("signup_limit")
            return await _message(
                request, lang, w["too_many_title"], [exc.localized(lang)], status=429
            )
        w = WORDS[lang]
        lines = []
        if Contact.EMAIL in asked:
            lines.append(w["sent_email"].format(what=w["this_address"]))
        if code:
            number = ctx.people.offers[Contact.PHONE].number
            lines.append(w["sent_phone"].format(code=code, number=number or w["our_number"]))
        if Contact.EMAIL in asked:
            lines.append(w["sent_note"])
        title = w["sent_title"] if Contact.EMAIL in asked else w["text_title"]
        return await _message(request, lang, title, lines)

    return handle


def _confirm_page_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        w = WORDS[lang]
        pending = await ctx.people.pending(request.match_info["token"])
        if pending is None:
            return await _expired(request, lang)
        line = w["confirm_what"].format(
            choice=choice_text(pending.choice, lang),
            how=w[str(pending.contact)],
            language=i18n.language_name(pending.language, lang),
        )
        return await _message(
            request, lang, w["confirm_title"], [line], confirm_button=w["confirm_button"]
        )

    return handle


def _confirm_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        w = WORDS[lang]
        token = request.match_info["token"]
        if await ctx.people.pending(token) is None:
            return await _expired(request, lang)
        if not await same_form(request, await request.post()):
            return await _refused(request, lang)
        try:
            done = await ctx.people.confirm(token, via="web button")
        except NotFound:
            return await _expired(request, lang)
        line = w["confirmed_what"].format(
            choice=choice_text(done.choice, lang),
            how=w[str(done.contact)],
            language=i18n.language_name(done.language, lang),
        )
        settings = await ctx.preferences.url(done.key, done.language) if done.key else ""
        link = (settings, w["confirmed_settings"]) if settings else None
        lines = [line, w["confirmed_stop"]]
        return await _message(request, lang, w["confirmed_title"], lines, link=link)

    return handle


# -- the forms' tokens --------------------------------------------------------------------


async def same_form(request: web.Request, form: Mapping[str, object]) -> bool:
    """Whether this POST came from a form this site served to this browser: its token
    matches the browser's cookie, and its Origin (or, without one, its Referer) is this
    site's. A refusal is counted (strikebot_http_refused_total{reason="form_token"})."""
    ctx = state_of(request).ctx
    token = form.get(TOKEN_FIELD)
    ok = _same_site(request) and await ctx.people.forms.check(
        request.cookies.get(COOKIE), token if isinstance(token, str) else None
    )
    if not ok:
        ctx.metrics.http_refused.inc("form_token")
    return ok


def _same_site(request: web.Request) -> bool:
    """No Origin and no Referer (a privacy setting may drop both): the token decides alone."""
    public = urlsplit(state_of(request).ctx.campaign.public_url)
    ours = {f"{public.scheme}://{public.netloc}".lower(), f"{request.scheme}://{request.host}"}
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin.lower().rstrip("/") in ours
    referer = request.headers.get("Referer")
    if referer:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}".lower() in ours
    return True


async def _token_for(request: web.Request) -> tuple[str, str | None]:
    """The form token for this browser, and the cookie to set when it had none."""
    cookie = request.cookies.get(COOKIE)
    fresh = None
    if not cookie or len(cookie) > 64:
        cookie = fresh = state_of(request).ctx.people.forms.new_cookie()
    return await state_of(request).ctx.people.forms.token(cookie), fresh


async def _refused(request: web.Request, lang: str) -> web.Response:
    w = WORDS[lang]
    return await _message(
        request, lang, w["refused_title"], [w["refused"]], again=w["again"], status=403
    )


# -- pages --------------------------------------------------------------------------------


def _context(request: web.Request, lang: str, suffix: str, title: str) -> dict[str, Any]:
    state = state_of(request)
    campaign = state.ctx.campaign
    context = base_context(campaign, lang, suffix, state.status_css)
    context["title"] = f"{title} — {campaign.union}"
    return context


async def _form(
    request: web.Request,
    lang: str,
    values: dict[str, Any],
    error: str = "",
    error_field: str = "",
    status: int = 200,
) -> web.Response:
    state = state_of(request)
    ctx = state.ctx
    w = WORDS[lang]
    union = ctx.campaign.union
    hours = int(ctx.people.limits.confirm_within.total_seconds() // 3600)
    words = {k: v.format_map(_Fill(union=union, hours=hours)) for k, v in w.items()}
    context = _context(request, lang, "/subscribe", w["heading"])
    context["title"] = w["title"].format(union=union)
    context.update(
        w=words,
        error=error,
        error_field=error_field,
        offered=[str(c) for c in ctx.people.offered],
        values={
            "email": values.get("email", ""),
            "texts": values.get("texts", ""),
            "receive": values.get("receive") or str(Choice.URGENT),
            "language": values.get("language") or lang,
        },
        picker=await picker(ctx, lang, values.get("sites", []), SITE_FIELDS, "subscribe"),
        choices=[
            {"value": str(c), "label": _capital(choice_text(c, lang, state.ctx.campaign))}
            for c in Choice
        ],
        languages=[
            {"value": code, "label": i18n.language_name(code)} for code in ctx.campaign.languages
        ],
    )
    return await _render(request, "subscribe.html", context, status)


async def _message(
    request: web.Request,
    lang: str,
    heading: str,
    lines: list[str],
    *,
    confirm_button: str = "",
    again: str = "",
    link: tuple[str, str] | None = None,
    status: int = 200,
) -> web.Response:
    context = {
        "heading": heading,
        "lines": lines,
        "confirm_button": confirm_button,
        "again": again,
        "link": link,
    }
    return await render_page(
        request, lang, "signup_message.html", context, heading=heading, status=status
    )


async def render_page(
    request: web.Request,
    lang: str,
    template: str,
    values: dict[str, Any],
    *,
    heading: str,
    status: int = 200,
) -> web.Response:
    """A page of the people's forms (`template` with `values`), in `lang`, its links to the
    other languages going to the same address, with this browser's form token."""
    suffix = request.path.removeprefix(page_prefix(lang, state_of(request).ctx.campaign))
    context = _context(request, lang, suffix or "/subscribe", heading)
    context.update(heading=heading, confirm_button="", action=request.path, again="")
    context.update(values)
    return await _render(request, template, context, status)


async def picker(
    ctx: PluginContext, lang: str, picked: list[str], empty: int, table: str
) -> dict[str, Any]:
    """What the school picker (`_picker.html`) shows: the schools chosen so far (ticked
    boxes), `empty` fields to add more, and the list those fields search as one types
    (every site's and group's name: a `<datalist>`, no script needed)."""
    groups, sites = await ctx.sites.all()
    return {
        "picked": picked,
        "empty": empty,
        "names": [g.name(lang) for g in groups] + [s.name(lang) for s in sites],
        "w": i18n.Words(f"web.{table}")[lang],
    }


async def _expired(request: web.Request, lang: str) -> web.Response:
    w = WORDS[lang]
    text = w["expired_link"]
    return await _message(request, lang, w["expired_title"], [text], again=w["again"], status=404)


async def _render(
    request: web.Request, template: str, context: dict[str, Any], status: int
) -> web.Response:
    token, fresh = await _token_for(request)
    context["form_token"] = token
    body = state_of(request).templates.get_template(template).render(context)
    response = web.Response(
        body=body.encode(),
        status=status,
        headers={
            "Content-Type": HTML,
            "Content-Security-Policy": CSP,
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Robots-Tag": "noindex",
        },
    )
    if fresh is not None:
        response.set_cookie(
            COOKIE, fresh, httponly=True, samesite="Lax", secure=request.secure, path="/"
        )
    return response


class _Fill(dict[str, object]):
    """Fills the placeholders it knows and leaves the others as they were."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["FIELD_MAX", "WORDS", "add_routes", "link_label", "picker", "render_page", "same_form"]
