"""Twilio, the provider behind two plugins: texts (`adapters.twilio.sms`) and WhatsApp
(`adapters.twilio.whatsapp`). Each is its own plugin (entry points `sms` and `whatsapp`);
what both say to Twilio lives here once. See docs/adapters.md, "A provider's package"."""
