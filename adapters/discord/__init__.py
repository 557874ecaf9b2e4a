"""The Discord plugin: `/strike` slash commands, admin modals and update delivery, with
discord.py.

`DiscordAdapter(ctx)` implements `bot.ports.Adapter`; `strikebot discord sync` pushes the
command tree. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point. See docs/platforms.md, Discord.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.discord._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.discord._adapter import DiscordAdapter, build_client, sync_commands
    from adapters.discord._render import render_embed, render_embeds
    from adapters.discord._settings import LIMITS, NAME, DiscordSettings

# Loaded when first used, with the platform's library (see `lazy_exports`).
_LAZY = {
    "LIMITS": "adapters.discord._settings",
    "NAME": "adapters.discord._settings",
    "DiscordSettings": "adapters.discord._settings",
    "DiscordAdapter": "adapters.discord._adapter",
    "build_client": "adapters.discord._adapter",
    "sync_commands": "adapters.discord._adapter",
    "render_embed": "adapters.discord._render",
    "render_embeds": "adapters.discord._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "LIMITS",
    "NAME",
    "DiscordAdapter",
    "DiscordSettings",
    "build_client",
    "plugin",
    "render_embed",
    "render_embeds",
    "sync_commands",
]
