"""The Telegram plugin's declaration: what the core needs to know about Telegram, said once.

Its parts are named by address: they load, with the platform's library,
only when the core uses them."""

from __future__ import annotations

from bot.ports import Plugin

plugin = Plugin(
    name="telegram",
    title="Telegram",
    create="adapters.telegram._adapter:TelegramAdapter",
    settings="adapters.telegram._settings:TelegramSettings",
    section="adapters.telegram._settings:TelegramSection",
    admins="adapters.telegram._settings:TelegramAdmins",
    delivery="adapters.telegram._settings:TelegramDelivery",
    pacing="adapters.telegram._settings:pacing",
    limits="adapters.telegram._settings:LIMITS",
    # @username (5-32 letters, digits, _) notifies that person. Not inside an e-mail address,
    # nor in Slack's <@U123> (Slack's own pattern covers it; the renderer catches every @ anyway).
    mentions=(r"(?<![\w.@<\u200b])@(?=[A-Za-z][A-Za-z0-9_]{4,31}\b)",),
    address_example="telegram:-1001234567890/-1001234567890",
    docs="docs/telegram.md",
    doctor="adapters.telegram._doctor:doctor",
    preview="adapters.telegram._preview:preview",
)
