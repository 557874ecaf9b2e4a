"""The dispatcher's queries on the outbox: claim due rows under a lease, then settle them.

A claim sets `claimed_by` (the worker id) and `claimed_until` (the lease). Every later write
is conditioned on `claimed_by`, so a worker whose lease lapsed and was taken over cannot
overwrite the new owner's outcome.

Claiming is safe with several dispatchers: on PostgreSQL the candidate rows are locked with
`FOR UPDATE SKIP LOCKED` (a concurrent claimer skips them instead of waiting or taking them
too); on SQLite the write transaction is `BEGIN IMMEDIATE`, which admits one writer at a time.

A follow-up (EDIT / CORRECTION / RETRACT) is not claimable while the POST of the same update
to the same subscription is unsettled: still pending, or held under a live lease by a sender
(an admin may cancel a POST that is already on its way; the sender's outcome decides).

A POST "in doubt" may already be on the platform: it was attempted (`attempts` > 0) or is
held by a claim (`claimed_by` set). Taking over a lapsed lease counts one attempt, because
the worker that let it lapse (killed, frozen) may have sent it without recording that. A
retraction cancels only POSTs not in doubt (`withdraw_posts`); the dispatcher resolves the
others (see `bot.delivery.dispatcher`, "Exactly once").
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    String,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    literal_column,
    not_,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.sql.selectable import NamedFromClause

from bot.models import Delivery, DeliveryAction, DeliveryState, Subscription
from bot.store import schema as t
from bot.store import shared_payloads
from bot.store.codecs import delivery_from_row, subscription_from_row
from bot.store.repo import OUTBOX_CHANNEL, Tx

FOLLOW_UPS: tuple[str, ...] = (
    str(DeliveryAction.EDIT),
    str(DeliveryAction.CORRECTION),
    str(DeliveryAction.RETRACT),
)
PENDING = str(DeliveryState.PENDING)
SENT = str(DeliveryState.SENT)
DEAD = str(DeliveryState.DEAD)
CANCELLED = str(DeliveryState.CANCELLED)

_d = t.deliveries
# `state = 'pending'` written as a literal, as the partial indexes on pending rows say it:
# a bound parameter would keep PostgreSQL's generic plans (asyncpg prepares statements) and
# SQLite's planner from proving that the index covers the query.
_PENDING_LITERAL: ColumnElement[str] = literal_column("'pending'", String)


def is_pending(row: NamedFromClause) -> ColumnElement[bool]:
    return row.c.state == _PENDING_LITERAL


def _waiting_for_post(row: NamedFromClause, now: Any) -> ColumnElement[bool]:
    """True for a follow-up whose POST (same update, same subscription) is unsettled."""
    post = t.deliveries.alias("post")
    unsettled = exists(
        select(post.c.id)
        .where(
            post.c.update_id == row.c.update_id,
            post.c.subscription_id == row.c.subscription_id,
            post.c.action == str(DeliveryAction.POST),
            or_(post.c.state == PENDING, post.c.claimed_until > now),
        )
        # OFFSET 0 keeps PostgreSQL from turning this EXISTS into a hashed subplan, which
        # reads every POST in the table once per claim; probed per candidate through
        # ix_deliveries_update, a claim reads only the rows it looks at.
        .offset(0)
    )
    return and_(row.c.action.in_(FOLLOW_UPS), unsettled)


def _claimable(row: NamedFromClause, platform: Any, now: Any) -> list[ColumnElement[bool]]:
    return [
        is_pending(row),
        row.c.platform == platform,
        row.c.not_before <= now,
        or_(row.c.claimed_until.is_(None), row.c.claimed_until <= now),
        not_(_waiting_for_post(row, now)),
    ]


async def claim(
    tx: Tx,
    *,
    worker: str,
    platform: str,
    now: datetime,
    lease_until: datetime,
    limit: int,
) -> list[Delivery]:
    """Lease up to `limit` due rows of `platform` to `worker`, oldest due first."""
    if limit <= 0:
        return []
    params = {
        "c_worker": worker,
        "c_platform": platform,
        "c_now": now,
        "c_lease_until": lease_until,
        "c_limit": limit,
    }
    result = await tx.conn.execute(_claim_statement(tx.dialect), params)
    rows = [delivery_from_row(r) for r in result]
    rows.sort(key=lambda d: (d.not_before, d.created_at, d.id))
    # A briefing's message is shared by its run's channels of one language: read once per
    # transaction (a round claiming several platforms reads it once), not per row.
    return await tx.with_shared_payloads(rows)


@functools.cache
def _claim_statement(dialect: str) -> Any:
    """The claim, built once per dialect (its parameters bound at each execution)."""
    candidate = t.deliveries.alias("candidate")
    now = bindparam("c_now", type_=t.UTCDateTime)
    ids = (
        select(candidate.c.id)
        .where(*_claimable(candidate, bindparam("c_platform", type_=String), now))
        .order_by(candidate.c.not_before, candidate.c.created_at, candidate.c.id)
        .limit(bindparam("c_limit", type_=Integer))
    )
    if dialect == "postgresql":
        ids = ids.with_for_update(skip_locked=True, of=candidate)
    # A materialized CTE runs the LIMIT-ed, row-locking select exactly once. Written as a
    # plain `IN (subquery)`, PostgreSQL may rescan the subquery inside a nested loop, and
    # each rescan skips the rows the previous one locked: more than `limit` rows come back.
    chosen = ids.cte("chosen").prefix_with("MATERIALIZED", dialect="postgresql")
    return (
        update(_d)
        .where(_d.c.id.in_(select(chosen.c.id)), _d.c.state == PENDING)
        .values(
            claimed_by=bindparam("c_worker", type_=String),
            claimed_until=bindparam("c_lease_until", type_=t.UTCDateTime),
            # A lease that lapsed unsettled: its holder may have sent it. One attempt, whose
            # outcome is unknown.
            attempts=case((_d.c.claimed_by.is_not(None), _d.c.attempts + 1), else_=_d.c.attempts),
            in_doubt_since=case(
                (
                    and_(_d.c.claimed_by.is_not(None), _d.c.in_doubt_since.is_(None)),
                    type_coerce(now, t.UTCDateTime),
                ),
                else_=_d.c.in_doubt_since,
            ),
        )
        .returning(*_d.c)
    )


async def take_over(tx: Tx, *, worker: str, platform: str, now: datetime) -> int:
    """Make the rows of `platform` held by other workers claimable now: `worker` has just
    become the one dispatcher for `platform` (`bot.delivery.leadership.dispatcher_lock_key`),
    so their holder is gone. Their claim counts an attempt of unknown outcome, as for a
    lapsed lease."""
    result = await tx.conn.execute(
        update(_d)
        .where(
            _d.c.state == PENDING,
            _d.c.platform == platform,
            _d.c.claimed_by.is_not(None),
            _d.c.claimed_by != worker,
            _d.c.claimed_until > now,
        )
        .values(claimed_until=now)
    )
    return int(result.rowcount)


async def renew(tx: Tx, *, worker: str, ids: Collection[str], lease_until: datetime) -> int:
    """Extend the lease on rows this worker still holds; returns how many it holds."""
    renewed = 0
    for chunk in _chunks(list(ids)):
        result = await tx.conn.execute(
            update(_d)
            .where(_d.c.id.in_(chunk), _d.c.claimed_by == worker)
            .values(claimed_until=lease_until)
        )
        renewed += int(result.rowcount)
    return renewed


async def release(
    tx: Tx,
    *,
    worker: str,
    ids: Collection[str] | None = None,
    in_doubt: bool = False,
    now: datetime | None = None,
) -> int:
    """Give back rows this worker holds (all of them when `ids` is None), unsent. With
    `in_doubt` (a previous run under the same id died holding them) each counts an attempt
    whose outcome is unknown (since `now`)."""
    conds: list[ColumnElement[bool]] = [_d.c.claimed_by == worker]
    values: dict[str, Any] = {"claimed_by": None, "claimed_until": None}
    if in_doubt:
        values["attempts"] = _d.c.attempts + 1
        if now is not None:
            values["in_doubt_since"] = func.coalesce(
                _d.c.in_doubt_since, type_coerce(now, t.UTCDateTime)
            )
    if ids is None:
        result = await tx.conn.execute(update(_d).where(*conds).values(**values))
        return int(result.rowcount)
    released = 0
    for chunk in _chunks(list(ids)):
        result = await tx.conn.execute(
            update(_d).where(*conds, _d.c.id.in_(chunk)).values(**values)
        )
        released += int(result.rowcount)
    return released


@dataclass(frozen=True, slots=True)
class SentMark:
    delivery_id: str
    platform_message_id: str
    sent_at: datetime


async def mark_sent(tx: Tx, *, worker: str, marks: Iterable[SentMark]) -> int:
    """Record each platform message id and mark the row SENT; returns rows marked.

    A row an admin cancelled while it was on its way is marked SENT too: the message exists,
    and the follow-up that retracts or edits it needs its id.
    """
    params = [
        {"b_id": m.delivery_id, "b_message": m.platform_message_id, "b_at": m.sent_at}
        for m in marks
    ]
    if not params:
        return 0
    for p in params:
        p["b_worker"] = worker
    result = await tx.conn.execute(_MARK_SENT, params)
    return int(result.rowcount)


# Built once: the statement every batch of sends records itself with.
_MARK_SENT = (
    update(_d)
    .where(_d.c.id == bindparam("b_id"), _d.c.claimed_by == bindparam("b_worker"))
    .values(
        state=SENT,
        platform_message_id=bindparam("b_message"),
        sent_at=bindparam("b_at", type_=t.UTCDateTime),
        attempts=_d.c.attempts + 1,
        last_error=None,
        claimed_by=None,
        claimed_until=None,
    )
)


async def record_failure(
    tx: Tx,
    *,
    worker: str,
    delivery_id: str,
    reason: str,
    lease_until: datetime,
    retry_at: datetime | None = None,
    in_doubt_since: datetime | None = None,
) -> int | None:
    """Count a failed attempt. With `retry_at` the row goes back to the queue until then;
    without, the worker keeps it (retrying soon) under a renewed lease. `in_doubt_since`:
    the attempt's outcome is unknown (it may be on the platform).

    Returns the attempts made so far, or None if this worker no longer holds the row.
    """
    values: dict[str, Any] = {"attempts": _d.c.attempts + 1, "last_error": reason[:2000]}
    if in_doubt_since is not None:
        values["in_doubt_since"] = func.coalesce(_d.c.in_doubt_since, in_doubt_since)
    if retry_at is None:
        values["claimed_until"] = lease_until
    else:
        values |= {"not_before": retry_at, "claimed_by": None, "claimed_until": None}
    result = await tx.conn.execute(
        update(_d)
        .where(_d.c.id == delivery_id, _d.c.claimed_by == worker)
        .values(**values)
        .returning(_d.c.attempts)
    )
    attempts = result.scalar_one_or_none()
    return None if attempts is None else int(attempts)


async def settle(
    tx: Tx,
    *,
    worker: str,
    delivery_id: str,
    state: DeliveryState,
    reason: str | None,
    platform_message_id: str | None = None,
    sent_at: datetime | None = None,
    count_attempt: bool = False,
) -> bool:
    """Finish a row this worker holds: DEAD with its reason, CANCELLED with why there was
    nothing to do, or SENT for an edit (with the edited message's id)."""
    values: dict[str, Any] = {
        "state": str(state),
        "last_error": None if reason is None else reason[:2000],
        "claimed_by": None,
        "claimed_until": None,
    }
    if count_attempt:
        values["attempts"] = _d.c.attempts + 1
    if platform_message_id is not None:
        values["platform_message_id"] = platform_message_id
    if sent_at is not None:
        values["sent_at"] = sent_at
    result = await tx.conn.execute(
        update(_d).where(_d.c.id == delivery_id, _d.c.claimed_by == worker).values(**values)
    )
    return bool(result.rowcount)


async def postpone(tx: Tx, *, worker: str, delivery_id: str, not_before: datetime) -> bool:
    """Give a row back to the queue until `not_before`, without counting an attempt."""
    result = await tx.conn.execute(
        update(_d)
        .where(_d.c.id == delivery_id, _d.c.claimed_by == worker)
        .values(not_before=not_before, claimed_by=None, claimed_until=None)
    )
    return bool(result.rowcount)


async def withdraw_posts(tx: Tx, update_id: int) -> int:
    """Cancel the update's POSTs that certainly never reached their channel: pending, never
    attempted, held by nobody. The rest are in doubt and stay for the dispatcher, which
    makes sure the retraction reaches a copy that may exist. Returns how many were cancelled."""
    result = await tx.conn.execute(
        update(_d)
        .where(
            _d.c.update_id == update_id,
            _d.c.action == str(DeliveryAction.POST),
            _d.c.state == PENDING,
            _d.c.attempts == 0,
            _d.c.claimed_by.is_(None),
        )
        .values(state=CANCELLED, last_error="the update was retracted before it was sent")
    )
    return int(result.rowcount)


async def find_post(tx: Tx, update_id: int, subscription_id: int) -> Delivery | None:
    """The POST of `update_id` to `subscription_id`, if one was queued."""
    row = (
        await tx.conn.execute(
            select(_d).where(
                _d.c.update_id == update_id,
                _d.c.subscription_id == subscription_id,
                _d.c.action == str(DeliveryAction.POST),
            )
        )
    ).first()
    if row is None:
        return None
    return (await tx.with_shared_payloads([delivery_from_row(row)]))[0]


async def find_posts(tx: Tx, pairs: Collection[tuple[int, int]]) -> dict[tuple[int, int], Delivery]:
    """The POSTs of these (update, subscription) pairs, in one query per update (the
    follow-ups of one claim round are almost always one update's)."""
    by_update: dict[int, set[int]] = {}
    for update_id, sub_id in pairs:
        by_update.setdefault(update_id, set()).add(sub_id)
    found: dict[tuple[int, int], Delivery] = {}
    for update_id, sub_ids in by_update.items():
        for chunk in _chunks(sorted(sub_ids)):
            rows = await tx.conn.execute(
                select(_d).where(
                    _d.c.update_id == update_id,
                    _d.c.action == str(DeliveryAction.POST),
                    _d.c.subscription_id.in_(chunk),
                )
            )
            for post in await tx.with_shared_payloads([delivery_from_row(r) for r in rows]):
                found[(update_id, post.subscription_id)] = post
    return found


async def deliveries_by_id(tx: Tx, ids: Collection[str]) -> list[Delivery]:
    found: list[Delivery] = []
    for chunk in _chunks(list(ids)):
        rows = await tx.conn.execute(select(_d).where(_d.c.id.in_(chunk)))
        found += [delivery_from_row(r) for r in rows]
    return await tx.with_shared_payloads(found)


async def state_of_update(tx: Tx, update_id: int) -> str | None:
    return await tx.conn.scalar(select(t.updates.c.state).where(t.updates.c.id == update_id))


async def subscriptions_by_id(
    tx: Tx, ids: Collection[int], *, active_only: bool = True
) -> dict[int, Subscription]:
    """The subscriptions with these ids, keyed by id (unsubscribed ones left out)."""
    found: dict[int, Subscription] = {}
    for chunk in _chunks(sorted(set(ids))):
        query = select(t.subscriptions).where(t.subscriptions.c.id.in_(chunk))
        if active_only:
            query = query.where(t.subscriptions.c.active.is_(True))
        rows = await tx.conn.execute(query)
        for row in rows:
            found[row.id] = subscription_from_row(row)
    return found


async def subscriptions_and_holders(
    tx: Tx, ids: Collection[int]
) -> tuple[dict[int, Subscription], dict[int, Subscription]]:
    """`subscriptions_by_id` with and without `active_only`, in one read: (the subscribed
    channels, every channel with these ids)."""
    active: dict[int, Subscription] = {}
    every: dict[int, Subscription] = {}
    for chunk in _chunks(sorted(set(ids))):
        rows = await tx.conn.execute(select(t.subscriptions).where(t.subscriptions.c.id.in_(chunk)))
        for row in rows:
            sub = every[row.id] = subscription_from_row(row)
            if row.active:
                active[row.id] = sub
    return active, every


async def next_due(tx: Tx, *, platforms: Collection[str], now: datetime) -> datetime | None:
    """When the earliest row of `platforms` becomes claimable (its due time, or the end of
    someone else's lease). Follow-ups waiting for their POST are left out: settling the POST
    wakes the dispatcher instead. See `next_due_by_platform`."""
    due = await next_due_by_platform(tx, platforms=platforms, now=now)
    return min(due.values(), default=None)


async def next_due_by_platform(
    tx: Tx, *, platforms: Collection[str], now: datetime
) -> dict[str, datetime]:
    """`next_due` of each of `platforms` that has a row to wait for.

    Reads only pending rows, through their indexes: per platform the first row in claim
    order that no live lease holds (`ix_deliveries_pending`, leased rows passed over in the
    index), and the earliest lease to end (`ix_deliveries_leases`, one entry). Neither grows
    with the history or (beyond the rows leased) with the queue. One statement (each read a
    scalar subquery), built once per set of platforms."""
    if not platforms:
        return {}
    names = tuple(sorted(set(platforms)))
    row = (await tx.conn.execute(_next_due_statement(names), {"n_now": now})).one()
    due: dict[str, datetime] = {}
    for i, platform in enumerate(names):
        times = [v for v in (row[2 * i], row[2 * i + 1]) if isinstance(v, datetime)]
        if times:
            due[platform] = min(times)
    return due


@functools.lru_cache(maxsize=64)
def _next_due_statement(platforms: tuple[str, ...]) -> Any:
    now = bindparam("n_now", type_=t.UTCDateTime)
    reads = []
    for platform in platforms:
        first = (
            select(_d.c.not_before)
            .where(
                is_pending(_d),
                _d.c.platform == platform,
                or_(_d.c.claimed_until.is_(None), _d.c.claimed_until <= _d.c.not_before),
                not_(_waiting_for_post(_d, now)),
            )
            .order_by(_d.c.not_before, _d.c.created_at, _d.c.id)
            .limit(1)
        )
        # The first lease to end, in the order of `ix_deliveries_leases` (not `min()`,
        # which SQLite without statistics answers by walking every pending row).
        lapses = (
            select(_d.c.claimed_until)
            .where(
                is_pending(_d),
                _d.c.platform == platform,
                _d.c.claimed_until.is_not(None),
                _d.c.claimed_until > _d.c.not_before,
            )
            .order_by(_d.c.claimed_until)
            .limit(1)
        )
        reads += [first.scalar_subquery(), lapses.scalar_subquery()]
    return select(*reads)


async def pending_counts(tx: Tx) -> dict[str, int]:
    """Pending rows per platform (the queue-depth gauge), from the pending rows' index."""
    rows = await tx.conn.execute(
        select(_d.c.platform, func.count()).where(is_pending(_d)).group_by(_d.c.platform)
    )
    return {str(platform): int(n) for platform, n in rows}


@dataclass(frozen=True, slots=True)
class PlatformSummary:
    """One update's deliveries on one platform."""

    platform: str
    total: int
    pending: int
    scheduled: int  # pending, never tried, held back by an embargo or quiet hours
    sent: int
    dead: int
    cancelled: int
    retried: int  # needed more than one attempt

    def to_json(self) -> dict[str, int | str]:
        return {
            "platform": self.platform,
            "total": self.total,
            "pending": self.pending,
            "scheduled": self.scheduled,
            "sent": self.sent,
            "dead": self.dead,
            "cancelled": self.cancelled,
            "retried": self.retried,
        }


async def update_summary(tx: Tx, update_id: int, now: datetime) -> dict[str, PlatformSummary]:
    """Per platform: how this update's deliveries (posts and follow-ups) stand."""
    pending = _d.c.state == PENDING
    query = (
        select(
            _d.c.platform,
            func.count(),
            func.sum(case((pending, 1), else_=0)),
            func.sum(case((and_(pending, _d.c.not_before > now, _d.c.attempts == 0), 1), else_=0)),
            func.sum(case((_d.c.state == SENT, 1), else_=0)),
            func.sum(case((_d.c.state == DEAD, 1), else_=0)),
            func.sum(case((_d.c.state == CANCELLED, 1), else_=0)),
            func.sum(case((_d.c.attempts > 1, 1), else_=0)),
        )
        .where(_d.c.update_id == update_id)
        .group_by(_d.c.platform)
        .order_by(_d.c.platform)
    )
    out: dict[str, PlatformSummary] = {}
    for row in await tx.conn.execute(query):
        values = [int(v or 0) for v in row[1:]]
        out[str(row[0])] = PlatformSummary(str(row[0]), *values)
    # Copies already purged (`purge_history`) count from their summary.
    h = t.delivery_history
    purged = await tx.conn.execute(
        select(h.c.platform, h.c.state, func.sum(h.c.count), func.sum(h.c.retried))
        .where(h.c.update_id == update_id)
        .group_by(h.c.platform, h.c.state)
    )
    for platform, state, count, retried in purged:
        n, r = int(count or 0), int(retried or 0)
        was = out.get(str(platform)) or PlatformSummary(str(platform), 0, 0, 0, 0, 0, 0, 0)
        out[str(platform)] = PlatformSummary(
            was.platform,
            was.total + n,
            was.pending,
            was.scheduled,
            was.sent + (n if state == SENT else 0),
            was.dead + (n if state == DEAD else 0),
            was.cancelled + (n if state == CANCELLED else 0),
            was.retried + r,
        )
    return dict(sorted(out.items()))


async def requeue_dead(
    tx: Tx, *, now: datetime, ids: Collection[str] | None = None
) -> list[Delivery]:
    """Put DEAD rows back in the queue (all of them when `ids` is None), due now, with a
    fresh attempt count. Returns the rows requeued (as they were before)."""
    query = select(_d).where(_d.c.state == DEAD)
    if ids is not None:
        query = query.where(_d.c.id.in_(list(ids)))
    before = await tx.with_shared_payloads(
        [delivery_from_row(r) for r in await tx.conn.execute(query)]
    )
    for chunk in _chunks([d.id for d in before]):
        await tx.conn.execute(
            update(_d)
            .where(_d.c.id.in_(chunk), _d.c.state == DEAD)
            .values(
                state=PENDING,
                attempts=0,
                not_before=now,
                last_error=None,
                claimed_by=None,
                claimed_until=None,
            )
        )
    tx.enqueued += len(before)
    if before and tx.dialect == "postgresql":
        # Wakes dispatchers in other processes when this transaction commits.
        await tx.conn.execute(select(func.pg_notify(OUTBOX_CHANNEL, "")))
    return before


SETTLED: tuple[str, ...] = (SENT, DEAD, CANCELLED)


async def purge_history(tx: Tx, *, before: datetime, now: datetime, limit: int = 2000) -> int:
    """Delete up to `limit` settled deliveries (sent, dead, cancelled) queued before
    `before`, oldest first, and write what they were into `delivery_history`: one row per
    (update, platform, action, outcome) with how many, how many needed retries, and the
    span of their queueing. Returns how many were deleted (less than `limit`: done).

    The rows are read back from the DELETE itself, so two instances purging at once never
    count a row twice. Pending rows are never touched. Shared payloads written before
    `before` that no delivery names any more go too (`shared_payloads.purge_unused`)."""
    oldest = (
        select(_d.c.id)
        .where(_d.c.created_at < before, _d.c.state.in_(SETTLED))
        .order_by(_d.c.created_at)
        .limit(limit)
    )
    gone = (
        await tx.conn.execute(
            delete(_d)
            .where(_d.c.id.in_(oldest.scalar_subquery()), _d.c.state.in_(SETTLED))
            .returning(
                _d.c.update_id,
                _d.c.platform,
                _d.c.action,
                _d.c.state,
                _d.c.attempts,
                _d.c.created_at,
            )
        )
    ).all()
    await shared_payloads.purge_unused(tx, before=before)
    if not gone:
        return 0
    counts: Counter[tuple[int | None, str, str, str]] = Counter()
    retried: Counter[tuple[int | None, str, str, str]] = Counter()
    span: dict[tuple[int | None, str, str, str], tuple[datetime, datetime]] = {}
    for update_id, platform, action, state, attempts, created_at in gone:
        key = (update_id, str(platform), str(action), str(state))
        counts[key] += 1
        retried[key] += 1 if attempts > 1 else 0
        first, last = span.get(key, (created_at, created_at))
        span[key] = (min(first, created_at), max(last, created_at))
    await tx.conn.execute(
        t.delivery_history.insert(),
        [
            {
                "purged_at": now,
                "update_id": key[0],
                "platform": key[1],
                "action": key[2],
                "state": key[3],
                "count": n,
                "retried": retried[key],
                "first_created_at": span[key][0],
                "last_created_at": span[key][1],
            }
            for key, n in counts.items()
        ],
    )
    return len(gone)


def _chunks(items: list[Any], size: int = 500) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
