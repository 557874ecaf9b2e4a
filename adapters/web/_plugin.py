"""The web plugin's declaration: the public page, feeds and APIs, said once."""

from __future__ import annotations

from adapters.web._app import WebSection, WebSettings
from adapters.web._build import WebSurface
from adapters.web._doctor import doctor
from adapters.web.cli import register
from bot.ports import Plugin

NAME = "web"

plugin = Plugin(
    name=NAME,
    title="Web page and API",
    create=WebSurface,
    settings=WebSettings,
    section=WebSection,
    delivers=False,
    cli=register,
    docs="docs/web.md",
    doctor=doctor,
)
