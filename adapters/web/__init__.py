"""The web plugin: the status page (`/`, `/es/`), one page per update, Atom and iCalendar
feeds, the JSON API with its OpenAPI document, the admin HTTP API, `/metrics` and
`/healthz`, all on the bot's one aiohttp server. Public views are cached with validators
and a CDN-ready policy, served from the last good render when the store fails
(`_cache.py`, `_app.cached`), and can be written out as a static site (`strikebot
publish`, `[web] publish_dir`: `_publish.py`).

    WebSurface(ctx).mount(app)   # what `strikebot run` does through `plugin`
    app = build_app(ctx)         # a stand-alone application, for tests and benchmarks
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.web._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.web._build import WebSurface
    from adapters.web._mount import build_app
    from adapters.web._settings import NAME

# Loaded when first used, with aiohttp and the templates (see `lazy_exports`).
_LAZY = {
    "NAME": "adapters.web._settings",
    "WebSurface": "adapters.web._build",
    "build_app": "adapters.web._mount",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = ["NAME", "WebSurface", "build_app", "plugin"]
