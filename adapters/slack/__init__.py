"""The Slack plugin: the `/strike` slash command, the admin forms and delivery, through
slack-bolt.

    adapter = SlackAdapter(ctx)   # reads SLACK_* from its PluginSettings
    adapter.mount(app)            # HTTP mode: POST /slack/events
    await adapter.start() ... await adapter.stop()

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
"""

from __future__ import annotations

from adapters.slack._adapter import SlackAdapter, api_base, connection_mode
from adapters.slack._blocks import escape, render
from adapters.slack._plugin import plugin
from adapters.slack._settings import EVENTS_PATH, LIMITS, NAME, SlackSettings

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
