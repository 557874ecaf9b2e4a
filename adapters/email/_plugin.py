"""The e-mail plugin's declaration: what the core needs to know about e-mail, said once.

Its parts are named by address: they load, with aiosmtplib, only when
the core uses them."""

from __future__ import annotations

from bot.ports import Contact, Cost, Plugin

plugin = Plugin(
    name="email",
    title="E-mail",
    create="adapters.email._adapter:EmailAdapter",
    settings="adapters.email._settings:EmailSettings",
    section="adapters.email._settings:EmailSection",
    delivery="adapters.email._settings:EmailDelivery",
    contact=Contact.EMAIL,
    cost=Cost(units="email.units"),
    docs="docs/email-sms.md#e-mail",
    doctor="adapters.email._doctor:doctor",
    preview="adapters.email._preview:preview",
    pacing="adapters.email._settings:pacing",
    slow_advice="email.slow_advice",
)
