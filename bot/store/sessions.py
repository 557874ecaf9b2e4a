"""Who is signed in to the web desk: sign-in links and sessions, by their tokens' SHA-256.

`bot.people.sign_in` is the only writer; nothing here ever sees a token itself. A mixin of
`Tx`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.store import schema as t


@dataclass(frozen=True, slots=True)
class DeskSession:
    """One open session: whose (their e-mail address), since when, last seen, and when it
    ends whatever happens."""

    person: str
    created_at: datetime
    seen_at: datetime
    expires_at: datetime


class SessionStore:
    conn: AsyncConnection

    async def insert_desk_link(
        self, digest: str, person: str, now: datetime, expires_at: datetime
    ) -> None:
        await self.conn.execute(
            insert(t.desk_links).values(
                digest=digest, person=person, created_at=now, expires_at=expires_at
            )
        )

    async def desk_links_since(self, person: str, since: datetime) -> int:
        """How many links went to `person` since `since` (the per-address limit)."""
        link = t.desk_links.c
        query = select(func.count()).where(link.person == person, link.created_at >= since)
        return int(await self.conn.scalar(query) or 0)

    async def use_desk_link(self, digest: str, now: datetime) -> str | None:
        """Whom the link signs in, marking it used in the same statement; None when it is
        unknown, used or lapsed."""
        link = t.desk_links.c
        person = await self.conn.scalar(
            update(t.desk_links)
            .where(link.digest == digest, link.used_at.is_(None), link.expires_at > now)
            .values(used_at=now)
            .returning(link.person)
        )
        return None if person is None else str(person)

    async def insert_desk_session(
        self, digest: str, person: str, now: datetime, expires_at: datetime
    ) -> None:
        await self.conn.execute(
            insert(t.desk_sessions).values(
                digest=digest, person=person, created_at=now, seen_at=now, expires_at=expires_at
            )
        )

    async def desk_session(self, digest: str) -> DeskSession | None:
        s = t.desk_sessions.c
        row = (
            await self.conn.execute(
                select(s.person, s.created_at, s.seen_at, s.expires_at).where(s.digest == digest)
            )
        ).first()
        return None if row is None else DeskSession(*row)

    async def see_desk_session(self, digest: str, now: datetime) -> None:
        s = t.desk_sessions.c
        await self.conn.execute(
            update(t.desk_sessions).where(s.digest == digest).values(seen_at=now)
        )

    async def end_desk_session(self, digest: str) -> str | None:
        """End one session; whose it was, or None when there was none."""
        s = t.desk_sessions.c
        person = await self.conn.scalar(
            delete(t.desk_sessions).where(s.digest == digest).returning(s.person)
        )
        return None if person is None else str(person)

    async def end_desk_sessions(self, person: str) -> int:
        """End every session of `person`; how many there were."""
        result = await self.conn.execute(
            delete(t.desk_sessions).where(t.desk_sessions.c.person == person)
        )
        return int(result.rowcount or 0)

    async def forget_desk_access(self, *, links_before: datetime, idle_before: datetime,
                                 now: datetime) -> int:  # fmt: skip
        """Drop links made before `links_before`, and sessions unused since `idle_before`
        or past their end. Returns how many rows went."""
        s = t.desk_sessions.c
        links = await self.conn.execute(
            delete(t.desk_links).where(t.desk_links.c.created_at < links_before)
        )
        sessions = await self.conn.execute(
            delete(t.desk_sessions).where(or_(s.seen_at < idle_before, s.expires_at <= now))
        )
        return int(links.rowcount or 0) + int(sessions.rowcount or 0)
