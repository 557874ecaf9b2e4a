"""The Discord plugin's declaration: what the core needs to know about Discord, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapters.discord._preview import preview
from adapters.discord._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    DiscordAdmins,
    DiscordDelivery,
    DiscordSection,
    DiscordSettings,
    pacing,
)
from bot.ports import Check, Command, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext


# The adapter and its self-check import the platform's library: only when they are used.
def create(ctx: PluginContext) -> object:
    from adapters.discord._adapter import DiscordAdapter

    return DiscordAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    from adapters.discord._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="Discord",
    create=create,
    settings=DiscordSettings,
    section=DiscordSection,
    admins=DiscordAdmins,
    delivery=DiscordDelivery,
    pacing=pacing,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="discord:300000000000000003/400000000000000004",
    commands=(
        Command(
            "discord",
            "Discord set-up: sync the /strike commands, print the invite link",
            "adapters.discord.cli:register",
        ),
    ),
    docs="docs/platforms.md#discord",
    doctor=doctor,
    preview=preview,
)
