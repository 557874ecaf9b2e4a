"""The webhooks plugin: every change as a signed JSON event, POSTed to the receivers an
admin added (`strikebot webhooks add`, or the admin API), per the Standard Webhooks
specification. See docs/webhooks.md.

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
"""

from adapters.webhooks._adapter import NAME, WebhookAdapter, body_of, next_try
from adapters.webhooks._plugin import plugin
from adapters.webhooks._sending import Outcome, SafeResolver, Sender, sign, signed_headers

__all__ = [
    "NAME",
    "Outcome",
    "SafeResolver",
    "Sender",
    "WebhookAdapter",
    "body_of",
    "next_try",
    "plugin",
    "sign",
    "signed_headers",
]
