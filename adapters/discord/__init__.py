"""The Discord plugin: `/strike` slash commands, admin modals and update delivery, with
discord.py.

`DiscordAdapter(ctx)` implements `bot.ports.Adapter`; `strikebot discord sync` pushes the
command tree. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point. See docs/platforms.md, Discord.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adapters.discord._plugin import plugin
from adapters.discord._settings import LIMITS, NAME, DiscordSettings

if TYPE_CHECKING:
    from adapters.discord._adapter import DiscordAdapter, build_client, sync_commands
    from adapters.discord._render import render_embed, render_embeds

# The platform's library loads only when something here needs it (the plugin's
# declaration does not), so `strikebot --help` and the other commands start quickly.
_LAZY = {
    "DiscordAdapter": "adapters.discord._adapter",
    "build_client": "adapters.discord._adapter",
    "sync_commands": "adapters.discord._adapter",
    "render_embed": "adapters.discord._render",
    "render_embeds": "adapters.discord._render",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
