"""The SMS plugin: updates, corrections, retractions and briefings by text to people who
signed up on the status page or by texting JOIN / UNIRSE, through Twilio; STOP, HELP and
YES answered on `POST /sms/inbound`, delivery receipts on `/sms/status/{delivery}`.

`SmsAdapter(ctx)` implements `bot.ports.Adapter` (with `edits_in_place = False`) and
mounts the webhooks. `plugin` is the declaration the core finds through the
`strikebot.adapters` entry point. See docs/email-sms.md.
"""

from adapters.sms._adapter import SmsAdapter, keyword
from adapters.sms._plugin import plugin
from adapters.sms._render import render_text, short_name
from adapters.sms._segments import Segments, count
from adapters.sms._settings import NAME, SmsSettings

__all__ = [
    "NAME",
    "Segments",
    "SmsAdapter",
    "SmsSettings",
    "count",
    "keyword",
    "plugin",
    "render_text",
    "short_name",
]
