"""The e-mail plugin's declaration: what the core needs to know about e-mail, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapters.email._settings import NAME, EmailDelivery, EmailSection, EmailSettings, pacing
from bot.ports import Check, Contact, Cost, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import Campaign, OutboundMessage, PluginContext, Section, SurfacePreview


def create(ctx: PluginContext) -> object:
    """The adapter, importing its libraries only when the platform is on."""
    from adapters.email._adapter import EmailAdapter

    return EmailAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    """Whether the mail server answers and takes the login (imports aiosmtplib on use)."""
    from adapters.email._doctor import doctor as check

    return await check(request)


def preview(
    message: OutboundMessage, campaign: Campaign, section: Section | None, language: str
) -> SurfacePreview:
    """The web desk's card: the update as it will arrive, read only when a desk asks."""
    from adapters.email._preview import preview as card

    return card(message, campaign, section, language)


plugin = Plugin(
    name=NAME,
    title="E-mail",
    create=create,
    settings=EmailSettings,
    section=EmailSection,
    delivery=EmailDelivery,
    contact=Contact.EMAIL,
    cost=Cost(units="email.units"),
    docs="docs/email-sms.md#e-mail",
    doctor=doctor,
    preview=preview,
    pacing=pacing,
    slow_advice="email.slow_advice",
)
