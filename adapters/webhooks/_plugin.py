"""The webhooks plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from bot.ports import Command, Plugin

plugin = Plugin(
    name="webhooks",
    title="Webhooks",
    create="adapters.webhooks._adapter:WebhookAdapter",  # with aiohttp, when the plugin runs
    # Endpoints are added with `strikebot webhooks add` (or the admin API), not by address.
    delivers=False,
    events=True,
    commands=(
        Command(
            "webhooks",
            "signed webhooks: add, list, test, enable, remove the receivers of events",
            "adapters.webhooks.cli:register",
        ),
    ),
    docs="docs/webhooks.md",
)
