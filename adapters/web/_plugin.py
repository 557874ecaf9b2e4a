"""The web plugin's declaration: the public page, feeds and APIs, said once.

Its parts are named by address: they load, with aiohttp and the
templates, only when the core uses them."""

from __future__ import annotations

from bot.ports import Command, Plugin

plugin = Plugin(
    name="web",
    title="Web page and API",
    create="adapters.web._build:WebSurface",
    settings="adapters.web._settings:WebSettings",
    section="adapters.web._settings:WebSection",
    admins="adapters.web._settings:WebAdmins",  # [admins.web] emails: who signs in to /desk
    preview="adapters.web._surface:preview",
    delivers=False,
    commands=(
        Command(
            "publish",
            "write the public site (pages, feeds, JSON) as static files into a directory",
            "adapters.web.cli:register",
        ),
    ),
    docs="docs/web.md",
    doctor="adapters.web._doctor:doctor",
)
