"""The browser-notifications plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.ports import Check, Command, Contact, Cost, DoctorRequest, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext

from ._settings import NAME, WebPushDelivery, WebPushSection, WebPushSettings, pacing


def create(ctx: PluginContext) -> object:
    """The adapter, importing pywebpush only when the platform is on."""
    from ._adapter import WebPushAdapter

    return WebPushAdapter(ctx)


async def doctor(request: DoctorRequest) -> Sequence[Check]:
    from ._doctor import doctor as check

    return await check(request)


plugin = Plugin(
    name=NAME,
    title="Browser notifications (Web Push)",
    create=create,
    settings=WebPushSettings,
    section=WebPushSection,
    delivery=WebPushDelivery,
    pacing=pacing,
    contact=Contact.PUSH,
    cost=Cost(units="webpush.units"),
    commands=(
        Command("webpush", "browser notifications (Web Push)", "adapters.webpush.cli:register"),
    ),
    doctor=doctor,
    docs="docs/webpush.md",
)
