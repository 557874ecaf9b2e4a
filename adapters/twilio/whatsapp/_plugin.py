"""The WhatsApp plugin's declaration: what the core needs to know, said once.

Its parts are named by address: they load, with the Twilio client, only
when the core uses them."""

from __future__ import annotations

from bot.ports import Contact, Cost, Plugin

plugin = Plugin(
    name="whatsapp",
    title="WhatsApp (Twilio)",
    create="adapters.twilio.whatsapp._adapter:WhatsAppAdapter",
    settings="adapters.twilio.whatsapp._settings:WhatsAppSettings",
    section="adapters.twilio.whatsapp._settings:WhatsAppSection",
    delivery="adapters.twilio.whatsapp._settings:WhatsAppDelivery",
    pacing="adapters.twilio.whatsapp._settings:pacing",
    contact=Contact.WHATSAPP,
    cost=Cost(units="whatsapp.units"),
    doctor="adapters.twilio.whatsapp._doctor:doctor",
    docs="docs/whatsapp.md",
    preview="adapters.twilio.whatsapp._preview:preview",
)
