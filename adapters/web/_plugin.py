"""The web plugin's declaration: the public page, feeds and APIs, said once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.web._settings import NAME, WebAdmins, WebSection, WebSettings
from bot.ports import Check, Command, DoctorRequest, Plugin

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bot.ports import Campaign, OutboundMessage, PluginContext, Section, SurfacePreview


def create(ctx: PluginContext) -> object:
    """The web surface, importing aiohttp and the templates only when the plugin runs."""
    from adapters.web._build import WebSurface

    return WebSurface(ctx)


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    """The web desk's card for the public page, read only when a desk asks."""
    from adapters.web._surface import preview as card

    return card(message, campaign, section, language)


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
    admins=WebAdmins,  # [admins.web] emails: who signs in to the web desk (/desk)
    preview=preview,
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
