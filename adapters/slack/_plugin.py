"""The Slack plugin's declaration: what the core needs to know about Slack, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from adapters.slack._preview import preview
from adapters.slack._settings import (
    LIMITS,
    MENTIONS,
    NAME,
    SlackAdmins,
    SlackDelivery,
    SlackSection,
    SlackSettings,
    pacing,
)
from bot.ports import Check, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext


# The adapter and its self-check import the platform's library: only when they are used.
def create(ctx: PluginContext) -> object:
    from adapters.slack._adapter import SlackAdapter

    return SlackAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    from adapters.slack._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="Slack",
    create=create,
    settings=SlackSettings,
    section=SlackSection,
    admins=SlackAdmins,
    delivery=SlackDelivery,
    pacing=pacing,
    limits=LIMITS,
    mentions=MENTIONS,
    address_example="slack:T0001/C0001",
    docs="docs/platforms.md#slack",
    doctor=doctor,
    preview=preview,
)
