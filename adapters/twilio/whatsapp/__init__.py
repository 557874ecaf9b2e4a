"""The WhatsApp plugin: updates, corrections, retractions and briefings on WhatsApp to
families who wrote to the campaign's number first (JOIN / UNIRSE, from the page's
click-to-chat link), through Twilio's WhatsApp (the same account and signed webhooks as
texts): free-form within 24 hours of their last message, as approved templates outside it.
Their messages are answered on `POST /whatsapp/inbound`, receipts on
`/whatsapp/status/{delivery}`.

`WhatsAppAdapter(ctx)` implements `bot.ports.Adapter` (`edits_in_place = False`) and mounts
the webhooks. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point. See docs/whatsapp.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.ports import lazy_exports

from ._plugin import plugin

if TYPE_CHECKING:
    from ._adapter import WhatsAppAdapter
    from ._render import free_form, variables
    from ._settings import NAME, WhatsAppSection, WhatsAppSettings

_LAZY = {
    "NAME": "adapters.twilio.whatsapp._settings",
    "WhatsAppSection": "adapters.twilio.whatsapp._settings",
    "WhatsAppSettings": "adapters.twilio.whatsapp._settings",
    "WhatsAppAdapter": "adapters.twilio.whatsapp._adapter",
    "free_form": "adapters.twilio.whatsapp._render",
    "variables": "adapters.twilio.whatsapp._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "NAME",
    "WhatsAppAdapter",
    "WhatsAppSection",
    "WhatsAppSettings",
    "free_form",
    "plugin",
    "variables",
]
