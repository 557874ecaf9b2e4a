"""Sign-up pages: `/subscribe` and `/es/subscribe` (a form, no JavaScript), and the page
behind a confirmation link, `/subscribe/confirm/{token}`, whose button confirms.

Everything about sign-ups (checking the address, the limits, the consent record, sending
the confirmation) is the core's `SignUps` (`ctx.people`); these handlers only translate a
form into its calls and its answers into pages. The answer to a sign-up is the same
whether the address was new, known or over its limit: no one learns who signed up.
Opening a confirmation link confirms nothing (mail scanners open links); its button's
POST does.
"""

from __future__ import annotations

import logging
from typing import Any

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
        return _form(request, lang, {})

    return handle


def _submit_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        form = await request.post()
        values = {
            k: str(form.get(k, ""))[:FIELD_MAX] for k in ("email", "phone", "receive", "language")
        }
        if not values["receive"]:
            values["receive"] = str(form.get("choice", ""))[:FIELD_MAX]
        asked = [c for c in ctx.people.offered if values[str(c)].strip()]
        if not asked:
            field = str(ctx.people.offered[0]) if ctx.people.offered else ""
            return _form(request, lang, values, WORDS[lang]["missing"], field, status=422)
        client = _client(request)
        via = f"web {request.path}"[:64]
        try:
            for contact in asked:  # read both first: a typo in one sends nothing at all
                try:
                    ctx.people.read(contact, values[str(contact)])
                except InvalidInput as exc:
                    return _form(request, lang, values, exc.localized(lang), str(contact), 422)
            for contact in asked:
                await ctx.people.request(
                    contact,
                    values[str(contact)],
                    language=values["language"] or lang,
                    choice=values["receive"],
                    client=client,
                    via=via,
                )
        except InvalidInput as exc:
            return _form(request, lang, values, exc.localized(lang), "", status=422)
        except TooManySignups as exc:
            w = WORDS[lang]
            return _message(request, lang, w["too_many_title"], [exc.localized(lang)], status=429)
        w = WORDS[lang]
        lines = []
        if Contact.EMAIL in asked:
            lines.append(w["sent_email"].format(what=w["this_address"]))
        if Contact.PHONE in asked:
            lines.append(w["sent_phone"])
        lines.append(w["sent_note"])
        return _message(request, lang, w["sent_title"], lines)

    return handle


def _confirm_page_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        w = WORDS[lang]
        pending = await ctx.people.pending(request.match_info["token"])
        if pending is None:
            return _expired(request, lang)
        line = w["confirm_what"].format(
            choice=choice_text(pending.choice, lang),
            how=w[str(pending.contact)],
            language=i18n.language_name(pending.language, lang),
        )
        return _message(
            request, lang, w["confirm_title"], [line], confirm_button=w["confirm_button"]
        )

    return handle


def _confirm_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        w = WORDS[lang]
        try:
            done = await ctx.people.confirm(request.match_info["token"], via="web button")
        except NotFound:
            return _expired(request, lang)
        line = w["confirmed_what"].format(
            choice=choice_text(done.choice, lang),
            how=w[str(done.contact)],
            language=i18n.language_name(done.language, lang),
        )
        return _message(request, lang, w["confirmed_title"], [line, w["confirmed_stop"]])

    return handle


# -- pages --------------------------------------------------------------------------------


def _context(request: web.Request, lang: str, suffix: str, title: str) -> dict[str, Any]:
    state = state_of(request)
    campaign = state.ctx.campaign
    context = base_context(campaign, lang, suffix, state.status_css)
    context["title"] = f"{title} — {campaign.union}"
    return context


def _form(
    request: web.Request,
    lang: str,
    values: dict[str, str],
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
            "phone": values.get("phone", ""),
            "receive": values.get("receive") or str(Choice.URGENT),
            "language": values.get("language") or lang,
        },
        choices=[
            {"value": str(c), "label": _capital(choice_text(c, lang, state.ctx.campaign))}
            for c in Choice
        ],
        languages=[
            {"value": code, "label": i18n.language_name(code)} for code in ctx.campaign.languages
        ],
    )
    return _render(request, "subscribe.html", context, status)


def _message(
    request: web.Request,
    lang: str,
    heading: str,
    lines: list[str],
    *,
    confirm_button: str = "",
    again: str = "",
    status: int = 200,
) -> web.Response:
    context = _context(request, lang, "/subscribe", heading)
    context.update(
        heading=heading,
        lines=lines,
        confirm_button=confirm_button,
        action=request.path,
        again=again,
    )
    return _render(request, "signup_message.html", context, status)


def _expired(request: web.Request, lang: str) -> web.Response:
    w = WORDS[lang]
    text = w["expired_link"]
    return _message(request, lang, w["expired_title"], [text], again=w["again"], status=404)


def _render(
    request: web.Request, template: str, context: dict[str, Any], status: int
) -> web.Response:
    body = state_of(request).templates.get_template(template).render(context)
    return web.Response(
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


class _Fill(dict[str, object]):
    """Fills the placeholders it knows and leaves the others as they were."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _client(request: web.Request) -> str:
    """Who is asking, for the per-client cap: the peer, or with STRIKEBOT_PROXY_HOPS=N the
    address N proxies in front of us saw (the N-th from the right in X-Forwarded-For)."""
    hops = state_of(request).settings.proxy_hops
    if hops > 0:
        forwarded = [part.strip() for part in request.headers.get("X-Forwarded-For", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if len(forwarded) >= hops:
            return forwarded[-hops][:64]
    return request.remote or "unknown"


__all__ = ["WORDS", "add_routes", "link_label"]
