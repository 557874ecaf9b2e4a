"""Store queries for morning briefings: the (subscription, local date) claims in
`briefing_runs`, the subscriptions that have a schedule, and the updates that changed in a
window (with their revisions) for the composer.

Functions take an open `Tx` and use `tx.conn`, like the rest of `bot/store/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    Date,
    Integer,
    String,
    Text,
    and_,
    case,
    cast,
    func,
    literal,
    null,
    select,
    text,
    tuple_,
    union,
)
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement

from bot.briefings.times import Schedule
from bot.models import Audience, DeliveryAction, DeliveryState, Revision, Subscription, Update
from bot.store import schema as t
from bot.store import visibility
from bot.store.codecs import (
    _hhmm,
    _parse_hhmm,
    revision_from_row,
    subscription_from_row,
    update_from_row,
)
from bot.store.engine import dialect_insert
from bot.store.repo import Tx
from bot.store.sites import audience_clause

QUEUED = "queued"
SKIPPED = "skipped"
_DECODE_STEP = 200  # updates decoded between two yields to the event loop


@dataclass(frozen=True, slots=True)
class RunClaim:
    """One briefing for one channel on one local date: the row that makes it happen once."""

    subscription_id: int
    local_date: date
    scheduled_for: datetime
    outcome: str  # QUEUED | SKIPPED
    delivery_id: str | None = None


@dataclass(frozen=True, slots=True)
class BriefingRun:
    subscription_id: int
    local_date: date
    scheduled_for: datetime
    created_at: datetime
    outcome: str
    delivery_id: str | None


async def claim_runs(tx: Tx, claims: Sequence[RunClaim], now: datetime) -> set[tuple[int, date]]:
    """Insert the claims, ignoring those whose (subscription, local date) exists already.

    Returns the keys this transaction won. Rows go in key order so that two instances
    claiming overlapping sets on PostgreSQL wait on each other instead of deadlocking.
    """
    ordered = sorted(claims, key=lambda c: (c.subscription_id, c.local_date))
    if not ordered:
        return set()
    stmt = (
        _insert(tx, t.briefing_runs)
        .on_conflict_do_nothing(index_elements=["subscription_id", "local_date"])
        .returning(t.briefing_runs.c.subscription_id, t.briefing_runs.c.local_date)
    )
    rows = [
        {
            "subscription_id": c.subscription_id,
            "local_date": c.local_date,
            "scheduled_for": c.scheduled_for,
            "created_at": now,
            "outcome": c.outcome,
            "delivery_id": c.delivery_id,
        }
        for c in ordered
    ]
    # A list of parameter sets: SQLAlchemy's "insertmanyvalues" batches it into few
    # statements compiled once, much cheaper than one huge VALUES clause per chunk.
    result = await tx.conn.execute(stmt, rows)
    return {(int(r.subscription_id), _as_date(r.local_date)) for r in result}


async def existing_runs(tx: Tx, keys: Iterable[tuple[int, date]]) -> set[tuple[int, date]]:
    """Which of these (subscription, local date) keys already have a run."""
    wanted = sorted(set(keys))
    found: set[tuple[int, date]] = set()
    cols = (t.briefing_runs.c.subscription_id, t.briefing_runs.c.local_date)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await tx.conn.execute(select(*cols).where(tuple_(*cols).in_(chunk)))
        found.update((int(r.subscription_id), _as_date(r.local_date)) for r in rows)
    return found


async def list_runs(
    tx: Tx,
    *,
    subscription_id: int | None = None,
    since: date | None = None,
    limit: int | None = 500,
) -> list[BriefingRun]:
    """Runs, newest local date first."""
    query = select(t.briefing_runs).order_by(
        t.briefing_runs.c.local_date.desc(), t.briefing_runs.c.subscription_id
    )
    if subscription_id is not None:
        query = query.where(t.briefing_runs.c.subscription_id == subscription_id)
    if since is not None:
        query = query.where(t.briefing_runs.c.local_date >= since)
    if limit is not None:
        query = query.limit(limit)
    return [
        BriefingRun(
            subscription_id=int(r.subscription_id),
            local_date=_as_date(r.local_date),
            scheduled_for=r.scheduled_for,
            created_at=r.created_at,
            outcome=r.outcome,
            delivery_id=r.delivery_id,
        )
        for r in await tx.conn.execute(query)
    ]


async def scheduled_subscriptions(tx: Tx, ids: Iterable[int] | None = None) -> list[Subscription]:
    """Active subscriptions that have a briefing time, optionally only these ids."""
    query = (
        select(t.subscriptions)
        .where(t.subscriptions.c.active.is_(True), t.subscriptions.c.briefing_time.is_not(None))
        .order_by(t.subscriptions.c.id)
    )
    if ids is None:
        return [subscription_from_row(r) for r in await tx.conn.execute(query)]
    wanted = sorted(set(ids))
    subs: list[Subscription] = []
    for start in range(0, len(wanted), 500):
        chunk = query.where(t.subscriptions.c.id.in_(wanted[start : start + 500]))
        subs.extend(subscription_from_row(r) for r in await tx.conn.execute(chunk))
    return subs


def _schedule_of_row(row: Any) -> Schedule | None:
    at = _parse_hhmm(row.briefing_time)
    days = frozenset(int(d) for d in row.briefing_days or "")
    if at is None or not days:
        return None
    return Schedule(at, row.timezone, days)


# Word for word the schedule index's own condition: SQLite and PostgreSQL use a partial
# index only for a query whose WHERE states it (`active IS 1`, `active = 1` or
# `active IS true` do not), and without it each page scans the table.
_WITH_BRIEFING = (and_(text("subscriptions.active"), t.subscriptions.c.briefing_time.is_not(None)),)


async def schedules(tx: Tx) -> dict[Schedule, int]:
    """Every distinct briefing schedule of the active channels, with how many share it:
    one pass over the schedule index, a few dozen rows for 100,000 channels."""
    s = t.subscriptions.c
    query = (
        select(s.briefing_time, s.timezone, s.briefing_days, func.count())
        .where(*_WITH_BRIEFING)
        .group_by(s.briefing_time, s.timezone, s.briefing_days)
    )
    found: dict[Schedule, int] = {}
    for row in await tx.conn.execute(query):
        schedule = _schedule_of_row(row)
        if schedule is not None:
            found[schedule] = found.get(schedule, 0) + int(row[3])
    return found


def _on_schedule(schedule: Schedule) -> list[ColumnElement[bool]]:
    """The active channels on `schedule`, through the schedule index."""
    s = t.subscriptions.c
    return [
        *_WITH_BRIEFING,
        s.briefing_time == _hhmm(schedule.briefing_time),
        s.timezone == schedule.timezone,
        s.briefing_days == "".join(str(d) for d in sorted(schedule.briefing_days)),
    ]


async def subscriptions_on(
    tx: Tx, schedule: Schedule, *, after: int = 0, limit: int = 1000
) -> list[Subscription]:
    """The next `limit` active channels on `schedule` with an id above `after` (keyset
    pages through the schedule index)."""
    s = t.subscriptions.c
    query = (
        select(t.subscriptions)
        .where(*_on_schedule(schedule), s.id > after)
        .order_by(s.id)
        .limit(limit)
    )
    return [subscription_from_row(r) for r in await tx.conn.execute(query)]


# -- a schedule's channels, a page at a time, without decoding them -----------------
#
# 100,000 channels due at 07:00 are claimed and queued page by page in SQL: Python sees
# each channel's id and language, never a decoded row, and the rendered message goes to
# the database once per language and page as a bound parameter.


def _created_by(created_by: datetime | None) -> list[ColumnElement[bool]]:
    if created_by is None:
        return []
    return [t.subscriptions.c.created_at <= literal(created_by, t.UTCDateTime())]


async def schedule_page(
    tx: Tx,
    schedule: Schedule,
    *,
    after: int,
    limit: int,
    created_by: datetime | None = None,
) -> list[tuple[int, str, str | None]]:
    """(id, language, what it follows as stored text: None for everything) of the next
    `limit` active channels on `schedule` with an id above `after`, optionally only those
    created at or before `created_by`."""
    s = t.subscriptions.c
    query = (
        select(s.id, s.language, _follows_text())
        .where(*_on_schedule(schedule), s.id > after, *_created_by(created_by))
        .order_by(s.id)
        .limit(limit)
    )
    return [
        (int(i), str(language), _everything_is_none(follows))
        for i, language, follows in await tx.conn.execute(query)
    ]


def _follows_text() -> ColumnElement[Any]:
    """What a channel follows, as the text stored (canonical: codes sorted): channels with
    the same follow the same, so their briefings are one composition."""
    return cast(t.subscriptions.c.follows, Text())


def _everything_is_none(follows: str | None) -> str | None:
    return None if follows in (None, "null") else follows


@dataclass(frozen=True, slots=True)
class PayloadChoice:
    """The shared payload of the channels speaking `language` (`ids` None), or of these
    channels of a page (their follows let in the same updates for some sites)."""

    language: str
    ids: frozenset[int] | None
    payload_id: int

    def condition(self) -> ColumnElement[bool]:
        if self.ids is None:
            return t.subscriptions.c.language == self.language
        return t.briefing_runs.c.subscription_id.in_(sorted(self.ids))


async def claim_schedule_page(
    tx: Tx,
    schedule: Schedule,
    scheduled_for: datetime,
    local_date: date,
    *,
    first: int,
    last: int,
    now: datetime,
    outcome: str,
    id_prefix: str | None = None,
    created_by: datetime | None = None,
) -> list[int]:
    """Claim (subscription, `local_date`) for the channels on `schedule` with ids in
    [first, last], in one INSERT ... SELECT that ignores the keys claimed already. Returns
    the subscription ids this transaction won.

    A claim that is to be sent gets the delivery id `id_prefix` + its subscription id:
    unique within the page, and the prefix (random per page) finds the page's claims again
    for `briefing_deliveries`."""
    s = t.subscriptions.c
    r = t.briefing_runs
    delivery_id: ColumnElement[Any] = (
        null() if id_prefix is None else literal(id_prefix, String()) + cast(s.id, String())
    )
    source = (
        select(
            s.id,
            literal(local_date, Date()),
            literal(scheduled_for, t.UTCDateTime()),
            literal(now, t.UTCDateTime()),
            literal(outcome, String()),
            delivery_id,
        )
        .where(*_on_schedule(schedule), s.id >= first, s.id <= last, *_created_by(created_by))
        # Key order: two instances on PostgreSQL wait on each other, never deadlock.
        .order_by(s.id)
    )
    stmt = (
        _insert(tx, r)
        .from_select(
            ["subscription_id", "local_date", "scheduled_for", "created_at", "outcome",
             "delivery_id"],
            source,
        )
        .on_conflict_do_nothing(index_elements=["subscription_id", "local_date"])
        .returning(r.c.subscription_id)
    )  # fmt: skip
    return [int(i) for i in await tx.conn.scalars(stmt)]


def briefing_deliveries(
    local_date: date,
    *,
    first: int,
    last: int,
    id_prefix: str,
    payloads: Sequence[PayloadChoice],
    default: int,
    now: datetime,
) -> tuple[list[str], Select[Any]]:
    """The outbox rows (columns, SELECT) for the claims `claim_schedule_page` made with
    `id_prefix`: action BRIEFING, dedupe key `briefing:s{id}:{local date}`, the shared
    payload (`bot.store.shared_payloads`, by id) of the channel's language and follows
    (`default` for a channel changed meanwhile) and no payload of its own, for
    `Tx.enqueue_select`."""
    r = t.briefing_runs.c
    s = t.subscriptions.c
    payload = case(
        *((choice.condition(), literal(choice.payload_id, Integer())) for choice in payloads),
        else_=literal(default, Integer()),
    )
    dedupe = (
        literal("briefing:s", String())
        + cast(r.subscription_id, String())
        + literal(f":{local_date.isoformat()}", String())
    )
    source = (
        select(
            r.delivery_id,
            dedupe,
            r.subscription_id,
            s.platform,
            literal(str(DeliveryAction.BRIEFING), String()),
            literal(0),
            literal(str(DeliveryState.PENDING), String()),
            literal(0),
            literal(now, t.UTCDateTime()),
            payload,
            literal(now, t.UTCDateTime()),
        )
        .select_from(t.briefing_runs.join(t.subscriptions, s.id == r.subscription_id))
        .where(
            r.subscription_id >= first,
            r.subscription_id <= last,
            r.local_date == literal(local_date, Date()),
            func.substr(r.delivery_id, 1, len(id_prefix)) == id_prefix,
        )
        .order_by(r.subscription_id)
    )
    columns = [
        "id", "dedupe_key", "subscription_id", "platform", "action", "revision", "state",
        "attempts", "not_before", "shared_payload_id", "created_at",
    ]  # fmt: skip
    return columns, source


async def briefing_reach(tx: Tx, audience: Audience) -> int:
    """How many active channels and people with a briefing an update addressed to
    `audience` reaches (`audience_clause`: the briefing's rule is the delivery's)."""
    query = select(func.count()).select_from(t.subscriptions)
    return int(await tx.conn.scalar(query.where(*_WITH_BRIEFING, audience_clause(audience))) or 0)


async def addresses(tx: Tx, ids: Sequence[int]) -> list[str]:
    """'platform:workspace/channel' of these channels, in id order (for log lines)."""
    s = t.subscriptions.c
    rows = await tx.conn.execute(
        select(s.platform, s.workspace, s.channel).where(s.id.in_(ids)).order_by(s.id)
    )
    return [f"{p}:{w}/{c}" for p, w, c in rows]


async def subscriptions_changed(tx: Tx, since_version: int) -> list[Subscription]:
    """Active channels with a briefing whose row changed after `since_version` (through the
    change index: a minute's handful, whatever the number of channels)."""
    s = t.subscriptions.c
    query = (
        select(t.subscriptions).where(s.change_seq > since_version, *_WITH_BRIEFING).order_by(s.id)
    )
    return [subscription_from_row(r) for r in await tx.conn.execute(query)]


async def updates_changed_since(tx: Tx, since: datetime, now: datetime) -> list[Update]:
    """Visible updates published, edited or retracted in (since, now], with their revisions
    made in that window, oldest first.

    Each way of having changed is found through its own index (published, retracted,
    revised), so the read costs the week, not the campaign's history; rows are fetched and
    decoded `_DECODE_STEP` at a time, yielding to the event loop between steps."""
    u, r = t.updates, t.update_revisions
    changed = union(
        select(u.c.id.label("id")).where(u.c.published_at > since, u.c.published_at <= now),
        select(u.c.id).where(u.c.retracted_at > since, u.c.retracted_at <= now),
        select(r.c.update_id).where(r.c.created_at > since, r.c.created_at <= now),
    ).subquery()
    rows = await _fetch_in_steps(
        tx,
        select(u)
        .select_from(changed.join(u, u.c.id == changed.c.id))
        .where(visibility.visible(now))
        .order_by(u.c.published_at, u.c.id),
    )
    if not rows:
        return []
    wanted = {int(row.id) for row in rows}
    revisions: dict[int, list[Revision]] = {}
    for rev in await _fetch_in_steps(
        tx,
        select(r)
        .where(r.c.created_at > since, r.c.created_at <= now)
        .order_by(r.c.update_id, r.c.number),
    ):
        if int(rev.update_id) in wanted:
            revisions.setdefault(int(rev.update_id), []).append(revision_from_row(rev))
    updates: list[Update] = []
    for start in range(0, len(rows), _DECODE_STEP):
        if start:
            await asyncio.sleep(0)  # a busy week is decoded in steps, not one
        updates.extend(
            update_from_row(row, now, revisions.get(int(row.id), ()))
            for row in rows[start : start + _DECODE_STEP]
        )
    return updates


async def _fetch_in_steps(tx: Tx, statement: Select[Any]) -> list[Any]:
    """The statement's rows, `_DECODE_STEP` at a time: the driver's rows become Python
    values (JSON, times) between awaits, not all in one step of the event loop."""
    result = await tx.conn.stream(statement)
    rows: list[Any] = []
    async for part in result.partitions(_DECODE_STEP):
        rows.extend(part)
    return rows


def _insert(tx: Tx, table: Any) -> Any:
    return dialect_insert(tx.dialect, table)


def _as_date(value: Any) -> date:
    """SQLite hands DATE back as a date through SQLAlchemy, asyncpg as a date; be strict."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


__all__ = [
    "QUEUED",
    "SKIPPED",
    "BriefingRun",
    "PayloadChoice",
    "RunClaim",
    "addresses",
    "briefing_deliveries",
    "briefing_reach",
    "claim_runs",
    "claim_schedule_page",
    "existing_runs",
    "list_runs",
    "schedule_page",
    "scheduled_subscriptions",
    "subscriptions_on",
    "updates_changed_since",
]
