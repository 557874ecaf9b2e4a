"""The public web surface on the one aiohttp server: the status page (`/`, `/es/`), one
page per update, Atom and iCalendar feeds, the JSON API with its OpenAPI document, the
admin HTTP API, `/metrics` and `/healthz`.

    app = build_app(runtime)   # then aiohttp's AppRunner on STRIKEBOT_HTTP_HOST/PORT
"""

from adapters.web._build import build_app

__all__ = ["build_app"]
