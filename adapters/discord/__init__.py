"""The Discord plugin: `/strike` slash commands, admin modals and update delivery, with
discord.py.

`DiscordAdapter(ctx)` implements `bot.ports.Adapter`; `strikebot discord sync` pushes the
command tree. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point. See docs/platforms.md, Discord.
"""

from adapters.discord._adapter import DiscordAdapter, build_client, sync_commands
from adapters.discord._plugin import plugin
from adapters.discord._render import render_embed, render_embeds
from adapters.discord._settings import LIMITS, NAME, DiscordSettings

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
