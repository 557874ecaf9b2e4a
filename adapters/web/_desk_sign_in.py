"""The sign-in pages of the web desk: `/desk/sign-in` asks the core's door
(`bot.ports.SignIn`) for a link, which goes by e-mail through the outbox (the e-mail
plugin sends it); the page behind the link shows a button whose POST opens the session
(mail scanners open links; they press no buttons). Signing out, here or on every device,
ends sessions in the store. The checks every form passes: `_desk_auth`."""

from __future__ import annotations

import secrets

from aiohttp import web

from bot.ports import (
    Campaign,
    Contact,
    InvalidInput,
    Link,
    MessageKind,
    OutboundMessage,
    TooManySignIns,
)

from ._desk_auth import (
    COOKIE,
    PRE_COOKIE,
    Form,
    Person,
    WebDesk,
    checked,
    clear_cookie,
    csrf_token,
    desk_of,
    guarded,
    language,
    message,
    read_form,
    render,
    see_other,
    set_cookie,
    signed_in,
    words,
)


def add_routes(app: web.Application) -> None:
    r = app.router
    r.add_get("/desk/sign-in", _ask_page)
    r.add_post("/desk/sign-in", _ask)
    r.add_get("/desk/sign-in/{token}", _enter_page)
    r.add_post("/desk/sign-in/{token}", _enter)
    r.add_post("/desk/sign-out", guarded(_sign_out))
    r.add_post("/desk/sign-out-everywhere", guarded(_sign_out_everywhere))


def _pre_secret(request: web.Request) -> tuple[str, bool]:
    """The sign-in forms' secret from its cookie, or a new one (True: set the cookie)."""
    known = request.cookies.get(PRE_COOKIE, "")
    if 20 <= len(known) <= 64:
        return known, False
    return secrets.token_urlsafe(24), True


def _with_pre(response: web.Response, secret: str, new: bool) -> web.Response:
    if new:
        set_cookie(response, PRE_COOKIE, secret, max_age=3600)
    return response


async def _ask_page(request: web.Request) -> web.StreamResponse:
    if await signed_in(request, touch=False) is not None:
        return see_other("/desk")
    lang = language(request)
    secret, new = _pre_secret(request)
    error = "" if _mails(desk_of(request)) else words(lang)["no_email"]
    return _with_pre(_ask_form(request, lang, secret, error=error), secret, new)


def _mails(desk: WebDesk) -> bool:
    """Whether a plugin that sends e-mail is on (it carries the sign-in links)."""
    return desk.ctx.signups is not None and Contact.EMAIL in desk.ctx.people.offers


def _ask_form(
    request: web.Request, lang: str, secret: str, *, error: str = "", value: str = "",
    status: int = 200,
) -> web.Response:  # fmt: skip
    w = words(lang)
    notice = w["signed_out"] if request.query.get("out") else ""
    context = {"lang": lang, "csrf": csrf_token(secret), "error": error, "value": value,
               "notice": notice, "minutes": _minutes(request)}  # fmt: skip
    return render(request, "sign_in.html", context, status=status)


def _minutes(request: web.Request) -> int:
    return int(desk_of(request).door.limits.link_lasts.total_seconds() // 60)


async def _ask(request: web.Request) -> web.StreamResponse:
    desk = desk_of(request)
    lang = language(request)
    secret, _ = _pre_secret(request)
    form = await read_form(request)
    refusal = checked(request, form, request.cookies.get(PRE_COOKIE, ""), lang)
    if refusal is not None:
        return refusal
    w = words(lang)
    address = form.get("email", "")
    if not _mails(desk):
        return _ask_form(request, lang, secret, error=w["no_email"], value=address, status=503)
    try:
        await desk.door.ask(
            address,
            allowed=desk.ctx.admins.allows,
            client=desk.ctx.clients.address(request.remote, request.headers.get("X-Forwarded-For")),
            message=lambda token: _link_mail(desk.ctx.campaign, token, lang, _minutes(request)),
        )
    except InvalidInput as exc:
        return _ask_form(request, lang, secret, error=exc.localized(lang), value=address,
                         status=422)  # fmt: skip
    except TooManySignIns as exc:
        return message(request, lang, w["too_many_title"], [exc.localized(lang)], status=429)
    lines = [w["sent"].format(minutes=_minutes(request)), w["sent_note"]]
    return message(request, lang, w["sent_title"], lines)


def _link_mail(campaign: Campaign, token: str, lang: str, minutes: int) -> OutboundMessage:
    w = words(lang)
    url = f"{campaign.public_url}/desk/sign-in/{token}?lang={lang}"
    return OutboundMessage(
        title=w["mail_title"].format(union=campaign.union),
        body=w["mail_body"].format(minutes=minutes),
        kind=MessageKind.CONFIRM,
        language=lang,
        links=(Link(w["mail_link"], url),),
        url=url,
        footer=campaign.union,
    )


async def _enter_page(request: web.Request) -> web.StreamResponse:
    lang = language(request)
    secret, new = _pre_secret(request)
    context = {"lang": lang, "csrf": csrf_token(secret), "action": request.path}
    return _with_pre(render(request, "enter.html", context), secret, new)


async def _enter(request: web.Request) -> web.StreamResponse:
    desk = desk_of(request)
    lang = language(request)
    form = await read_form(request)
    refusal = checked(request, form, request.cookies.get(PRE_COOKIE, ""), lang)
    if refusal is not None:
        return refusal
    opened = await desk.door.enter(request.match_info["token"], allowed=desk.ctx.admins.allows)
    if opened is None:
        w = words(lang)
        again = (w["ask_again"], f"/desk/sign-in?lang={lang}")
        return message(request, lang, w["expired_title"], [w["expired"]], status=404, link=again)
    response = see_other(f"/desk?lang={lang}")
    longest = int(desk.door.limits.longest.total_seconds())
    set_cookie(response, COOKIE, opened.token, max_age=longest)
    clear_cookie(response, PRE_COOKIE)
    return response


async def _sign_out(request: web.Request, person: Person, form: Form) -> web.StreamResponse:
    await desk_of(request).door.leave(request.cookies.get(COOKIE, ""))
    response = see_other(f"/desk/sign-in?out=1&lang={person.lang}")
    clear_cookie(response, COOKIE)
    return response


async def _sign_out_everywhere(
    request: web.Request, person: Person, form: Form
) -> web.StreamResponse:
    await desk_of(request).door.leave_everywhere(person.address)
    response = see_other(f"/desk/sign-in?out=1&lang={person.lang}")
    clear_cookie(response, COOKIE)
    return response
