"""What an admin wrote in a Slack form, kept between "Preview" and "Confirm".

A modal's `private_metadata` holds at most 3000 characters, less than an update in two
languages, so the draft lives in the store (`Tx.save_draft`) under a random token and the
modal carries only the token. Confirming *takes* the draft (read and delete in one
statement), so a double click, a retried request or a second instance can never post it
twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.ports import Store

KIND = "slack"


async def save_draft(store: Store, draft: Mapping[str, Any], now: datetime) -> str:
    async with store.write() as tx:
        return await tx.save_draft(KIND, {"saved_at": now.isoformat(), **draft}, now)


async def take_draft(store: Store, token: str) -> dict[str, Any] | None:
    """The draft, removed from the store; None if it was already taken or never existed."""
    async with store.write() as tx:
        return await tx.take_draft(KIND, token)


async def forget_drafts(store: Store, before: datetime) -> int:
    """Drop drafts saved before `before` (forms opened and abandoned). Returns how many."""
    async with store.write() as tx:
        return await tx.forget_drafts(before)
