"""The Discord plugin's declaration: what the core needs to know about Discord, said once.

Its parts are named by address: they load, with the platform's library,
only when the core uses them."""

from __future__ import annotations

from bot.ports import Command, Plugin

plugin = Plugin(
    name="discord",
    title="Discord",
    create="adapters.discord._adapter:DiscordAdapter",
    settings="adapters.discord._settings:DiscordSettings",
    section="adapters.discord._settings:DiscordSection",
    admins="adapters.discord._settings:DiscordAdmins",
    delivery="adapters.discord._settings:DiscordDelivery",
    pacing="adapters.discord._settings:pacing",
    limits="adapters.discord._settings:LIMITS",
    # @everyone / @here anywhere; <@123>, <@!123>, <@&456> (users, roles). No word boundary:
    # Discord reads "@everyone" inside "@everyones" too (discord.py's `escape_mentions` agrees).
    mentions=(r"@(?=(?:everyone|here))", r"<(?=@)"),
    address_example="discord:300000000000000003/400000000000000004",
    commands=(
        Command(
            "discord",
            "Discord set-up: sync the /strike commands, print the invite link",
            "adapters.discord.cli:register",
        ),
    ),
    docs="docs/platforms.md#discord",
    doctor="adapters.discord._doctor:doctor",
    preview="adapters.discord._preview:preview",
)
