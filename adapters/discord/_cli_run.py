"""`strikebot discord sync` and `invite` at work: what `adapters.discord.cli` runs, with
discord.py (imported only when one of these commands runs)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable

import discord

from adapters.discord._adapter import build_client, sync_commands
from adapters.discord._client import GatewayHealth
from adapters.discord._endpoints import EndpointOverride
from adapters.discord._interactions import Handlers
from adapters.discord._settings import NAME, DiscordSection, DiscordSettings
from bot.ports import (
    ConfigError,
    StrikebotError,
    open_plugin,
    out,
    print_json,
)

# What the bot needs in a channel it posts to: see it, post, show embeds, and read the
# history so it can edit its own earlier messages.
BOT_PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    embed_links=True,
    read_message_history=True,
)
SCOPES = ("bot", "applications.commands")


def _token() -> tuple[str, EndpointOverride]:
    settings = DiscordSettings.from_env(os.environ)
    if settings.token is None:
        raise ConfigError(
            "DISCORD_TOKEN is not set. Copy the bot token from the Discord Developer Portal "
            "(your application → Bot → Reset Token) into DISCORD_TOKEN."
        )
    return settings.token.get_secret_value(), EndpointOverride(
        settings.api_base, settings.gateway_url
    )


async def handle_sync(args: argparse.Namespace) -> int:
    token, endpoints = _token()
    async with open_plugin(args, NAME) as plugin_ctx:
        section = plugin_ctx.section
        configured = section.guild_ids if isinstance(section, DiscordSection) else []
        guilds = list(args.guild or configured)
        if not guilds and not args.global_:
            raise ConfigError(
                "No server to sync to. List your server ids under [discord] guild_ids in "
                "config/strike.toml, pass --guild ID, or use --global."
            )
        for guild in guilds:
            if not (guild.isascii() and guild.isdigit()):
                raise ConfigError(f"{guild!r} is not a Discord server id (a long number).")
        client = build_client(Handlers(plugin_ctx), GatewayHealth(),
                              gateway_override=False)  # fmt: skip
        endpoints.apply()
        try:
            await _login(client.login(token))
            results = await sync_commands(client, guilds, global_=args.global_)
        finally:
            await client.close()
            endpoints.restore()
    failed = [where for where, result in results.items() if not result.startswith("synced")]
    if args.json:
        print_json({"results": results, "ok": not failed})
    else:
        for where, result in results.items():
            label = "global" if where == "global" else f"server {where}"
            mark = "[red]✗[/]" if where in failed else "[green]✓[/]"
            out.print(f"{mark} {label}: {result}")
    return 1 if failed else 0


async def handle_invite(args: argparse.Namespace) -> int:
    token, endpoints = _token()
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    endpoints.apply()
    try:
        await _login(http.static_login(token))
        app = await http.application_info()
    finally:
        await http.close()
        endpoints.restore()
    url = discord.utils.oauth_url(app["id"], permissions=BOT_PERMISSIONS, scopes=SCOPES)
    if args.json:
        print_json({"url": url, "permissions": BOT_PERMISSIONS.value, "scopes": list(SCOPES)})
    else:
        out.print(f"Open this link, pick your server and press Authorize:\n{url}")
    return 0


async def _login(attempt: Awaitable[object]) -> None:
    """Await a login (`client.login(token)`, `http.static_login(token)`); say what to fix."""
    try:
        await attempt
    except discord.LoginFailure:
        raise StrikebotError(
            "Discord refused DISCORD_TOKEN. Copy the token again from the Developer Portal "
            "(Bot → Reset Token)."
        ) from None
    except (discord.HTTPException, OSError) as exc:
        raise StrikebotError(
            f"Could not reach Discord ({exc}). Check the network, or DISCORD_API_BASE if set."
        ) from None
