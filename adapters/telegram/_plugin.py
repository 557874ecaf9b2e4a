"""The Telegram plugin's declaration: what the core needs to know about Telegram, said once."""

from __future__ import annotations

from adapters.telegram._adapter import TelegramAdapter
from adapters.telegram._doctor import doctor
from adapters.telegram._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    TelegramAdmins,
    TelegramDelivery,
    TelegramSection,
    TelegramSettings,
)
from bot.ports import Plugin

plugin = Plugin(
    name=NAME,
    title="Telegram",
    create=TelegramAdapter,
    settings=TelegramSettings,
    section=TelegramSection,
    admins=TelegramAdmins,
    delivery=TelegramDelivery,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="telegram:-1001234567890/-1001234567890",
    docs="docs/telegram.md",
    doctor=doctor,
)
