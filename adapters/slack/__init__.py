"""The Slack plugin: the `/strike` slash command, the admin forms and delivery, through
slack-bolt.

    adapter = SlackAdapter(ctx)   # reads SLACK_* from its PluginSettings
    adapter.mount(app)            # HTTP mode: POST /slack/events
    await adapter.start() ... await adapter.stop()

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.slack._plugin import plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.slack._adapter import SlackAdapter, api_base, connection_mode
    from adapters.slack._blocks import escape, render
    from adapters.slack._settings import EVENTS_PATH, LIMITS, NAME, SlackSettings

# Loaded when first used, with the platform's library (see `lazy_exports`).
_LAZY = {
    "EVENTS_PATH": "adapters.slack._settings",
    "LIMITS": "adapters.slack._settings",
    "NAME": "adapters.slack._settings",
    "SlackSettings": "adapters.slack._settings",
    "SlackAdapter": "adapters.slack._adapter",
    "api_base": "adapters.slack._adapter",
    "connection_mode": "adapters.slack._adapter",
    "escape": "adapters.slack._blocks",
    "render": "adapters.slack._blocks",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "EVENTS_PATH",
    "LIMITS",
    "NAME",
    "SlackAdapter",
    "SlackSettings",
    "api_base",
    "connection_mode",
    "escape",
    "plugin",
    "render",
]
