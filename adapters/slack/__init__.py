"""Slack: the `/strike` slash command, the admin forms and delivery, through slack-bolt.

adapter = SlackAdapter(runtime, commands)   # reads SLACK_* from runtime.settings
runtime.web_mounts.append(adapter.mount)    # HTTP mode: POST /slack/events
await adapter.start() ... await adapter.stop()
"""

from __future__ import annotations

from adapters.slack._adapter import EVENTS_PATH, SlackAdapter, api_base, connection_mode
from adapters.slack._blocks import escape, render

__all__ = ["EVENTS_PATH", "SlackAdapter", "api_base", "connection_mode", "escape", "render"]
