"""The Discord plugin's declaration: what the core needs to know about Discord, said once."""

from __future__ import annotations

from adapters.discord._adapter import DiscordAdapter
from adapters.discord._doctor import doctor
from adapters.discord._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    DiscordAdmins,
    DiscordDelivery,
    DiscordSection,
    DiscordSettings,
)
from adapters.discord.cli import register
from bot.ports import Plugin

plugin = Plugin(
    name=NAME,
    title="Discord",
    create=DiscordAdapter,
    settings=DiscordSettings,
    section=DiscordSection,
    admins=DiscordAdmins,
    delivery=DiscordDelivery,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="discord:300000000000000003/400000000000000004",
    cli=register,
    docs="docs/platforms.md#discord",
    doctor=doctor,
)
