"""The webhooks plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

from adapters.webhooks._adapter import NAME, WebhookAdapter
from adapters.webhooks.cli import register
from bot.ports import Plugin

plugin = Plugin(
    name=NAME,
    title="Webhooks",
    create=WebhookAdapter,
    # Endpoints are added with `strikebot webhooks add` (or the admin API), not by address.
    delivers=False,
    events=True,
    cli=register,
    docs="docs/webhooks.md",
)
