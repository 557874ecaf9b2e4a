"""The SMS plugin's declaration: what the core needs to know about texts, said once.

Its parts are named by address: they load, with the Twilio client, only
when the core uses them."""

from __future__ import annotations

from bot.ports import Contact, Cost, Plugin

plugin = Plugin(
    name="sms",
    title="Text messages (Twilio)",
    create="adapters.twilio.sms._adapter:SmsAdapter",
    settings="adapters.twilio.sms._settings:SmsSettings",
    section="adapters.twilio.sms._settings:SmsSection",
    delivery="adapters.twilio.sms._settings:SmsDelivery",
    contact=Contact.PHONE,
    # A preview counts the segments each text takes, rendering it only then.
    cost=Cost(
        units="sms.units",
        measure="adapters.twilio.sms._render:segments_of",
        messages="sms.texts",
    ),
    docs="docs/email-sms.md#text-messages",
    doctor="adapters.twilio.sms._doctor:doctor",
    preview="adapters.twilio.sms._preview:preview",
    pacing="adapters.twilio.sms._settings:pacing",
    slow_advice="sms.slow_advice",
)
