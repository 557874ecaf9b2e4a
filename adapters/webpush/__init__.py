"""The browser-notifications plugin: updates, corrections, retractions and briefings as
notifications to browsers (and iPhones that added the page to the home screen) whose
person pressed "Notify me" on the status page; Web Push (RFC 8030) with VAPID (RFC 8292)
and message encryption (RFC 8291) through `pywebpush`. The page's side (the button, the
service worker, the web app manifest) is the web plugin's; this one takes the subscriptions
(`POST /push/subscriptions`) and delivers.

`WebPushAdapter(ctx)` implements `bot.ports.Adapter`. See docs/webpush.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.ports import lazy_exports

from ._plugin import plugin
from ._settings import NAME, SUBSCRIBE_PATH, WebPushSection, WebPushSettings

if TYPE_CHECKING:
    from ._adapter import WebPushAdapter
    from ._render import payload

_LAZY = {"WebPushAdapter": "adapters.webpush._adapter", "payload": "adapters.webpush._render"}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "NAME",
    "SUBSCRIBE_PATH",
    "WebPushAdapter",
    "WebPushSection",
    "WebPushSettings",
    "payload",
    "plugin",
]
