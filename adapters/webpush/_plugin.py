"""The browser-notifications plugin's declaration: what the core needs to know, said once.

Its parts are named by address: they load, with pywebpush, only when the
core uses them."""

from __future__ import annotations

from bot.ports import Command, Contact, Cost, Plugin

plugin = Plugin(
    name="webpush",
    title="Browser notifications (Web Push)",
    create="adapters.webpush._adapter:WebPushAdapter",
    settings="adapters.webpush._settings:WebPushSettings",
    section="adapters.webpush._settings:WebPushSection",
    delivery="adapters.webpush._settings:WebPushDelivery",
    pacing="adapters.webpush._settings:pacing",
    contact=Contact.PUSH,
    cost=Cost(units="webpush.units"),
    commands=(
        Command("webpush", "browser notifications (Web Push)", "adapters.webpush.cli:register"),
    ),
    doctor="adapters.webpush._doctor:doctor",
    docs="docs/webpush.md",
)
