"""Discord: `/strike` slash commands, admin modals and update delivery, with discord.py.

`DiscordAdapter(runtime, commands)` implements `bot.ports.Adapter`; `strikebot discord sync`
pushes the command tree. See README "Connect to Discord".
"""

from adapters.discord._adapter import DiscordAdapter, build_client, sync_commands
from adapters.discord._render import render_embed, render_embeds

__all__ = ["DiscordAdapter", "build_client", "render_embed", "render_embeds", "sync_commands"]
