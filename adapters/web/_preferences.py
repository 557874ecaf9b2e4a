"""A person's preferences page, behind the signed link every e-mail (and some texts) carry:
`/p/{token}` and `/es/p/{token}`. No login, no JavaScript: what they follow (everything,
or schools and districts picked from a list typed to search), what they receive, their
language, and leaving.

The core decides everything (`ctx.preferences`, `bot.people.preferences`): whose link it
is, what a change keeps, what leaving deletes; these handlers turn forms into its calls
and its answers into pages. Each POST carries the forms' token bound to the browser's
cookie and is refused from another site's page (`Origin`), as the sign-up form is.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.ports import Choice, InvalidInput, LinkRefused, PluginContext, choice_text, i18n

from ._app import state_of
from ._present import page_prefix
from ._subscribe import FIELD_MAX, WORDS, picker, render_page, same_form

EMPTY_FIELDS = 3  # new school fields a page shows (saving shows three more)
MOST_FIELDS = 60  # values of the school fields read from one form

PAGE = i18n.Words("web.preferences")


def add_routes(app: web.Application, ctx: PluginContext) -> None:
    for lang in ctx.campaign.languages:
        prefix = page_prefix(lang, ctx.campaign)
        app.router.add_get(f"{prefix}/p/{{token}}", _page_handler(lang))
        app.router.add_post(f"{prefix}/p/{{token}}", _save_handler(lang))
        app.router.add_post(f"{prefix}/p/{{token}}/leave", _leave_handler(lang))


def _page_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        try:
            chosen = await ctx.preferences.open(request.match_info["token"])
        except LinkRefused as exc:
            return await _refused_link(request, lang, exc)
        return await _page(request, lang, _values(chosen, lang))

    return handle


def _save_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        token = request.match_info["token"]
        form = await request.post()
        if not await same_form(request, form):
            return await _refused_form(request, lang)
        values = {k: str(form.get(k, ""))[:FIELD_MAX] for k in ("receive", "language")}
        # Ticked and typed schools alike; none at all is everything.
        typed = [str(v)[:FIELD_MAX] for v in form.getall("site", [])][:MOST_FIELDS]
        try:
            chosen = await ctx.preferences.change(
                token,
                language=values["language"],
                choice=values["receive"],
                follows=typed,
                via=f"web {request.path[: request.path.rfind('/')]}/",
            )
        except LinkRefused as exc:
            return await _refused_link(request, lang, exc)
        except InvalidInput as exc:
            kept = {**values, "sites": [t for t in typed if t.strip()]}
            return await _page(request, lang, kept, error=exc.localized(lang), status=422)
        shown = i18n.pick(chosen.language)  # the page now speaks the language chosen
        return await _page(request, shown, _values(chosen, shown), saved=_saved(chosen, shown))

    return handle


def _leave_handler(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        ctx = state_of(request).ctx
        if not await same_form(request, await request.post()):
            return await _refused_form(request, lang)
        try:
            await ctx.preferences.leave(request.match_info["token"], via="web preferences page")
        except LinkRefused as exc:
            return await _refused_link(request, lang, exc)
        w = PAGE[lang]
        return await render_page(
            request,
            lang,
            "signup_message.html",
            {"heading": w["left_title"], "lines": [w["left"]], "again": WORDS[lang]["again"]},
            heading=w["left_title"],
        )

    return handle


# -- pages --------------------------------------------------------------------------------


def _values(chosen: Any, lang: str) -> dict[str, Any]:
    return {
        "sites": chosen.names(lang),
        "receive": str(chosen.choice),
        "language": chosen.language,
    }


def _saved(chosen: Any, lang: str) -> str:
    w = PAGE[lang]
    names = chosen.names(lang)
    what = i18n.format_list(names, lang) if names else w["everything"]
    return w["saved"].format(
        follows=what,
        choice=choice_text(chosen.choice, lang),
        language=i18n.language_name(chosen.language, lang),
    )


async def _page(
    request: web.Request,
    lang: str,
    values: dict[str, Any],
    *,
    error: str = "",
    saved: str = "",
    status: int = 200,
) -> web.Response:
    ctx = state_of(request).ctx
    w = PAGE[lang]
    prefix = page_prefix(lang, ctx.campaign)
    action = f"{prefix}/p/{request.match_info['token']}"
    context = {
        "w": w,
        "error": error,
        "saved": saved,
        "action": action,
        "values": values,
        "picker": await picker(ctx, lang, values["sites"], EMPTY_FIELDS, "preferences"),
        "choices": [
            {"value": str(c), "label": _capital(choice_text(c, lang, ctx.campaign))} for c in Choice
        ],
        "languages": [
            {"value": code, "label": i18n.language_name(code)} for code in ctx.campaign.languages
        ],
    }
    return await render_page(
        request, lang, "preferences.html", context, heading=w["heading"], status=status
    )


async def _refused_link(request: web.Request, lang: str, exc: LinkRefused) -> web.Response:
    w = PAGE[lang]
    title = w["left_title"] if exc.left else w["bad_title"]
    context = {"heading": title, "lines": [exc.localized(lang)], "again": WORDS[lang]["again"]}
    # 410: the link was ours and its person has gone; 404: not a link of ours.
    status = 410 if exc.left else 404
    return await render_page(
        request, lang, "signup_message.html", context, heading=title, status=status
    )


async def _refused_form(request: web.Request, lang: str) -> web.Response:
    w = PAGE[lang]
    context = {"heading": WORDS[lang]["refused_title"], "lines": [w["refused"]]}
    return await render_page(
        request,
        lang,
        "signup_message.html",
        context,
        heading=WORDS[lang]["refused_title"],
        status=403,
    )


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


__all__ = ["add_routes"]
