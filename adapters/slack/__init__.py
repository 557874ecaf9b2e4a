"""The Slack plugin: the `/strike` slash command, the admin forms and delivery, through
slack-bolt.

    adapter = SlackAdapter(ctx)   # reads SLACK_* from its PluginSettings
    adapter.mount(app)            # HTTP mode: POST /slack/events
    await adapter.start() ... await adapter.stop()

`plugin` is the declaration the core finds through the `strikebot.adapters` entry point.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from adapters.slack._plugin import plugin
from adapters.slack._settings import EVENTS_PATH, LIMITS, NAME, SlackSettings

if TYPE_CHECKING:
    from adapters.slack._adapter import SlackAdapter, api_base, connection_mode
    from adapters.slack._blocks import escape, render

# The platform's library loads only when something here needs it (the plugin's
# declaration does not), so `strikebot --help` and the other commands start quickly.
_LAZY = {
    "SlackAdapter": "adapters.slack._adapter",
    "api_base": "adapters.slack._adapter",
    "connection_mode": "adapters.slack._adapter",
    "escape": "adapters.slack._blocks",
    "render": "adapters.slack._blocks",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
