"""The WhatsApp plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.ports import Check, Contact, Cost, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext

from ._preview import preview
from ._settings import NAME, WhatsAppDelivery, WhatsAppSection, WhatsAppSettings, pacing


def create(ctx: PluginContext) -> object:
    """The adapter, importing its libraries only when the platform is on."""
    from ._adapter import WhatsAppAdapter

    return WhatsAppAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    from ._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="WhatsApp (Twilio)",
    create=create,
    settings=WhatsAppSettings,
    section=WhatsAppSection,
    delivery=WhatsAppDelivery,
    pacing=pacing,
    contact=Contact.WHATSAPP,
    cost=Cost(units="whatsapp.units"),
    doctor=doctor,
    docs="docs/whatsapp.md",
    preview=preview,
)
