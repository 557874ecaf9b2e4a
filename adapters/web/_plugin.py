"""The web plugin's declaration: the public page, feeds and APIs, said once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.web._settings import NAME, WebSection, WebSettings
from bot.ports import Check, Command, DoctorRequest, Plugin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bot.ports import PluginContext


def create(ctx: PluginContext) -> object:
    """The web surface, importing aiohttp and the templates only when the plugin runs."""
    from adapters.web._build import WebSurface

    return WebSurface(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    """The admin token's strength and the public address."""
    from adapters.web._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="Web page and API",
    create=create,
    settings=WebSettings,
    section=WebSection,
    delivers=False,
    commands=(
        Command(
            "publish",
            "write the public site (pages, feeds, JSON) as static files into a directory",
            "adapters.web.cli:register",
        ),
    ),
    docs="docs/web.md",
    doctor=doctor,
)
