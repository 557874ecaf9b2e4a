"""The webhooks plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.webhooks._settings import NAME
from bot.ports import Command, Plugin

if TYPE_CHECKING:
    from bot.ports import PluginContext


def create(ctx: PluginContext) -> object:
    """The adapter, importing aiohttp only when the plugin runs."""
    from adapters.webhooks._adapter import WebhookAdapter

    return WebhookAdapter(ctx)


plugin = Plugin(
    name=NAME,
    title="Webhooks",
    create=create,
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
