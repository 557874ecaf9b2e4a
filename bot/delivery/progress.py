"""How far an update has gone: per platform and action, how many copies were delivered, are
waiting and failed, and why the failed ones failed, for the web desk to watch.

    shown = await progress(store, 12)
    shown.rows       # (platform, action) -> delivered / waiting / failed
    shown.failures   # the dead copies with their reason, to retry (`Admin.retry`)

Two reads over the deliveries' `update_id` index: one grouped count, and the dead copies
(at most `FAILURES_SHOWN`). A failure names its channel; a person reached one by one
(e-mail, text) is never named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from bot.models import DeliveryAction, DeliveryState
from bot.plugins import Plugins
from bot.store import Store
from bot.store import schema as t

FAILURES_SHOWN = 50
# What an update's own copies are (a briefing or a notice names no update).
UPDATE_ACTIONS = (
    DeliveryAction.POST,
    DeliveryAction.EDIT,
    DeliveryAction.CORRECTION,
    DeliveryAction.RETRACT,
)


@dataclass(frozen=True, slots=True)
class Row:
    """One platform's copies of one action (the post, its edits, its retraction)."""

    platform: str
    action: DeliveryAction
    delivered: int = 0
    waiting: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.delivered + self.waiting + self.failed


@dataclass(frozen=True, slots=True)
class Failure:
    """A copy that could not be delivered: where (a channel's label or address; "" for a
    person), why, after how many tries."""

    delivery_id: str
    platform: str
    action: DeliveryAction
    where: str
    reason: str
    attempts: int
    at: datetime


@dataclass(frozen=True, slots=True)
class Progress:
    update_id: int
    rows: tuple[Row, ...]
    failures: tuple[Failure, ...]
    failed: int  # every failed copy, beyond those listed too

    @property
    def waiting(self) -> int:
        return sum(r.waiting for r in self.rows)

    @property
    def delivered(self) -> int:
        return sum(r.delivered for r in self.rows)


async def progress(store: Store, update_id: int, plugins: Plugins | None = None) -> Progress:
    """Where `update_id`'s copies stand now. `plugins` says which platforms reach people
    one by one (their failures name nobody)."""
    d = t.deliveries.c
    s = t.subscriptions.c
    actions = [str(a) for a in UPDATE_ACTIONS]
    counted = (
        select(d.platform, d.action, d.state, func.count())
        .where(d.update_id == update_id, d.action.in_(actions))
        .group_by(d.platform, d.action, d.state)
    )
    dead = (
        select(
            d.id,
            d.platform,
            d.action,
            d.last_error,
            d.attempts,
            d.created_at,
            s.label,
            s.workspace,
            s.channel,
        )
        .join(t.subscriptions, s.id == d.subscription_id)
        .where(d.update_id == update_id, d.state == str(DeliveryState.DEAD))
        .order_by(d.created_at, d.id)
        .limit(FAILURES_SHOWN)
    )
    async with store.read() as tx:
        counts = (await tx.conn.execute(counted)).all()
        rows = (await tx.conn.execute(dead)).all()
    tally: dict[tuple[str, DeliveryAction], dict[str, int]] = {}
    for platform, action, state, n in counts:
        if state == DeliveryState.CANCELLED:
            continue  # withdrawn before it left (a retraction overtook it): nothing to watch
        bucket = tally.setdefault((platform, DeliveryAction(action)), {})
        key = {"sent": "delivered", "pending": "waiting", "dead": "failed"}[state]
        bucket[key] = bucket.get(key, 0) + int(n)
    order = {a: i for i, a in enumerate(UPDATE_ACTIONS)}
    ranked = sorted(tally.items(), key=lambda kv: (order[kv[0][1]], kv[0][0]))
    shown = tuple(Row(platform, action, **values) for (platform, action), values in ranked)
    people = {name for name, p in (plugins or {}).items() if p.contact is not None}
    failures = tuple(
        Failure(
            delivery_id=r.id,
            platform=r.platform,
            action=DeliveryAction(r.action),
            where="" if r.platform in people else (r.label or f"{r.workspace}/{r.channel}"),
            reason=r.last_error or "",
            attempts=int(r.attempts),
            at=r.created_at,
        )
        for r in rows
    )
    return Progress(update_id, shown, failures, sum(r.failed for r in shown))
