"""What an admin wrote in a Slack form, kept between "Preview" and "Confirm".

A modal's `private_metadata` holds at most 3000 characters, less than an update in two
languages, so the draft lives in the store's `meta` table under a random key and the modal
carries only the key. Confirming *takes* the draft (read and delete in one transaction), so
a double click, a retried request or a second instance can never post it twice.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, select

from bot.store import Store
from bot.store import schema as t

PREFIX = "slack-draft:"


async def save_draft(store: Store, draft: Mapping[str, Any], now: datetime) -> str:
    token = secrets.token_urlsafe(12)
    async with store.write() as tx:
        await tx.set_meta(PREFIX + token, json.dumps({"saved_at": now.isoformat(), **draft}))
    return token


async def take_draft(store: Store, token: str) -> dict[str, Any] | None:
    """The draft, removed from the store; None if it was already taken or never existed."""
    if not token:
        return None
    key = PREFIX + token
    async with store.write() as tx:
        result = await tx.conn.execute(
            delete(t.meta).where(t.meta.c.key == key).returning(t.meta.c.value)
        )
        row = result.first()
    if row is None:
        return None
    draft: dict[str, Any] = json.loads(row[0])
    return draft


async def forget_drafts(store: Store, before: datetime) -> int:
    """Drop drafts saved before `before` (forms opened and abandoned). Returns how many."""
    async with store.write() as tx:
        rows = (
            await tx.conn.execute(
                select(t.meta.c.key, t.meta.c.value).where(t.meta.c.key.startswith(PREFIX))
            )
        ).all()
        stale = [key for key, value in rows if _saved_at(value) < before]
        if stale:
            await tx.conn.execute(delete(t.meta).where(t.meta.c.key.in_(stale)))
    return len(stale)


def _saved_at(value: str) -> datetime:
    try:
        return datetime.fromisoformat(json.loads(value)["saved_at"])
    except (ValueError, KeyError, TypeError):
        return datetime.min.replace(tzinfo=UTC)
