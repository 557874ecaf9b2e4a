"""What the web surface reads from the store, in one read transaction per view.

Public views only ever see *visible* updates: published with its embargo passed, or
retracted after it was published. Pending, scheduled and never-published updates stay
hidden (an embargoed update must not leak through the page, a feed or the API).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, literal, or_, select

from bot.models import Demand, Update, UpdateState
from bot.store import Store, Tx
from bot.store import schema as t
from bot.store.repo import revision_from_row, update_from_row

Fingerprint = tuple[Any, ...]


def _visible(now: datetime) -> Any:
    u = t.updates.c
    return and_(
        u.state.in_([str(UpdateState.PUBLISHED), str(UpdateState.RETRACTED)]),
        u.published_at.is_not(None),
        u.published_at <= now,
    )


async def fingerprint(store: Store, now: datetime) -> Fingerprint:
    """A value that changes whenever anything a public view shows changes.

    Posts (count), edits (sum of revisions), approvals and embargoes passing (visible
    count), retractions (retracted count), demand changes (latest change, event count).
    One statement of scalar subqueries: cheap on both backends.
    """
    u = t.updates.c
    query = select(
        select(func.count()).select_from(t.updates).scalar_subquery(),
        select(func.coalesce(func.sum(u.revision), 0)).scalar_subquery(),
        select(func.count()).select_from(t.updates).where(_visible(now)).scalar_subquery(),
        select(func.count())
        .select_from(t.updates)
        .where(u.state == str(UpdateState.RETRACTED))
        .scalar_subquery(),
        select(func.max(t.demands.c.updated_at)).scalar_subquery(),
        select(func.count()).select_from(t.demand_events).scalar_subquery(),
        select(func.count()).select_from(t.demands).scalar_subquery(),
    )
    async with store.read() as tx:
        row = (await tx.conn.execute(query)).one()
    return tuple(row)


@dataclass(frozen=True, slots=True)
class RevisionNote:
    """Which revisions were corrections (from the audit log), for honest display."""

    corrections: frozenset[int] = frozenset()  # revision numbers created by a correction
    reasons: dict[int, str] = field(default_factory=dict)  # new revision number -> reason


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the status page, feeds and status API show, read at one moment."""

    now: datetime
    current: Update | None
    timeline: tuple[Update, ...]
    demands: tuple[Demand, ...]
    notes: dict[int, RevisionNote]
    total_visible: int

    @property
    def last_updated(self) -> datetime | None:
        """The latest moment anything shown changed."""
        moments: list[datetime] = []
        for update in self.timeline[:1]:
            moments.append(update.effective_at)
        for update in self.timeline:
            if update.retracted_at is not None:
                moments.append(update.retracted_at)
        moments.extend(d.updated_at for d in self.demands)
        moments.extend(r.created_at for u in self.timeline for r in u.revisions[-1:] if u.revisions)
        return max(moments) if moments else None


async def load_snapshot(store: Store, now: datetime, *, limit: int = 20) -> Snapshot:
    async with store.read() as tx:
        current = await tx.latest_update(now)
        timeline = await visible_updates(tx, now, limit=limit)
        timeline = await with_revisions(tx, timeline, now)
        demands = await tx.list_demands(with_history=False)
        notes = await revision_notes(tx, [u.id for u in timeline if u.revision > 1])
        total = await count_visible(tx, now)
    return Snapshot(now, current, tuple(timeline), tuple(demands), notes, total)


async def count_visible(tx: Tx, now: datetime) -> int:
    query = select(func.count()).select_from(t.updates).where(_visible(now))
    return int(await tx.conn.scalar(query) or 0)


async def visible_updates(
    tx: Tx, now: datetime, *, limit: int, after: int | None = None
) -> list[Update]:
    """Newest first (by publication, then id). `after`: continue past that update's place."""
    u = t.updates.c
    query = select(t.updates).where(_visible(now))
    if after is not None:
        anchor = (
            await tx.conn.execute(select(u.published_at, u.id).where(u.id == after, _visible(now)))
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
    return [update_from_row(r, now) for r in (await tx.conn.execute(query)).all()]


async def visible_update(tx: Tx, update_id: int, now: datetime) -> Update | None:
    """One update with its revisions, or None when it does not exist or is not public."""
    exists = await tx.conn.scalar(
        select(literal(1)).select_from(t.updates).where(t.updates.c.id == update_id, _visible(now))
    )
    if exists is None:
        return None
    return await tx.get_update(update_id, now)


async def with_revisions(tx: Tx, updates: Sequence[Update], now: datetime) -> list[Update]:
    """The same updates with their revision history loaded (one query for all edited ones)."""
    edited = [u.id for u in updates if u.revision > 1]
    if not edited:
        return list(updates)
    rows = await tx.conn.execute(
        select(t.update_revisions)
        .where(t.update_revisions.c.update_id.in_(edited))
        .order_by(t.update_revisions.c.update_id, t.update_revisions.c.number)
    )
    by_update: dict[int, list[Any]] = {}
    for row in rows:
        by_update.setdefault(row.update_id, []).append(revision_from_row(row))
    return [replace(u, revisions=tuple(by_update.get(u.id, ()))) for u in updates]


async def revision_notes(tx: Tx, update_ids: Sequence[int]) -> dict[int, RevisionNote]:
    """For each edited update: which of its revisions were published as corrections."""
    if not update_ids:
        return {}
    a = t.audit_log.c
    rows = await tx.conn.execute(
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


async def scheduled_events(tx: Tx, now: datetime) -> list[Update]:
    """Visible updates that name a time for their next step (for the calendar), oldest first."""
    u = t.updates.c
    query = (
        select(t.updates)
        .where(_visible(now), u.next_step_at.is_not(None))
        .order_by(u.next_step_at, u.id)
    )
    return [update_from_row(r, now) for r in (await tx.conn.execute(query)).all()]


__all__ = [
    "Fingerprint",
    "RevisionNote",
    "Snapshot",
    "count_visible",
    "fingerprint",
    "load_snapshot",
    "revision_notes",
    "scheduled_events",
    "visible_update",
    "visible_updates",
    "with_revisions",
]
