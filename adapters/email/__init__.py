"""The e-mail plugin: updates, corrections, retractions and briefings to people who signed up
on the status page, through any SMTP server (aiosmtplib), with one-click unsubscribe.

`EmailAdapter(ctx)` implements `bot.ports.Adapter` (with `edits_in_place = False`) and
mounts the unsubscribe link's routes. `plugin` is the declaration the core finds through
the `strikebot.adapters` entry point. See docs/email-sms.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.email._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.email._adapter import EmailAdapter
    from adapters.email._render import Envelope, build_email
    from adapters.email._settings import NAME, EmailSettings, parse_smtp_url

# The platform's libraries load only when something here needs them (the plugin's
# declaration does not), so `strikebot --help` and the other commands start quickly.
_LAZY = {
    "NAME": "adapters.email._settings",
    "EmailSettings": "adapters.email._settings",
    "parse_smtp_url": "adapters.email._settings",
    "EmailAdapter": "adapters.email._adapter",
    "Envelope": "adapters.email._render",
    "build_email": "adapters.email._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "NAME",
    "EmailAdapter",
    "EmailSettings",
    "Envelope",
    "build_email",
    "parse_smtp_url",
    "plugin",
]
