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

if TYPE_CHECKING:
    from ._adapter import WebPushAdapter
    from ._render import payload
    from ._settings import NAME, SUBSCRIBE_PATH, WebPushSection, WebPushSettings

_LAZY = {
    "NAME": "adapters.webpush._settings",
    "SUBSCRIBE_PATH": "adapters.webpush._settings",
    "WebPushSection": "adapters.webpush._settings",
    "WebPushSettings": "adapters.webpush._settings",
    "WebPushAdapter": "adapters.webpush._adapter",
    "payload": "adapters.webpush._render",
}

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
