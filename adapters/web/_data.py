"""What the status page, feeds and status API show, read at one moment.

The queries live in the store (`Reads.visible_updates`, `Reads.revision_notes`, ...), which
applies the embargo rule: public views never see pending, scheduled or never-published
updates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.ports import Demand, PluginContext, RevisionNote, Update

__all__ = ["RevisionNote", "Snapshot", "load_snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the status page, feeds and status API show, read at one moment."""

    now: datetime
    current: Update | None
    timeline: tuple[Update, ...]
    demands: tuple[Demand, ...]
    notes: dict[int, RevisionNote]
    more: bool  # more visible updates than the timeline shows
    places: int = 0  # sites and groups (the page links the sites index when there are)

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


async def load_snapshot(ctx: PluginContext, now: datetime, *, limit: int = 20) -> Snapshot:
    async with ctx.reads() as tx:
        current = await tx.latest_update(now)
        timeline = await tx.visible_updates(now, limit=limit + 1)
        more = len(timeline) > limit
        timeline = await tx.with_revisions(timeline[:limit])
        demands = await tx.list_demands(with_history=False)
        notes = await tx.revision_notes([u.id for u in timeline if u.revision > 1])
        places = await tx.place_count()
    return Snapshot(now, current, tuple(timeline), tuple(demands), notes, more, places)
