"""The SMS plugin's declaration: what the core needs to know about texts, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapters.twilio.sms._settings import NAME, SmsDelivery, SmsSection, SmsSettings, pacing
from bot.ports import Check, Contact, Cost, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import Campaign, OutboundMessage, PluginContext, Section, SurfacePreview


def create(ctx: PluginContext) -> object:
    """The adapter, importing its libraries only when the platform is on."""
    from adapters.twilio.sms._adapter import SmsAdapter

    return SmsAdapter(ctx)


def segments_of(message: OutboundMessage, campaign: Campaign, section: Section | None) -> int:
    """`Cost.measure`: the segments `message` takes, rendering it only when a preview asks."""
    from adapters.twilio.sms._render import segments_of as count

    return count(message, campaign, section)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    """Whether Twilio takes the account, and the sender's US registration."""
    from adapters.twilio.sms._doctor import doctor as check

    return await check(request)


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    """The web desk's card: the update as it will arrive, read only when a desk asks."""
    from adapters.twilio.sms._preview import preview as card

    return card(message, campaign, section, language)


plugin = Plugin(
    name=NAME,
    title="Text messages (Twilio)",
    create=create,
    settings=SmsSettings,
    section=SmsSection,
    delivery=SmsDelivery,
    contact=Contact.PHONE,
    cost=Cost(
        units="sms.units",
        measure=segments_of,
        messages="sms.texts",
    ),
    docs="docs/email-sms.md#text-messages",
    doctor=doctor,
    preview=preview,
    pacing=pacing,
    slow_advice="sms.slow_advice",
)
