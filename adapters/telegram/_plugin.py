"""The Telegram plugin's declaration: what the core needs to know about Telegram, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapters.telegram._preview import preview
from adapters.telegram._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    TelegramAdmins,
    TelegramDelivery,
    TelegramSection,
    TelegramSettings,
    pacing,
)
from bot.ports import Check, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext


# The adapter and its self-check import the platform's library: only when they are used.
def create(ctx: PluginContext) -> object:
    from adapters.telegram._adapter import TelegramAdapter

    return TelegramAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    from adapters.telegram._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="Telegram",
    create=create,
    settings=TelegramSettings,
    section=TelegramSection,
    admins=TelegramAdmins,
    delivery=TelegramDelivery,
    pacing=pacing,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="telegram:-1001234567890/-1001234567890",
    docs="docs/telegram.md",
    doctor=doctor,
    preview=preview,
)
