"""Stale translations: which language's wording of a text was written before another
language's was edited. A mixin of `Tx`; `bot.editorial.translations` decides when to mark
and clear."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import schema as t


@dataclass(frozen=True, slots=True)
class StaleText:
    target: str  # "update:12", "demand:pay"
    language: str
    since: datetime
    edited: str  # the language(s) edited, comma-separated
    editor: str


class TranslationStore:
    conn: AsyncConnection

    async def mark_stale(
        self, target: str, languages: Iterable[str], edited: str, editor: str, now: datetime
    ) -> None:
        """`languages`' texts of `target` are stale since `now` (kept from the first edit
        if already stale)."""
        for language in languages:
            found = await self.conn.execute(
                update(t.stale_texts)
                .where(and_(t.stale_texts.c.target == target, t.stale_texts.c.language == language))
                .values(edited=edited[:80], editor=editor[:200])
            )
            if not found.rowcount:
                await self.conn.execute(
                    insert(t.stale_texts).values(
                        target=target,
                        language=language,
                        since=now,
                        edited=edited[:80],
                        editor=editor[:200],
                    )
                )

    async def clear_stale(self, target: str, languages: Iterable[str]) -> int:
        """`languages`' texts of `target` are current again; how many were stale."""
        wanted = list(languages)
        if not wanted:
            return 0
        done = await self.conn.execute(
            delete(t.stale_texts).where(
                and_(t.stale_texts.c.target == target, t.stale_texts.c.language.in_(wanted))
            )
        )
        return int(done.rowcount or 0)

    async def stale_texts(self, target: str | None = None) -> list[StaleText]:
        query = select(t.stale_texts).order_by(t.stale_texts.c.target, t.stale_texts.c.language)
        if target is not None:
            query = query.where(t.stale_texts.c.target == target)
        rows = (await self.conn.execute(query)).mappings().all()
        return [
            StaleText(r["target"], r["language"], r["since"], r["edited"], r["editor"])
            for r in rows
        ]
