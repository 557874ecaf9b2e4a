"""The browser-notifications plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from collections.abc import Sequence

from bot.ports import Check, Contact, Cost, DoctorRequest, Plugin, PluginContext

from ._settings import NAME, WebPushDelivery, WebPushSection, WebPushSettings
from .cli import register


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
    contact=Contact.PUSH,
    cost=Cost(units="webpush.units"),
    cli=register,
    doctor=doctor,
    docs="docs/webpush.md",
)
