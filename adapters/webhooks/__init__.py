"""The webhooks plugin: every change as a signed JSON event, POSTed to the receivers an
admin added (`strikebot webhooks add`, or the admin API), per the Standard Webhooks
specification. See docs/webhooks.md.

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.webhooks._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.webhooks._adapter import WebhookAdapter, body_of, next_try
    from adapters.webhooks._sending import Outcome, SafeResolver, Sender, sign, signed_headers
    from adapters.webhooks._settings import NAME

# Loaded when first used, with aiohttp (see `lazy_exports`).
_LAZY = {
    "NAME": "adapters.webhooks._settings",
    "WebhookAdapter": "adapters.webhooks._adapter",
    "body_of": "adapters.webhooks._adapter",
    "next_try": "adapters.webhooks._adapter",
    "Outcome": "adapters.webhooks._sending",
    "SafeResolver": "adapters.webhooks._sending",
    "Sender": "adapters.webhooks._sending",
    "sign": "adapters.webhooks._sending",
    "signed_headers": "adapters.webhooks._sending",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "NAME",
    "Outcome",
    "SafeResolver",
    "Sender",
    "WebhookAdapter",
    "body_of",
    "next_try",
    "plugin",
    "sign",
    "signed_headers",
]
