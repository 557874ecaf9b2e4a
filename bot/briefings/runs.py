"""Exactly one briefing per channel per local date: claim, compose, enqueue.

Each batch is one write transaction that (1) claims the unique (subscription, local date)
rows in `briefing_runs` with insert-or-ignore, (2) composes the briefings it won from one
read of the store, and (3) enqueues one outbox row per channel (action BRIEFING, dedupe key
`briefing:s{id}:{local date}`, payload `{"message": OutboundMessage.to_json()}`) for the
dispatcher to deliver. A claim that already exists means another fire, instance or restart
got there first: nothing is sent and the outcome is "duplicate".

Two paths do this. `queue_schedule` (a schedule's job at 07:00, the catch-up) leaves the
work per channel to the database: a page of channels is read as (id, language, follows)
through the schedule index, claimed with one INSERT ... SELECT (delivery id = a prefix
random per page + the subscription id) and queued with another whose rows name the shared
payload of the channel's language and audience (`bot.store.shared_payloads`): composed once
per language and distinct answer of `Reach` (which site-only updates a follow-set gets) for
the whole schedule and stored once per run, in the transaction of the first page that
queues (a few bytes per outbox row instead of a ~3 KB copy). 100,000 channels are 100 such
pages; no event-loop step walks them all. `queue_briefings` does the same for a list of
(channel, slot) pairs decoded in Python, each row with its own payload: one
`queue_briefing`, the channels whose schedule changed between two polls.

Catch-up after downtime: a briefing missed by less than the grace (config
`[briefings] grace_minutes`, default 120) is sent late, once; an older one is recorded as
skipped and logged, never sent in a burst at noon.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfoNotFoundError

from bot.briefings.compose import BriefingInputs, Reach, gather_briefing_inputs, reach_of
from bot.briefings.queries import (
    QUEUED,
    SKIPPED,
    PayloadChoice,
    RunClaim,
    addresses,
    briefing_deliveries,
    claim_runs,
    claim_schedule_page,
    schedule_page,
    scheduled_subscriptions,
    schedules,
)
from bot.briefings.times import (
    BriefingSlot,
    Schedule,
    latest_briefing,
    local_date_for,
    schedulable,
    window_start,
)
from bot.metrics import Metrics
from bot.models import Actor, Campaign, DeliveryAction, Subscription
from bot.store import NewDelivery, Store, new_delivery_id, shared_payloads

log = logging.getLogger("strikebot.briefings")

BATCH_SIZE = 1000  # channels per write transaction (keeps SQLite's write lock short)
# A schedule's page on PostgreSQL, where writers do not exclude each other: a third of the
# commits and round trips (queuing 100,000 briefings 3.8-4.0 s instead of 4.3-4.6 s), each
# page's claims held ~0.1 s.
POSTGRES_PAGE_SIZE = 3000


def page_size_for(store: Store) -> int:
    """Channels per write transaction when a schedule is queued on this store."""
    return POSTGRES_PAGE_SIZE if store.dialect == "postgresql" else BATCH_SIZE


# A briefing counts as on time this long after its slot, whatever the grace.
ON_TIME = timedelta(minutes=1)


class Outcome(StrEnum):
    QUEUED = "queued"  # claimed and enqueued
    DUPLICATE = "duplicate"  # already claimed for that local date
    SKIPPED = "skipped"  # too late: recorded, not sent
    GONE = "gone"  # the channel unsubscribed or its schedule changed since


# Metric labels (bot/metrics.py documents queued, skipped_late, duplicate).
_METRIC = {
    Outcome.QUEUED: "queued",
    Outcome.DUPLICATE: "duplicate",
    Outcome.SKIPPED: "skipped_late",
}


@dataclass(frozen=True, slots=True)
class Due:
    """A briefing to queue: this channel's slot."""

    subscription_id: int
    slot: BriefingSlot


def dedupe_key(sub_id: int, slot: BriefingSlot) -> str:
    return f"briefing:s{sub_id}:{slot.local_date.isoformat()}"


def allowance(grace: timedelta) -> timedelta:
    """How late a briefing may still go out."""
    return max(grace, ON_TIME)


async def queue_briefing(
    store: Store,
    campaign: Campaign,
    sub_id: int,
    scheduled_for: datetime,
    now: datetime,
    *,
    grace: timedelta = timedelta(hours=2),
    metrics: Metrics | None = None,
) -> Outcome:
    """Queue the briefing `sub_id` was due at `scheduled_for`, once per local date."""
    async with store.read() as tx:
        subs = schedulable(await scheduled_subscriptions(tx, [sub_id]))
    if not subs:
        return Outcome.GONE
    slot = BriefingSlot(scheduled_for, local_date_for(subs[0], scheduled_for))
    outcomes = await queue_briefings(
        store, campaign, [Due(sub_id, slot)], now, grace=grace, metrics=metrics, exact=False
    )
    return outcomes[sub_id]


async def queue_briefings(
    store: Store,
    campaign: Campaign,
    due: Sequence[Due],
    now: datetime,
    *,
    grace: timedelta,
    metrics: Metrics | None = None,
    count_duplicates: bool = True,
    exact: bool = True,
) -> dict[int, Outcome]:
    """Claim, compose and enqueue these briefings in batches of `BATCH_SIZE`, one write
    transaction each. `exact`: the slot must still be one of the channel's current slots
    (a job that fired for a schedule changed meanwhile queues nothing)."""
    outcomes: dict[int, Outcome] = {}
    ordered = sorted({d.subscription_id: d for d in due}.values(), key=lambda d: d.subscription_id)
    for start in range(0, len(ordered), BATCH_SIZE):
        outcomes.update(
            await _queue_batch(
                store, campaign, ordered[start : start + BATCH_SIZE], now, grace, exact
            )
        )
    if metrics is not None:
        _count(metrics, Counter(outcomes.values()), count_duplicates=count_duplicates)
    return outcomes


async def _queue_batch(
    store: Store,
    campaign: Campaign,
    batch: Sequence[Due],
    now: datetime,
    grace: timedelta,
    exact: bool,
) -> dict[int, Outcome]:
    outcomes: dict[int, Outcome] = {}
    late_limit = allowance(grace)
    maths = _ScheduleMaths()
    async with store.write() as tx:
        wanted_ids = [d.subscription_id for d in batch]
        subs = {s.id: s for s in schedulable(await scheduled_subscriptions(tx, wanted_ids))}
        claims: list[RunClaim] = []
        wanted: dict[int, tuple[Subscription, Due, str]] = {}
        for d in batch:
            sub = subs.get(d.subscription_id)
            if sub is None or (exact and maths.latest(sub, d.slot.at) != d.slot):
                outcomes[d.subscription_id] = Outcome.GONE
                continue
            if now - d.slot.at > late_limit:
                claims.append(RunClaim(sub.id, d.slot.local_date, d.slot.at, SKIPPED))
                continue
            delivery_id = new_delivery_id()
            claims.append(RunClaim(sub.id, d.slot.local_date, d.slot.at, QUEUED, delivery_id))
            wanted[sub.id] = (sub, d, delivery_id)
        won = await claim_runs(tx, claims, now)
        skipped: list[RunClaim] = []
        for claim in claims:
            if (claim.subscription_id, claim.local_date) not in won:
                outcomes[claim.subscription_id] = Outcome.DUPLICATE
            elif claim.outcome == SKIPPED:
                outcomes[claim.subscription_id] = Outcome.SKIPPED
                skipped.append(claim)
        to_send = [
            (sub, d, delivery_id)
            for sub, d, delivery_id in wanted.values()
            if (sub.id, d.slot.local_date) in won
        ]
        if to_send:
            inputs = await gather_briefing_inputs(tx, campaign, now)
            reach = Reach(inputs.targeted(inputs.loaded_since, now))
            await reach.learn(tx, {sub.follows: sub.id for sub, _, _ in reversed(to_send)})
            rows = _compose_rows(campaign, inputs, to_send, now, maths, reach)
            await tx.enqueue(rows, now)
            for sub, _, _ in to_send:
                outcomes[sub.id] = Outcome.QUEUED
    _log_late(skipped, to_send, subs, now, grace)
    return outcomes


def _log_late(
    skipped: Sequence[RunClaim],
    sent: Sequence[tuple[Subscription, Due, str]],
    subs: dict[int, Subscription],
    now: datetime,
    grace: timedelta,
) -> None:
    """One line per batch, naming a few channels: 10,000 skips must not flood the log."""
    minute = timedelta(minutes=1)
    if skipped:
        examples = ", ".join(
            f"{subs[c.subscription_id].address} ({c.local_date}, due "
            f"{c.scheduled_for.isoformat()}, {(now - c.scheduled_for) // minute} minutes ago)"
            for c in skipped[:5]
        )
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        log.warning(
            "skipped %d briefing(s) missed by more than the %d-minute grace, not sent: %s%s",
            len(skipped),
            grace // minute,
            examples,
            more,
        )
    late = [(sub, d) for sub, d, _ in sent if now - d.slot.at > ON_TIME]
    if late:
        worst = max((now - d.slot.at) // minute for _, d in late)
        log.info(
            "sending %d briefing(s) late (up to %d minutes), e.g. %s",
            len(late),
            worst,
            late[0][0].address,
        )


class _ScheduleMaths:
    """`latest_briefing` and `window_start` remembered per schedule: channels alike (10,000
    at 07:00 in one zone) share one computation."""

    def __init__(self) -> None:
        self._latest: dict[tuple[object, ...], BriefingSlot | None] = {}
        self._window: dict[tuple[object, ...], datetime] = {}

    @staticmethod
    def _key(sub: Subscription, at: datetime) -> tuple[object, ...]:
        return (sub.briefing_time, sub.timezone, sub.briefing_days, at)

    def latest(self, sub: Subscription, at: datetime) -> BriefingSlot | None:
        key = self._key(sub, at)
        if key not in self._latest:
            self._latest[key] = latest_briefing(sub, at)
        return self._latest[key]

    def window(self, sub: Subscription, slot_at: datetime) -> datetime:
        key = self._key(sub, slot_at)
        if key not in self._window:
            self._window[key] = window_start(sub, slot_at)
        return self._window[key]


def _compose_rows(
    campaign: Campaign,
    inputs: BriefingInputs,
    to_send: Sequence[tuple[Subscription, Due, str]],
    now: datetime,
    maths: _ScheduleMaths,
    reach: Reach,
) -> list[NewDelivery]:
    """One outbox row per channel; channels alike (language, zone, window, the updates for
    some sites their follows let in) share one composition, so 10,000 channels at 07:00
    compose a handful of messages."""
    cache: dict[tuple[str, str, datetime, frozenset[int]], dict[str, object]] = {}
    rows = []
    for sub, d, delivery_id in to_send:
        since = maths.window(sub, d.slot.at)
        reached = reach.of(sub.follows)
        key = (sub.language, sub.timezone, since, reached)
        payload = cache.get(key)
        if payload is None:
            message = inputs.compose(campaign, sub, now, since=since, reached=reached)
            payload = cache[key] = {"message": message.to_json()}
        rows.append(
            NewDelivery(
                dedupe_key=dedupe_key(sub.id, d.slot),
                subscription_id=sub.id,
                platform=sub.platform,
                action=DeliveryAction.BRIEFING,
                not_before=now,
                payload=payload,
                id=delivery_id,
            )
        )
    return rows


async def queue_schedule(
    store: Store,
    campaign: Campaign,
    schedule: Schedule,
    slot: BriefingSlot,
    now: datetime,
    *,
    grace: timedelta,
    metrics: Metrics | None = None,
    page_size: int | None = None,
    catching_up: bool = False,
    outcomes: dict[int, Outcome] | None = None,
    counts: Counter[Outcome] | None = None,
    inputs: BriefingInputs | None = None,
) -> dict[int, Outcome]:
    """Claim and enqueue `slot` for every channel on `schedule`, a page of `page_size`
    channels (`page_size_for` the store by default) per write transaction, yielding to the
    event loop between pages.

    The work per channel is the database's: each page is read as (id, language, follows),
    claimed with one INSERT ... SELECT and queued with another; the briefing is composed
    once per language and audience (`Reach`: the site-only updates a follow-set gets, asked
    of one channel per new follow-set) for the whole schedule (one read of the store) and
    stored once per language and audience, in the first page's transaction that needs it
    (so a page rolled back or a crash between pages leaves no payload behind that nothing
    names, and a later page never names one that was not committed); its rows name it.
    `catching_up`: leave alone channels created after the slot (they did not exist when it
    was due), and do not count duplicates in the metrics. Outcomes go into `outcomes`
    (returned) and are added up in `counts` page by page: no step walks all the channels.
    `inputs`: what the composer reads, if already read for `now`."""
    outcomes = {} if outcomes is None else outcomes
    counts = Counter() if counts is None else counts
    page_size = page_size or page_size_for(store)
    mine: Counter[Outcome] = Counter()
    too_late = now - slot.at > allowance(grace)
    created_by = slot.at if catching_up else None
    # (language, the updates for some sites told) -> payload; -> shared payload id once
    # committed.
    payloads: dict[_Variant, dict[str, object]] = {}
    stored: dict[_Variant, int] = {}
    since = window_start(schedule, slot.at)
    reach = Reach(())
    if not too_late:
        # Composed before the pages, out of the write lock, in a worker thread: a first
        # composition loads the language's locale data (20-80 ms), which must not hold
        # the event loop; the composer is pure. These are the briefings of the channels
        # that follow everything (all of them when no update was for some sites only).
        if inputs is None:
            async with store.read() as tx:
                inputs = await gather_briefing_inputs(tx, campaign, now)
        reach = Reach(inputs.targeted(since, now))
        for language in campaign.languages:
            key = (language, reach.everything)
            payloads[key] = await asyncio.to_thread(
                _payload, campaign, inputs, schedule, key, now, since
            )
    examples: list[str] = []
    after = 0
    while True:
        async with store.write() as tx:
            page = await schedule_page(
                tx, schedule, after=after, limit=page_size, created_by=created_by
            )
            if not page:
                break
            first, last = page[0][0], page[-1][0]
            prefix = None if too_late else _id_prefix(now)
            won = await claim_schedule_page(
                tx, schedule, slot.at, slot.local_date, first=first, last=last, now=now,
                outcome=SKIPPED if too_late else QUEUED, id_prefix=prefix,
                created_by=created_by,
            )  # fmt: skip
            if won and not examples and (too_late or now - slot.at > ON_TIME):
                examples = await addresses(tx, won[:5])
            added: dict[_Variant, int] = {}
            if won and prefix is not None and inputs is not None:
                winners = set(won)
                queued = [row for row in page if row[0] in winners] or page  # all new since
                await reach.learn(tx, {follows: i for i, _, follows in reversed(page)})
                by_variant: dict[_Variant, set[int]] = {}
                for i, language, follows in queued:
                    by_variant.setdefault((language, reach.of(follows)), set()).add(i)
                # The most channels' first: the default, named by no list of ids.
                variants = sorted(by_variant, key=lambda v: (-len(by_variant[v]), _order(v)))
                for key in sorted(set(variants) - payloads.keys(), key=_order):
                    # Out of the event loop, as before the pages (the transaction waits).
                    payloads[key] = await asyncio.to_thread(
                        _payload, campaign, inputs, schedule, key, now, since
                    )
                # Stored once per run, for the variants of the channels this page queues.
                added = await shared_payloads.add(
                    tx, {key: payloads[key] for key in variants if key not in stored}, now
                )
                ids = stored | added
                choices = [
                    PayloadChoice(
                        language,
                        frozenset(by_variant[(language, told)]) if reach.targeted else None,
                        ids[(language, told)],
                    )
                    for language, told in variants[1 if reach.targeted else 0 :]
                ]
                # Without updates for some sites, by language: a channel whose language
                # changed since the page was read gets the page's first one's. With them,
                # by the ids read, the most channels' by default (a row always names a
                # shared payload that exists).
                columns, source = briefing_deliveries(
                    slot.local_date, first=first, last=last, id_prefix=prefix,
                    payloads=choices, default=ids[variants[0]], now=now,
                )  # fmt: skip
                await tx.enqueue_select(columns, source)
        stored.update(added)  # committed
        done = Outcome.SKIPPED if too_late else Outcome.QUEUED
        outcomes.update(dict.fromkeys([i for i, _, _ in page], Outcome.DUPLICATE))
        outcomes.update(dict.fromkeys(won, done))
        mine[done] += len(won)
        mine[Outcome.DUPLICATE] += len(page) - len(won)
        after = last
        await asyncio.sleep(0)  # let requests in between pages
    _log_schedule(slot, mine, examples, now, grace)
    if metrics is not None:
        _count(metrics, mine, count_duplicates=not catching_up)
    counts.update(mine)
    return outcomes


def _id_prefix(now: datetime) -> str:
    """14 characters: the second (8 hex digits) and 6 random hex digits. New outbox rows'
    ids then sort together (cheap inserts into the primary key), and each page's prefix is
    its own."""
    return f"{int(now.timestamp()) & 0xFFFFFFFF:08x}{secrets.token_hex(3)}"


# A schedule's briefing for the channels speaking a language whose follows let in these
# updates for some sites or groups.
_Variant = tuple[str, frozenset[int]]


def _order(variant: _Variant) -> tuple[str, list[int]]:
    return variant[0], sorted(variant[1])


def _payload(
    campaign: Campaign,
    inputs: BriefingInputs,
    schedule: Schedule,
    variant: _Variant,
    now: datetime,
    since: datetime,
) -> dict[str, object]:
    """The outbox payload of the briefing for channels on `schedule` of `variant`: all the
    composer reads of a channel is its language, time zone and what its follows let in."""
    language, reached = variant
    channel = Subscription(
        id=0,
        platform="",
        workspace="",
        channel="",
        language=language,
        briefing_time=schedule.briefing_time,
        timezone=schedule.timezone,
        briefing_days=schedule.briefing_days,
    )
    message = inputs.compose(campaign, channel, now, since=since, reached=reached)
    return {"message": message.to_json()}


def _count(metrics: Metrics, counts: Counter[Outcome], *, count_duplicates: bool) -> None:
    for outcome, n in counts.items():
        if n and outcome in _METRIC and (count_duplicates or outcome is not Outcome.DUPLICATE):
            metrics.briefing_runs.labels(_METRIC[outcome]).inc(n)


def _log_schedule(
    slot: BriefingSlot,
    counts: Counter[Outcome],
    examples: Sequence[str],
    now: datetime,
    grace: timedelta,
) -> None:
    """One line per schedule, naming a few channels: 10,000 skips must not flood the log."""
    minute = timedelta(minutes=1)
    late_by = (now - slot.at) // minute
    if skipped := counts[Outcome.SKIPPED]:
        more = f" and {skipped - len(examples)} more" if skipped > len(examples) else ""
        log.warning(
            "skipped %d briefing(s) missed by more than the %d-minute grace, not sent: "
            "%s (%s, due %s, %d minutes ago)%s",
            skipped,
            grace // minute,
            ", ".join(examples),
            slot.local_date,
            slot.at.isoformat(),
            late_by,
            more,
        )
    elif (late := counts[Outcome.QUEUED]) and now - slot.at > ON_TIME:
        log.info(
            "sending %d briefing(s) late (up to %d minutes), e.g. %s",
            late,
            late_by,
            examples[0] if examples else "?",
        )


async def catch_up(
    store: Store,
    campaign: Campaign,
    now: datetime,
    *,
    grace: timedelta,
    metrics: Metrics | None = None,
    batch_size: int | None = None,
) -> dict[int, Outcome]:
    """After downtime: each channel's latest briefing of the last day that has no run is
    sent late if it is within the grace, else recorded as skipped. Briefings already run
    are left alone (and not counted as duplicates). Works schedule by schedule, a page of
    channels at a time (`queue_schedule`), yielding to the event loop between pages."""
    async with store.read() as tx:
        found = await schedules(tx)
    outcomes: dict[int, Outcome] = {}
    counts: Counter[Outcome] = Counter()
    inputs: BriefingInputs | None = None  # read once for every schedule
    for schedule in found:
        try:
            slot = latest_briefing(schedule, now)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            continue  # the scheduler says so, once
        if slot is None or now - slot.at >= timedelta(days=1):
            continue
        if inputs is None and now - slot.at <= allowance(grace):
            async with store.read() as tx:
                inputs = await gather_briefing_inputs(tx, campaign, now)
        await queue_schedule(
            store, campaign, schedule, slot, now, grace=grace, metrics=metrics,
            page_size=batch_size, catching_up=True, outcomes=outcomes, counts=counts,
            inputs=inputs,
        )  # fmt: skip
    late, skipped = counts[Outcome.QUEUED], counts[Outcome.SKIPPED]
    if late or skipped:
        log.info("briefing catch-up: %d sent late, %d skipped as too late", late, skipped)
    return outcomes


async def send_now(
    store: Store, campaign: Campaign, subscription: Subscription, now: datetime, actor: Actor
) -> str:
    """An admin's `briefing send-now`: queue the briefing at once, audited, and return the
    delivery id. It counts as today's briefing if today's has not gone yet (so the scheduled
    one does not follow it); if it has, this is an extra one."""
    slot = BriefingSlot(now, local_date_for(subscription, now))
    row = NewDelivery(
        dedupe_key=dedupe_key(subscription.id, slot),
        subscription_id=subscription.id,
        platform=subscription.platform,
        action=DeliveryAction.BRIEFING,
        not_before=now,
    )
    async with store.write() as tx:
        won = await claim_runs(
            tx, [RunClaim(subscription.id, slot.local_date, now, QUEUED, row.id)], now
        )
        if not won:
            row = NewDelivery(
                dedupe_key=f"{row.dedupe_key}:now:{now.strftime('%H%M%S')}",
                subscription_id=row.subscription_id,
                platform=row.platform,
                action=row.action,
                not_before=now,
                id=row.id,
            )
        inputs = await gather_briefing_inputs(tx, campaign, now)
        since = window_start(subscription, now)
        reached = await reach_of(tx, inputs, subscription, since, now)
        message = inputs.compose(campaign, subscription, now, since=since, reached=reached)
        await tx.enqueue(
            [
                NewDelivery(
                    dedupe_key=row.dedupe_key,
                    subscription_id=row.subscription_id,
                    platform=row.platform,
                    action=row.action,
                    not_before=now,
                    payload={"message": message.to_json()},
                    id=row.id,
                )
            ],
            now,
        )
        await tx.audit(
            now,
            actor.id,
            "briefing.send_now",
            f"subscription:{subscription.id}",
            None,
            {
                "delivery_id": row.id,
                "local_date": slot.local_date.isoformat(),
                "extra": not won,
            },
        )
    return row.id


__all__ = [
    "Due",
    "Outcome",
    "allowance",
    "catch_up",
    "dedupe_key",
    "queue_briefing",
    "queue_briefings",
    "queue_schedule",
    "send_now",
]
