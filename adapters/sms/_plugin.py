"""The SMS plugin's declaration: what the core needs to know about texts, said once."""

from __future__ import annotations

from adapters.sms._render import segments_of
from adapters.sms._settings import NAME, SmsDelivery, SmsSection, SmsSettings
from bot.ports import Contact, Cost, Plugin, PluginContext


def create(ctx: PluginContext) -> object:
    """The adapter, importing its libraries only when the platform is on."""
    from adapters.sms._adapter import SmsAdapter

    return SmsAdapter(ctx)


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
    ),
    docs="docs/email-sms.md#text-messages",
)
