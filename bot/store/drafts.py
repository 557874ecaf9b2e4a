"""Drafts: what an admin wrote in a form, kept between "Preview" and "Confirm".

A platform's form can carry only a short token (a Slack modal's `private_metadata`, a
Discord button's `custom_id`), and the confirmation may land on another instance, so the
draft lives in the store under a random token. Confirming *takes* it (read and delete in
one statement), so a double click, a retried request or a second instance can never post it
twice. A mixin of `Tx`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import schema as t
from bot.store.engine import dialect_insert

TOKEN_BYTES = 12  # 16 URL-safe characters


class DraftStore:
    conn: AsyncConnection

    async def save_draft(self, kind: str, payload: Mapping[str, Any], now: datetime) -> str:
        """Keep `payload` (JSON-able) and return the token that takes it back."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        await self.conn.execute(
            insert(t.drafts).values(token=token, kind=kind, payload=dict(payload), saved_at=now)
        )
        return token

    async def keep_draft(
        self, kind: str, token: str, payload: Mapping[str, Any], now: datetime
    ) -> None:
        """Keep `payload` under a token the caller chose (a chat's form in progress),
        replacing what was kept there."""
        await self.conn.execute(delete(t.drafts).where(t.drafts.c.token == token))
        await self.conn.execute(
            insert(t.drafts).values(token=token, kind=kind, payload=dict(payload), saved_at=now)
        )

    async def claim_draft(
        self, kind: str, token: str, payload: Mapping[str, Any], now: datetime
    ) -> bool:
        """Keep `payload` under `token` unless a draft already has it (a short code chosen at
        random: the caller picks another). True when kept."""
        ins = dialect_insert(self.conn.dialect.name, t.drafts)
        result = await self.conn.execute(
            ins.values(
                token=token, kind=kind, payload=dict(payload), saved_at=now
            ).on_conflict_do_nothing(index_elements=["token"])
        )
        return bool(result.rowcount)

    async def take_draft(self, kind: str, token: str) -> dict[str, Any] | None:
        """The draft, removed; None if it was already taken, expired or never existed."""
        if not token or len(token) > 32:
            return None
        d = t.drafts.c
        row = (
            await self.conn.execute(
                delete(t.drafts).where(d.token == token, d.kind == kind).returning(d.payload)
            )
        ).first()
        return None if row is None else dict(row.payload)

    async def forget_drafts(self, before: datetime, *, kind: str | None = None) -> int:
        """Drop drafts saved before `before` (forms opened and abandoned), of one `kind` or
        all. Returns how many."""
        query = delete(t.drafts).where(t.drafts.c.saved_at < before)
        if kind is not None:
            query = query.where(t.drafts.c.kind == kind)
        result = await self.conn.execute(query)
        return int(result.rowcount or 0)
