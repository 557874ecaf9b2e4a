"""The page's part of the other ways to get the news: the click-to-chat links and the
"Notify me" button (`templates/_reach.html`), the service worker that shows browser
notifications (`/sw.js`), the button's script (`/notify.js`) and the web app manifest
(`/manifest.webmanifest`, per language), with which an iPhone that adds the page to its home
screen can subscribe too.

The web plugin only shows what the delivering plugins offer (`bot.ports.Offer`: WhatsApp's
invites, the push plugin's application server key and subscription path); it sends nothing.
The page works the same without JavaScript: the button is hidden until the script finds
that the browser can subscribe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.ports import Campaign, Choice, Contact, PluginContext, choice_text, i18n

from ._present import page_prefix

STATIC = Path(__file__).parent / "static"
WORDS = i18n.Words("web.reach")
# What the status page may run when the button is offered: its own script, its own worker,
# and requests to its own origin.
PUSH_CSP = "script-src 'self'; connect-src 'self'; worker-src 'self'"
ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">'
    '<rect width="512" height="512" rx="96" fill="#c8102e"/>'
    '<path d="M256 96a112 112 0 0 0-112 112v72l-40 72h304l-40-72v-72A112 112 0 0 0 256 96z'
    'm0 352a48 48 0 0 0 48-48h-96a48 48 0 0 0 48 48z" fill="#fff"/></svg>'
)


def add_routes(app: web.Application, campaign: Campaign) -> None:
    app.router.add_get("/sw.js", _script("sw.js", worker=True))
    app.router.add_get("/notify.js", _script("notify.js"))
    app.router.add_get("/app-icon.svg", _icon)
    for lang in campaign.languages:
        app.router.add_get(f"{page_prefix(lang, campaign)}/manifest.webmanifest", _manifest(lang))


def csp_extra(ctx: PluginContext) -> str:
    """What the pages' Content-Security-Policy adds when the button is offered."""
    return PUSH_CSP if ctx.signups is not None and Contact.PUSH in ctx.people.offers else ""


def reach(ctx: PluginContext, static: Callable[[], bool]) -> Any:
    """For templates: `reach(lang)`, what `_reach.html` shows in `lang`. A static copy of
    the site (`strikebot publish`) has no manifest, no button (its subscriptions would go
    to the static host), only the invites."""

    def view(lang: str) -> dict[str, Any]:
        offers = ctx.people.offers if ctx.signups is not None else {}
        invites = [o.invites[lang] for o in offers.values() if lang in o.invites]
        push = offers.get(Contact.PUSH)
        words = WORDS[lang]
        live = not static()
        return {
            "manifest": live,
            "invites": invites,
            "push": {"key": push.key, "path": push.path} if push and push.key and live else None,
            "words": words,
            "choices": [{"value": str(c), "label": _capital(choice_text(c, lang))} for c in Choice],
        }

    return view


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _script(name: str, *, worker: bool = False) -> Any:
    body = (STATIC / name).read_bytes()

    async def handle(request: web.Request) -> web.Response:
        headers = {"Cache-Control": "no-cache" if worker else "public, max-age=3600"}
        return web.Response(
            body=body, content_type="text/javascript", charset="utf-8", headers=headers
        )

    return handle


async def _icon(request: web.Request) -> web.Response:
    return web.Response(
        text=ICON, content_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )


def _manifest(lang: str) -> Any:
    async def handle(request: web.Request) -> web.Response:
        from ._app import state_of

        campaign = state_of(request).ctx.campaign
        prefix = page_prefix(lang, campaign)
        words = WORDS[lang]
        manifest = {
            "name": words["app_name"].format(union=campaign.union),
            "short_name": words["app_short_name"],
            "lang": lang,
            "start_url": f"{prefix}/",
            "scope": "/",
            "display": "standalone",
            "background_color": "#ffffff",
            "theme_color": "#c8102e",
            "icons": [{"src": "/app-icon.svg", "sizes": "any", "type": "image/svg+xml"}],
        }
        return web.Response(
            text=json.dumps(manifest, ensure_ascii=False),
            content_type="application/manifest+json",
            headers={"Cache-Control": "public, max-age=3600"},
        )

    return handle
