"""What the public surfaces read (the page, feeds, calendar, public API): only what the
embargo rule (`bot.store.visibility`) lets the public see. A mixin of `Tx`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.models import Revision, Update, UpdateState
from bot.store import schema as t
from bot.store.codecs import revision_from_row, update_from_row
from bot.store.sites import for_place
from bot.store.visibility import visible

CALENDAR_LIMIT = 1000  # events in one calendar feed
CALENDAR_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # no next step is older (admin refuses it)


@dataclass(frozen=True, slots=True)
class RevisionNote:
    """Which revisions were corrections (from the audit log), for honest display."""

    corrections: frozenset[int] = frozenset()  # revision numbers created by a correction
    reasons: dict[int, str] = field(default_factory=dict)  # new revision number -> reason


class PublicReads:
    """Reads for public views; every one applies the embargo rule."""

    conn: AsyncConnection

    async def next_embargo(self, now: datetime) -> datetime | None:
        """When the next update under embargo becomes public (None: none waiting).

        Until then, what public views show changes only with the public version; one
        indexed read (the first row of `ix_updates_state_published` past `now`)."""
        u = t.updates.c
        query = (
            select(u.published_at)
            .where(
                u.state.in_([str(UpdateState.PUBLISHED), str(UpdateState.RETRACTED)]),
                u.published_at > now,
            )
            .order_by(u.published_at)
            .limit(1)
        )
        found: datetime | None = await self.conn.scalar(query)
        return found

    async def visible_updates(
        self,
        now: datetime,
        *,
        limit: int,
        after: int | None = None,
        place: Sequence[str] | None = None,
    ) -> list[Update]:
        """Newest first (by publication, then id). `after`: continue past that update.
        `place`: only those a site's or a group's readers see (`SiteStore.place_codes`)."""
        u = t.updates.c
        query = select(t.updates).where(visible(now))
        if place is not None:
            query = query.where(for_place(place))
        if after is not None:
            anchor = (
                await self.conn.execute(
                    select(u.published_at, u.id).where(u.id == after, visible(now))
                )
            ).first()
            if anchor is None:
                return []
            query = query.where(
                or_(
                    u.published_at < anchor.published_at,
                    and_(u.published_at == anchor.published_at, u.id < anchor.id),
                )
            )
        query = query.order_by(u.published_at.desc(), u.id.desc()).limit(limit)
        return [update_from_row(r, now) for r in (await self.conn.execute(query)).all()]

    async def visible_count(self, now: datetime) -> int:
        """How many updates the public sees (one count over the state/publication index)."""
        query = select(func.count()).select_from(t.updates).where(visible(now))
        return int(await self.conn.scalar(query) or 0)

    async def newer_visible(self, update_id: int, now: datetime) -> int | None:
        """How many visible updates come before `update_id` newest first (0: it is the
        newest); None when it is not visible. Reads the newer ones only."""
        u = t.updates.c
        anchor = (
            await self.conn.execute(
                select(u.published_at, u.id).where(u.id == update_id, visible(now))
            )
        ).first()
        if anchor is None:
            return None
        # Two counts, each a range of the publication index (an OR of the two would not be).
        later = select(func.count()).where(visible(now), u.published_at > anchor.published_at)
        same = select(func.count()).where(
            visible(now), u.published_at == anchor.published_at, u.id > anchor.id
        )
        return int(await self.conn.scalar(later.select_from(t.updates)) or 0) + int(
            await self.conn.scalar(same.select_from(t.updates)) or 0
        )

    async def visible_id_at(self, newer: int, now: datetime) -> int | None:
        """The id of the visible update with `newer` updates before it, newest first."""
        u = t.updates.c
        query = (
            select(u.id)
            .where(visible(now))
            .order_by(u.published_at.desc(), u.id.desc())
            .offset(newer)
            .limit(1)
        )
        found: int | None = await self.conn.scalar(query)
        return found

    async def became_visible(self, after: datetime, now: datetime) -> list[int]:
        """Updates whose embargo passed after `after` (and by `now`): public with no write."""
        query = select(t.updates.c.id).where(visible(now), t.updates.c.published_at > after)
        return list(await self.conn.scalars(query))

    async def public_changes_since(self, version: int) -> tuple[frozenset[int], bool]:
        """The updates that public versions after `version` touched, and whether one of
        them touched everything (an import): `public_changes`."""
        c = t.public_changes.c
        found = await self.conn.scalars(select(c.update_id).where(c.version > version).distinct())
        ids = list(found)
        return frozenset(i for i in ids if i is not None), None in ids

    async def visible_update(self, update_id: int, now: datetime) -> Update | None:
        """One update with its revisions, or None when it does not exist or is not public."""
        row = (
            await self.conn.execute(
                select(t.updates).where(t.updates.c.id == update_id, visible(now))
            )
        ).first()
        if row is None:
            return None
        (found,) = await self.with_revisions([update_from_row(row, now)], force=True)
        return found

    async def with_revisions(
        self, updates: Sequence[Update], *, force: bool = False
    ) -> list[Update]:
        """The same updates with their revision history (one query for all edited ones)."""
        edited = [u.id for u in updates if force or u.revision > 1]
        if not edited:
            return list(updates)
        rows = await self.conn.execute(
            select(t.update_revisions)
            .where(t.update_revisions.c.update_id.in_(edited))
            .order_by(t.update_revisions.c.update_id, t.update_revisions.c.number)
        )
        by_update: dict[int, list[Revision]] = {}
        for row in rows:
            by_update.setdefault(int(row.update_id), []).append(revision_from_row(row))
        return [replace(u, revisions=tuple(by_update.get(u.id, ()))) for u in updates]

    async def revision_notes(self, update_ids: Sequence[int]) -> dict[int, RevisionNote]:
        """For each edited update: which of its revisions were published as corrections."""
        if not update_ids:
            return {}
        a = t.audit_log.c
        rows = await self.conn.execute(
            select(a.target, a.action, a.after).where(
                a.target.in_([f"update:{i}" for i in update_ids]),
                a.action.in_(["update.correct", "update.edit"]),
            )
        )
        corrections: dict[int, set[int]] = {}
        reasons: dict[int, dict[int, str]] = {}
        for target, action, after in rows:
            update_id = int(str(target).split(":", 1)[1])
            if not isinstance(after, dict) or not isinstance(after.get("revision"), int):
                continue
            number = int(after["revision"])
            reasons.setdefault(update_id, {})[number] = str(after.get("reason", ""))
            if action == "update.correct":
                corrections.setdefault(update_id, set()).add(number)
        return {
            i: RevisionNote(frozenset(corrections.get(i, ())), reasons.get(i, {}))
            for i in set(corrections) | set(reasons)
        }

    async def scheduled_events(
        self,
        now: datetime,
        *,
        limit: int = CALENDAR_LIMIT,
        place: Sequence[str] | None = None,
    ) -> list[Update]:
        """Visible updates naming a time for their next step (the calendar): the `limit`
        latest by that time (read backwards along `ix_updates_next_step_at`), oldest first.
        `place`: only those a site's or a group's readers get (`for_place`)."""
        u = t.updates.c
        query = (
            select(t.updates)
            # A range (not IS NOT NULL) lets the planner walk the index in order.
            .where(visible(now), u.next_step_at >= CALENDAR_EPOCH)
            .order_by(u.next_step_at.desc(), u.id.desc())
            .limit(limit)
        )
        if place is not None:
            query = query.where(for_place(place))
        rows = (await self.conn.execute(query)).all()
        return [update_from_row(r, now) for r in reversed(rows)]


__all__ = ["PublicReads", "RevisionNote"]
