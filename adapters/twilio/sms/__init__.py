"""The SMS plugin: updates, corrections, retractions and briefings by text to people who
signed up on the status page or by texting JOIN / UNIRSE, through Twilio; STOP, HELP and
YES answered on `POST /sms/inbound`, delivery receipts on `/sms/status/{delivery}`.

`SmsAdapter(ctx)` implements `bot.ports.Adapter` (with `edits_in_place = False`) and
mounts the webhooks. `plugin` is the declaration the core finds through the
`strikebot.adapters` entry point. See docs/email-sms.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.twilio.sms._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.twilio.sms._adapter import SmsAdapter
    from adapters.twilio.sms._render import render_text
    from adapters.twilio.sms._segments import Segments, count
    from adapters.twilio.sms._settings import NAME, SmsSettings

# The platform's libraries load only when something here needs them (the plugin's
# declaration does not), so `strikebot --help` and the other commands start quickly.
_LAZY = {
    "NAME": "adapters.twilio.sms._settings",
    "SmsSettings": "adapters.twilio.sms._settings",
    "Segments": "adapters.twilio.sms._segments",
    "count": "adapters.twilio.sms._segments",
    "SmsAdapter": "adapters.twilio.sms._adapter",
    "render_text": "adapters.twilio.sms._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "NAME",
    "Segments",
    "SmsAdapter",
    "SmsSettings",
    "count",
    "plugin",
    "render_text",
]
