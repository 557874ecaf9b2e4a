"""The Telegram plugin: members' commands (`/status`, `/estado`...), admin forms with a
preview, and delivery to groups, forum topics and channels, through python-telegram-bot.

    adapter = TelegramAdapter(ctx)   # reads TELEGRAM_* from its PluginSettings
    adapter.mount(app)               # webhook mode: POST /telegram/webhook
    await adapter.start() ... await adapter.stop()

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
See docs/telegram.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.telegram._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.telegram._adapter import TelegramAdapter, bot_api_base, connection_mode, menu
    from adapters.telegram._render import inert, render, reply_text, visible_length
    from adapters.telegram._settings import LIMITS, NAME, WEBHOOK_PATH, TelegramSettings

# Loaded when first used, with the platform's library (see `lazy_exports`).
_LAZY = {
    "LIMITS": "adapters.telegram._settings",
    "NAME": "adapters.telegram._settings",
    "WEBHOOK_PATH": "adapters.telegram._settings",
    "TelegramSettings": "adapters.telegram._settings",
    "TelegramAdapter": "adapters.telegram._adapter",
    "bot_api_base": "adapters.telegram._adapter",
    "connection_mode": "adapters.telegram._adapter",
    "menu": "adapters.telegram._adapter",
    "inert": "adapters.telegram._render",
    "render": "adapters.telegram._render",
    "reply_text": "adapters.telegram._render",
    "visible_length": "adapters.telegram._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "LIMITS",
    "NAME",
    "WEBHOOK_PATH",
    "TelegramAdapter",
    "TelegramSettings",
    "bot_api_base",
    "connection_mode",
    "inert",
    "menu",
    "plugin",
    "render",
    "reply_text",
    "visible_length",
]
