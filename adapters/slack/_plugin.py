"""The Slack plugin's declaration: what the core needs to know about Slack, said once."""

from __future__ import annotations

from adapters.slack._adapter import SlackAdapter
from adapters.slack._doctor import doctor
from adapters.slack._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    SlackAdmins,
    SlackDelivery,
    SlackSection,
    SlackSettings,
)
from bot.ports import Plugin

plugin = Plugin(
    name=NAME,
    title="Slack",
    create=SlackAdapter,
    settings=SlackSettings,
    section=SlackSection,
    admins=SlackAdmins,
    delivery=SlackDelivery,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="slack:T0001/C0001",
    docs="docs/platforms.md#slack",
    doctor=doctor,
)
