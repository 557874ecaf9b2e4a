"""The e-mail plugin's declaration: what the core needs to know about e-mail, said once."""

from __future__ import annotations

from adapters.email._adapter import EmailAdapter
from adapters.email._settings import NAME, EmailDelivery, EmailSection, EmailSettings
from bot.ports import Contact, Cost, Plugin

plugin = Plugin(
    name=NAME,
    title="E-mail",
    create=EmailAdapter,
    settings=EmailSettings,
    section=EmailSection,
    delivery=EmailDelivery,
    contact=Contact.EMAIL,
    cost=Cost(units="email.units"),
    docs="docs/email-sms.md#e-mail",
)
