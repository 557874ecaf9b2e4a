"""Briefing schedule maths, exactly-once queueing, catch-up and leadership. Fixed clocks only:
no test waits for time to pass."""

from __future__ import annotations

import asyncio
import io
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from rich.console import Console
from sqlalchemy import update

import bot.briefings.runs
from adapters.console import ConsoleAdapter
from bot.briefings.compose import gather_briefing_inputs
from bot.briefings.queries import list_runs
from bot.briefings.runs import (
    Due,
    Outcome,
    catch_up,
    queue_briefing,
    queue_briefings,
    queue_schedule,
    send_now,
)
from bot.briefings.schedule import BriefingScheduler, ShiftedTrigger, cron_trigger
from bot.briefings.times import (
    BriefingSlot,
    Schedule,
    format_days,
    latest_briefing,
    local_date_for,
    next_briefing,
    next_briefing_time,
    slot_on,
    window_start,
)
from bot.clock import FixedClock, ShiftedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher
from bot.delivery.leadership import FileLeadership, PostgresLeadership, SoleLeadership
from bot.editorial.admin import Admin
from bot.metrics import Metrics
from bot.models import DeliveryAction, DeliveryState, Subscription
from bot.ports import MessageKind
from bot.store import Store
from bot.store import schema as t
from tests.support import ADMIN, ADMINS, CAMPAIGN, end_backend, fresh_postgres_database

LA = "America/Los_Angeles"
LA_ZONE = ZoneInfo(LA)
GRACE = timedelta(minutes=120)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def la(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=LA_ZONE).astimezone(UTC)


def channel(at: time | None, *, days: frozenset[int] = frozenset(range(7)), tz: str = LA,
            name: str = "c1", language: str = "en") -> Subscription:  # fmt: skip
    return Subscription(
        id=0,
        platform="discord",
        workspace="g1",
        channel=name,
        language=language,
        briefing_time=at,
        timezone=tz,
        briefing_days=days,
    )


def walk(sub: Subscription, start: datetime, count: int) -> list[BriefingSlot]:
    slots = []
    moment = start
    for _ in range(count):
        slot = next_briefing(sub, moment)
        assert slot is not None
        slots.append(slot)
        moment = slot.at
    return slots


def schedule_of(sub: Subscription) -> Schedule:
    schedule = Schedule.of(sub)
    assert schedule is not None
    return schedule


def scheduler_for(store: Store, clock: FixedClock, **options: Any) -> BriefingScheduler:
    """The scheduler as `strikebot run` builds it, for the test campaign."""
    return BriefingScheduler(store, CAMPAIGN, clock, grace=GRACE, metrics=Metrics(), **options)


async def briefing_rows(store: Store) -> list[tuple[int, str]]:
    async with store.read() as tx:
        rows = await tx.list_deliveries(limit=None)
    return sorted(
        (d.subscription_id, d.dedupe_key) for d in rows if d.action is DeliveryAction.BRIEFING
    )


def runs_metric(scheduler: BriefingScheduler, outcome: str) -> float:
    value = scheduler.metrics.registry.get_sample_value(
        "strikebot_briefing_runs_total", {"outcome": outcome}
    )
    return value or 0.0


@pytest.fixture
async def scheduler_factory(
    store: Store, clock: FixedClock
) -> AsyncIterator[list[BriefingScheduler]]:
    """Schedulers made in a test are stopped at its end."""
    made: list[BriefingScheduler] = []
    yield made
    for scheduler in made:
        await scheduler.stop()


# ------------------------------------------------------------------------- pure maths


def test_spring_forward_night_in_los_angeles() -> None:
    # Sunday March 10, 2019: clocks jump from 02:00 PST to 03:00 PDT.
    start = utc(2019, 3, 8, 12)
    at_7 = walk(channel(time(7, 0)), start, 4)
    assert [s.at for s in at_7] == [
        utc(2019, 3, 8, 15), utc(2019, 3, 9, 15), utc(2019, 3, 10, 14), utc(2019, 3, 11, 14)
    ]  # fmt: skip
    at_0130 = walk(channel(time(1, 30)), start, 3)
    assert [s.at for s in at_0130] == [utc(2019, 3, 9, 9, 30), utc(2019, 3, 10, 9, 30),
                                       utc(2019, 3, 11, 8, 30)]  # fmt: skip
    # 02:30 does not exist on March 10: it moves forward by the gap, to 03:30 PDT.
    at_0230 = walk(channel(time(2, 30)), start, 3)
    assert [s.at for s in at_0230] == [utc(2019, 3, 9, 10, 30), utc(2019, 3, 10, 10, 30),
                                       utc(2019, 3, 11, 9, 30)]  # fmt: skip
    assert at_0230[1].at.astimezone(LA_ZONE).strftime("%H:%M %Z") == "03:30 PDT"
    for slots in (at_7, at_0130, at_0230):  # exactly one per local date, none skipped
        dates = [s.local_date for s in slots]
        assert dates == [dates[0] + timedelta(days=i) for i in range(len(dates))]


def test_fall_back_night_in_los_angeles() -> None:
    # Sunday November 3, 2019: clocks go back from 02:00 PDT to 01:00 PST; 01:00-02:00 twice.
    start = utc(2019, 11, 1, 20)
    at_7 = walk(channel(time(7, 0)), start, 3)
    assert [s.at for s in at_7] == [
        utc(2019, 11, 2, 14),
        utc(2019, 11, 3, 15),
        utc(2019, 11, 4, 15),
    ]
    # 01:30 happens twice on November 3: the briefing is the first one (PDT), once.
    at_0130 = walk(channel(time(1, 30)), start, 3)
    assert [s.at for s in at_0130] == [utc(2019, 11, 2, 8, 30), utc(2019, 11, 3, 8, 30),
                                       utc(2019, 11, 4, 9, 30)]  # fmt: skip
    assert [s.local_date for s in at_0130] == [date(2019, 11, 2), date(2019, 11, 3),
                                               date(2019, 11, 4)]  # fmt: skip
    assert at_0130[1].at.astimezone(LA_ZONE).strftime("%H:%M %Z") == "01:30 PDT"
    at_0230 = walk(channel(time(2, 30)), start, 3)
    assert [s.at for s in at_0230] == [utc(2019, 11, 2, 9, 30), utc(2019, 11, 3, 10, 30),
                                       utc(2019, 11, 4, 10, 30)]  # fmt: skip
    # Between the two 01:30s, the latest briefing is still November 3's first one.
    second_0130 = utc(2019, 11, 3, 9, 30)
    assert latest_briefing(channel(time(1, 30)), second_0130) == at_0130[1]
    assert local_date_for(channel(time(1, 30)), second_0130) == date(2019, 11, 3)


def test_cron_trigger_fires_twice_on_fall_back_and_late_on_spring_forward() -> None:
    """What APScheduler itself does, so the claim has something to absorb."""

    def fires(sub: Subscription, start: datetime, count: int) -> list[datetime]:
        trigger = cron_trigger(schedule_of(sub))
        found: list[datetime] = []
        previous = None
        now = start
        for _ in range(count):
            fire = trigger.get_next_fire_time(previous, now)
            found.append(fire.astimezone(UTC))
            previous = now = fire
        return found

    nov = utc(2019, 11, 1, 20)
    assert fires(channel(time(1, 30)), nov, 4) == [
        utc(2019, 11, 2, 8, 30),
        utc(2019, 11, 3, 8, 30),  # 01:30 PDT
        utc(2019, 11, 3, 9, 30),  # 01:30 PST: the same local date again
        utc(2019, 11, 4, 9, 30),
    ]
    assert fires(channel(time(7, 0)), nov, 3) == [
        utc(2019, 11, 2, 14), utc(2019, 11, 3, 15), utc(2019, 11, 4, 15)
    ]  # fmt: skip
    mar = utc(2019, 3, 8, 12)
    assert fires(channel(time(2, 30)), mar, 3) == [
        utc(2019, 3, 9, 10, 30), utc(2019, 3, 10, 10, 30), utc(2019, 3, 11, 9, 30)
    ]  # fmt: skip
    assert fires(channel(time(7, 0)), mar, 3) == [
        utc(2019, 3, 8, 15), utc(2019, 3, 9, 15), utc(2019, 3, 10, 14)
    ]  # fmt: skip
    # Our maths agrees with every fire except the duplicate one.
    for sub, start in ((channel(time(2, 30)), mar), (channel(time(7, 0)), nov)):
        assert fires(sub, start, 3) == [s.at for s in walk(sub, start, 3)]


def test_days_of_week() -> None:
    weekdays = channel(time(7, 0), days=frozenset(range(5)))
    friday = la(2019, 1, 18, 8, 0)
    assert next_briefing_time(weekdays, friday) == la(2019, 1, 21, 7, 0)  # Monday
    assert slot_on(weekdays, date(2019, 1, 19)) is None
    assert str(cron_trigger(schedule_of(weekdays))) == (
        "cron[day_of_week='mon,tue,wed,thu,fri', hour='7', minute='0', second='0']"
    )
    assert cron_trigger(schedule_of(weekdays)).timezone == LA_ZONE
    assert format_days(range(5)) == "mon-fri"
    assert format_days(range(7)) == "daily"
    assert format_days({0, 2, 5, 6}) == "mon,wed,sat-sun"
    assert next_briefing_time(channel(None), friday) is None
    assert next_briefing_time(channel(time(7), days=frozenset()), friday) is None


# ------------------------------------------------------------------------- exactly once


async def subscribe(admin: Admin, sub: Subscription) -> Subscription:
    return await admin.subscribe(ADMIN, sub)


@pytest.mark.parametrize("month", ["march", "november"])
async def test_dst_nights_give_one_briefing_per_local_date(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    scheduler_factory: list[BriefingScheduler],
    month: str,
) -> None:
    """Every fire of the real CronTriggers across the night goes through the job; the 01:30
    job fires twice on fall-back day and the second is a recorded duplicate."""
    start = utc(2019, 3, 7, 20) if month == "march" else utc(2019, 10, 31, 20)
    clock.now = start
    subs = [
        await subscribe(admin, channel(at, name=f"c{at.hour}{at.minute}"))
        for at in (time(7, 0), time(1, 30), time(2, 30))
    ]
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    triggers = scheduler.jobs()
    assert set(triggers) == {schedule_of(s) for s in subs}  # one job per distinct schedule

    fires: list[tuple[datetime, int]] = []
    for sub in subs:
        previous = None
        now = start
        while True:
            # As APScheduler does: the previous fire time as the trigger returned it (in the
            # channel's zone, with its fold), not converted to UTC.
            fire = triggers[schedule_of(sub)].get_next_fire_time(previous, now)
            if fire > start + timedelta(days=5):
                break
            fires.append((fire.astimezone(UTC), sub.id))
            previous = now = fire
    by_id = {sub.id: sub for sub in subs}
    for fire, sub_id in sorted(fires):
        clock.now = fire
        scheduler.fire(schedule_of(by_id[sub_id]))
        await scheduler.drain()

    rows = await briefing_rows(store)
    per_sub = Counter(sub_id for sub_id, _ in rows)
    assert per_sub == {s.id: 5 for s in subs}  # five local dates, five briefings each
    # Exactly one briefing queued per (channel, local date), counted from when each is due
    # in the channel's zone, not from the dedupe key (unique by construction): a second
    # 01:30 on fall-back night that slipped past the claim would show here as a 2.
    async with store.read() as tx:
        briefings = [
            d for d in await tx.list_deliveries(limit=None) if d.action is DeliveryAction.BRIEFING
        ]
    per_local_date = Counter(
        (d.subscription_id, d.not_before.astimezone(LA_ZONE).date()) for d in briefings
    )
    assert len(per_local_date) == 15 and set(per_local_date.values()) == {1}, per_local_date
    if month == "november":
        (doubled,) = [
            d
            for d in briefings
            if d.subscription_id == subs[1].id
            and d.not_before.astimezone(LA_ZONE).date() == date(2019, 11, 3)
        ]
        assert doubled.not_before == utc(2019, 11, 3, 8, 30)  # the first 01:30, in PDT
    expected_fires = 15 + (1 if month == "november" else 0)
    assert len(fires) == expected_fires
    assert runs_metric(scheduler, "queued") == 15
    assert runs_metric(scheduler, "duplicate") == expected_fires - 15
    night = date(2019, 3, 10) if month == "march" else date(2019, 11, 3)
    for sub in subs:
        assert (sub.id, f"briefing:s{sub.id}:{night.isoformat()}") in rows


async def test_queue_briefing_claims_once(store: Store, admin: Admin, clock: FixedClock) -> None:
    sub = await subscribe(admin, channel(time(7, 0)))
    due = la(2019, 1, 18, 7, 0)
    first = await queue_briefing(store, CAMPAIGN, sub.id, due, due)
    again = await queue_briefing(store, CAMPAIGN, sub.id, due, due + timedelta(seconds=5))
    assert (first, again) == (Outcome.QUEUED, Outcome.DUPLICATE)
    async with store.read() as tx:
        [delivery] = [d for d in await tx.list_deliveries() if d.action is DeliveryAction.BRIEFING]
        runs = await list_runs(tx)
    assert delivery.dedupe_key == f"briefing:s{sub.id}:2019-01-18"
    assert delivery.not_before == due
    assert delivery.payload is not None
    message = delivery.payload["message"]
    assert isinstance(message, dict) and message["kind"] == "briefing"
    assert message["title"] == "Morning briefing — Friday, January 18"
    assert [(r.local_date, r.outcome, r.delivery_id) for r in runs] == [
        (date(2019, 1, 18), "queued", delivery.id)
    ]
    assert store.outbox_written.is_set()


async def test_channels_alike_share_one_composition_and_languages_differ(
    store: Store, admin: Admin
) -> None:
    subs = [
        await subscribe(admin, channel(time(7, 0), name=f"c{i}", language="es" if i % 2 else "en"))
        for i in range(6)
    ]
    slot = la(2019, 1, 18, 7, 0)
    outcomes = await queue_briefings(
        store,
        CAMPAIGN,
        [Due(s.id, BriefingSlot(slot, date(2019, 1, 18))) for s in subs],
        slot,
        grace=GRACE,
    )
    assert set(outcomes.values()) == {Outcome.QUEUED}
    async with store.read() as tx:
        payloads = {d.subscription_id: d.payload for d in await tx.list_deliveries()}
    titles = {sid: p["message"]["title"] for sid, p in payloads.items() if p}  # type: ignore[index]
    assert titles[subs[0].id] == "Morning briefing — Friday, January 18"
    assert titles[subs[1].id] == "Resumen de la mañana — viernes, 18 de enero"


async def test_a_schedule_is_queued_page_by_page_as_each_channel_would_be(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    """The scheduler's path (claims and outbox rows made by the database, one composition
    per language) gives each channel what composing for it alone gives."""
    clock.now = la(2019, 1, 17, 12, 0)
    languages = ["en", "es", "es", "es", "en", "es", "en"]
    subs = [
        await subscribe(admin, channel(time(7, 0), name=f"c{i}", language=language))
        for i, language in enumerate(languages)
    ]
    elsewhere = await subscribe(admin, channel(time(8, 0), name="later"))
    gone = await subscribe(admin, channel(time(7, 0), name="gone"))
    await admin.unsubscribe(ADMIN, gone.id)
    schedule = schedule_of(subs[0])
    slot = BriefingSlot(la(2019, 1, 18, 7, 0), date(2019, 1, 18))
    metrics = Metrics()
    now = slot.at + timedelta(seconds=1)
    outcomes = await queue_schedule(
        store, CAMPAIGN, schedule, slot, now, grace=GRACE, metrics=metrics, page_size=2
    )
    assert outcomes == {s.id: Outcome.QUEUED for s in subs}
    async with store.read() as tx:
        rows = [d for d in await tx.list_deliveries(limit=None)]
        runs = {r.subscription_id: r for r in await list_runs(tx)}
        inputs = await gather_briefing_inputs(tx, CAMPAIGN, now)
    assert sorted(d.subscription_id for d in rows) == [s.id for s in subs]
    for sub in subs:
        [row] = [d for d in rows if d.subscription_id == sub.id]
        alone = inputs.compose(CAMPAIGN, sub, now, since=window_start(sub, slot.at))
        assert row.payload == {"message": alone.to_json()}
        assert row.dedupe_key == f"briefing:s{sub.id}:2019-01-18"
        assert (row.action, row.state, row.platform) == (
            DeliveryAction.BRIEFING, DeliveryState.PENDING, sub.platform
        )  # fmt: skip
        assert (row.not_before, row.created_at, row.update_id) == (now, now, None)
        assert runs[sub.id].delivery_id == row.id and len(row.id) <= 25
    assert len({d.id for d in rows}) == len(subs)
    assert elsewhere.id not in runs and gone.id not in runs
    registry = metrics.registry
    assert registry.get_sample_value("strikebot_briefing_runs_total", {"outcome": "queued"}) == 7
    # Again (another fire, another instance): nothing new.
    again = await queue_schedule(store, CAMPAIGN, schedule, slot, now, grace=GRACE, page_size=3)
    assert again == {s.id: Outcome.DUPLICATE for s in subs}
    assert len(await briefing_rows(store)) == len(subs)
    # The next day's, three hours late: recorded as skipped, not sent.
    next_day = BriefingSlot(slot.at + timedelta(days=1), date(2019, 1, 19))
    late = await queue_schedule(
        store, CAMPAIGN, schedule, next_day, next_day.at + timedelta(hours=3), grace=GRACE
    )
    assert late == {s.id: Outcome.SKIPPED for s in subs}
    assert len(await briefing_rows(store)) == len(subs)
    async with store.read() as tx:
        skipped = await list_runs(tx, since=date(2019, 1, 19))
    assert {(r.outcome, r.delivery_id) for r in skipped} == {("skipped", None)}


async def test_two_instances_on_one_postgres_database_queue_one_briefing_per_channel() -> None:
    async with (
        fresh_postgres_database() as url,
        Store.open(url) as store_a,
        Store.open(url) as store_b,
    ):
        clock = FixedClock(la(2019, 1, 17, 12, 0))
        admin = Admin(store_a, CAMPAIGN, ADMINS, clock)
        subs = [await subscribe(admin, channel(time(7, 0), name=f"c{i}")) for i in range(40)]
        slot = BriefingSlot(la(2019, 1, 18, 7, 0), date(2019, 1, 18))
        due = [Due(s.id, slot) for s in subs]
        now = slot.at
        results = await asyncio.gather(
            queue_briefings(store_a, CAMPAIGN, due, now, grace=GRACE),
            queue_briefings(store_b, CAMPAIGN, list(reversed(due)), now, grace=GRACE),
            queue_briefings(store_b, CAMPAIGN, due[:20], now, grace=GRACE),
        )
        outcomes = Counter(o for result in results for o in result.values())
        assert outcomes == {Outcome.QUEUED: 40, Outcome.DUPLICATE: 60}
        # Two whole schedulers (as if leadership had failed) firing every job at once.
        schedulers = [
            scheduler_for(s, clock, leadership=SoleLeadership()) for s in (store_a, store_b)
        ]
        clock.now = slot.at + timedelta(days=1, seconds=30)
        for scheduler in schedulers:
            await scheduler.start()
        # Catch-up at start already raced for Saturday's briefings; fire all jobs again.
        for scheduler in schedulers:
            for sub in subs:
                scheduler.fire(schedule_of(sub))
        await asyncio.gather(*(s.drain() for s in schedulers))
        for scheduler in schedulers:
            await scheduler.stop()
        rows = await briefing_rows(store_a)
        assert Counter(sub_id for sub_id, _ in rows) == {s.id: 2 for s in subs}
        assert len({key for _, key in rows}) == 80


# ------------------------------------------------------------------------- catch-up


async def test_restart_after_30_minutes_down_sends_late_once(
    store: Store, admin: Admin, clock: FixedClock, scheduler_factory: list[BriefingScheduler]
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    # The bot was down from 06:50 and comes back at 07:30.
    clock.now = la(2019, 1, 18, 7, 30)
    first = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(first)
    await first.start()
    assert await briefing_rows(store) == [(sub.id, f"briefing:s{sub.id}:2019-01-18")]
    assert runs_metric(first, "queued") == 1
    await first.stop()
    # Another restart ten minutes later sends nothing more.
    clock.now = la(2019, 1, 18, 7, 40)
    second = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(second)
    await second.start()
    assert len(await briefing_rows(store)) == 1
    assert runs_metric(second, "queued") == runs_metric(second, "duplicate") == 0


async def test_a_briefing_due_while_the_leader_catches_up_is_queued(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    scheduler_factory: list[BriefingScheduler],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    real_catch_up = bot.briefings.runs.catch_up

    async def slow_catch_up(*args: Any, **kwargs: Any) -> dict[int, Outcome]:
        outcomes = await real_catch_up(*args, **kwargs)
        clock.now = la(2019, 1, 18, 7, 0, 3)  # 07:00 passed while it ran
        return outcomes

    monkeypatch.setattr("bot.briefings.schedule.catch_up", slow_catch_up)
    clock.now = la(2019, 1, 18, 6, 59, 59)  # taking over the lead one second before 07:00
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    await scheduler.drain()
    assert await briefing_rows(store) == [(sub.id, f"briefing:s{sub.id}:2019-01-18")]


async def test_restart_after_5_hours_down_sends_nothing_and_records_the_skip(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    scheduler_factory: list[BriefingScheduler],
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    clock.now = la(2019, 1, 18, 12, 0)
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    with caplog.at_level("WARNING", logger="strikebot.briefings"):
        await scheduler.start()
    assert await briefing_rows(store) == []
    async with store.read() as tx:
        runs = await list_runs(tx)
    assert [(r.subscription_id, r.local_date, r.outcome, r.delivery_id) for r in runs] == [
        (sub.id, date(2019, 1, 18), "skipped", None)
    ]
    assert runs_metric(scheduler, "skipped_late") == 1
    assert "skipped 1 briefing(s) missed by more than the 120-minute grace" in caplog.text
    assert "discord:g1/c1 (2019-01-18, due 2019-01-18T15:00:00+00:00, 300 minutes ago)" in (
        caplog.text
    )
    # Tomorrow's briefing is still on the schedule.
    trigger = scheduler.jobs()[schedule_of(sub)]
    assert trigger.get_next_fire_time(None, clock.now) == la(2019, 1, 19, 7, 0)


async def test_catch_up_leaves_alone_channels_created_after_their_time(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    clock.now = la(2019, 1, 18, 7, 20)  # subscribed after today's 07:00 had passed
    await subscribe(admin, channel(time(7, 0)))
    clock.now = la(2019, 1, 18, 7, 30)
    outcomes = await catch_up(store, CAMPAIGN, clock.now, grace=GRACE)
    assert outcomes == {}
    assert await briefing_rows(store) == []


async def test_a_job_firing_too_late_is_skipped_not_sent(
    store: Store, admin: Admin, clock: FixedClock, scheduler_factory: list[BriefingScheduler]
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    on_time = await subscribe(admin, channel(time(7, 0), name="a"))
    late = await subscribe(admin, channel(time(7, 0), name="b"))
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    clock.now = la(2019, 1, 18, 8, 30)  # 90 minutes late: within the 2-hour grace
    await queue_briefings(
        store,
        CAMPAIGN,
        [Due(on_time.id, BriefingSlot(la(2019, 1, 18, 7, 0), date(2019, 1, 18)))],
        clock.now,
        grace=GRACE,
        metrics=scheduler.metrics,
    )
    clock.now = la(2019, 1, 18, 10, 0)  # 3 hours late: the job itself fires now
    scheduler.fire(schedule_of(late))
    await scheduler.drain()
    assert await briefing_rows(store) == [(on_time.id, f"briefing:s{on_time.id}:2019-01-18")]
    assert runs_metric(scheduler, "skipped_late") == 1


async def test_send_now_counts_as_todays_briefing_once(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    early = la(2019, 1, 18, 6, 30)
    first = await send_now(store, CAMPAIGN, sub, early, ADMIN)
    # The 07:00 job then finds today's briefing already sent.
    outcome = await queue_briefing(store, CAMPAIGN, sub.id, la(2019, 1, 18, 7, 0), early)
    assert outcome is Outcome.DUPLICATE
    # An admin asking again the same day gets an extra one.
    extra = await send_now(store, CAMPAIGN, sub, la(2019, 1, 18, 9, 15), ADMIN)
    assert [key for _, key in await briefing_rows(store)] == [
        f"briefing:s{sub.id}:2019-01-18",
        f"briefing:s{sub.id}:2019-01-18:now:171500",
    ]
    # Each is audited: who asked, for which channel, which delivery.
    async with store.read() as tx:
        entries = await tx.list_audit(target=f"subscription:{sub.id}")
    sent = [e for e in entries if e.action == "briefing.send_now"]
    assert [(e.actor, e.at, e.after) for e in reversed(sent)] == [
        (ADMIN.id, early, {"delivery_id": first, "local_date": "2019-01-18", "extra": False}),
        (ADMIN.id, la(2019, 1, 18, 9, 15),
         {"delivery_id": extra, "local_date": "2019-01-18", "extra": True}),
    ]  # fmt: skip


# ------------------------------------------------------------------------- scheduler


async def test_refresh_follows_changes_made_by_another_process(
    store: Store, admin: Admin, clock: FixedClock, scheduler_factory: list[BriefingScheduler]
) -> None:
    clock.now = la(2019, 1, 18, 6, 0)
    sub = await subscribe(admin, channel(None))
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    assert scheduler.jobs() == {}
    # Another process (its own engine on the same database) turns the briefing on.
    async with Store.open(store.url, migrate=False) as other:
        other_admin = Admin(other, CAMPAIGN, ADMINS, clock)
        await other_admin.subscribe(ADMIN, replace(sub, briefing_time=time(6, 30)))
        await scheduler.refresh()
        (only,) = scheduler.jobs().values()
        assert str(only) == (
            "cron[day_of_week='mon,tue,wed,thu,fri,sat,sun', hour='6', minute='30', second='0']"
        )
        await other_admin.subscribe(
            ADMIN,
            replace(
                sub,
                briefing_time=time(8, 15),
                timezone="America/New_York",
                briefing_days=frozenset(range(5)),
            ),
        )
        await scheduler.refresh()
        trigger = scheduler.jobs()[Schedule(time(8, 15), "America/New_York", frozenset(range(5)))]
        assert trigger.timezone == ZoneInfo("America/New_York")
        # 09:00 in New York now, so Monday (not Saturday) at 08:15 EST.
        assert trigger.get_next_fire_time(None, clock.now) == utc(2019, 1, 21, 13, 15)
        await other_admin.subscribe(ADMIN, replace(sub, briefing_time=None))
        await scheduler.refresh()
        # Jobs of schedules nobody uses any more go at the next full look (or when they
        # fire and find no channel); until then they queue nothing.
        clock.now = la(2019, 1, 18, 6, 30)
        scheduler.fire(Schedule(time(6, 30), LA, frozenset(range(7))))
        await scheduler.drain()
        assert await briefing_rows(store) == []
        scheduler.full_refresh_seconds = 0
        await scheduler.refresh()
        assert scheduler.jobs() == {}
        scheduler.full_refresh_seconds = 3600
        # Set between two polls to a time that has just passed: queued by the refresh.
        clock.now = la(2019, 1, 18, 7, 0, 40)
        await other_admin.subscribe(ADMIN, replace(sub, briefing_time=time(7, 0)))
        await scheduler.refresh()
        await scheduler.drain()
    assert await briefing_rows(store) == [(sub.id, f"briefing:s{sub.id}:2019-01-18")]


async def test_a_job_for_a_schedule_changed_meanwhile_queues_nothing(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    old_slot = BriefingSlot(la(2019, 1, 18, 7, 0), date(2019, 1, 18))
    await admin.subscribe(ADMIN, replace(sub, briefing_time=time(9, 0)))
    outcomes = await queue_briefings(store, CAMPAIGN, [Due(sub.id, old_slot)], old_slot.at,
                                     grace=GRACE)  # fmt: skip
    assert outcomes == {sub.id: Outcome.GONE}
    await admin.unsubscribe(ADMIN, sub.id)
    new_slot = BriefingSlot(la(2019, 1, 18, 9, 0), date(2019, 1, 18))
    outcomes = await queue_briefings(store, CAMPAIGN, [Due(sub.id, new_slot)], new_slot.at,
                                     grace=GRACE)  # fmt: skip
    assert outcomes == {sub.id: Outcome.GONE}
    assert await briefing_rows(store) == []


async def test_apscheduler_runs_the_job_it_was_given(
    store: Store, admin: Admin, clock: FixedClock, scheduler_factory: list[BriefingScheduler]
) -> None:
    """The real AsyncIOScheduler path: a job made due now runs, queues, and is rescheduled."""
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(admin, channel(time(7, 0)))
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    aps = scheduler.apscheduler
    assert aps is not None
    [job] = aps.get_jobs()
    assert (job.coalesce, job.misfire_grace_time) == (True, 7200)
    assert type(aps._jobstores["default"]).__name__ == "MemoryJobStore"
    clock.now = la(2019, 1, 18, 7, 0, 1)  # what the job sees as "now"
    store.outbox_written.clear()
    job.modify(next_run_time=datetime.now(UTC))
    aps.wakeup()
    await asyncio.wait_for(store.outbox_written.wait(), timeout=30)  # a hang guard
    await scheduler.drain()
    assert await briefing_rows(store) == [(sub.id, f"briefing:s{sub.id}:2019-01-18")]
    assert aps.get_job(job.id).next_run_time > datetime.now(UTC)


def test_a_shifted_trigger_answers_in_real_time_what_is_due_on_the_shifted_clock() -> None:
    """APScheduler keeps real-time timers; the trigger translates both ways."""
    cron = cron_trigger(Schedule(time(7, 0), LA, frozenset(range(7))))
    shift = la(2019, 1, 18, 6, 0) - utc(2026, 11, 30, 12, 0)
    trigger = ShiftedTrigger(cron, shift)
    first = trigger.get_next_fire_time(None, utc(2026, 11, 30, 12, 0))
    assert first == utc(2026, 11, 30, 13, 0)  # one real hour on: 07:00 on the shifted clock
    second = trigger.get_next_fire_time(first, first)
    assert second is not None and second + shift == la(2019, 1, 19, 7, 0)


async def test_a_replay_fires_the_briefing_when_the_shifted_clock_reaches_it(
    store: Store, scheduler_factory: list[BriefingScheduler]
) -> None:
    """`strikebot run --now`: the real AsyncIOScheduler fires the 07:00 job when the shifted
    clock reads 07:00 on the replayed day, not when the real clock does."""
    clock = ShiftedClock(la(2019, 1, 18, 6, 59, 59) + timedelta(milliseconds=700))
    replay_admin = Admin(store, CAMPAIGN, ADMINS, clock)
    sub = await replay_admin.subscribe(ADMIN, channel(time(7, 0)))
    assert sub.created_at is not None and sub.created_at.year == 2019
    scheduler = BriefingScheduler(store, CAMPAIGN, clock, grace=GRACE, metrics=Metrics(),
                                  leadership=SoleLeadership())  # fmt: skip
    scheduler_factory.append(scheduler)
    store.outbox_written.clear()
    await scheduler.start()
    aps = scheduler.apscheduler
    assert aps is not None
    [job] = aps.get_jobs()
    assert isinstance(job.trigger, ShiftedTrigger)
    assert await briefing_rows(store) == []  # nothing due yet on the replayed clock
    await asyncio.wait_for(store.outbox_written.wait(), timeout=30)  # a hang guard
    await scheduler.drain()
    assert await briefing_rows(store) == [(sub.id, f"briefing:s{sub.id}:2019-01-18")]
    assert job.next_run_time + clock.shift == la(2019, 1, 19, 7, 0)


# ------------------------------------------------------------------------- leadership


async def test_only_the_advisory_lock_holder_runs_jobs_on_postgres() -> None:
    async with (
        fresh_postgres_database() as url,
        Store.open(url) as store_a,
        Store.open(url) as store_b,
    ):
        clock = FixedClock(la(2019, 1, 17, 12, 0))
        sub = await subscribe(Admin(store_a, CAMPAIGN, ADMINS, clock), channel(time(7, 0)))
        lock_a = PostgresLeadership(store_a.engine.url)
        lock_b = PostgresLeadership(store_b.engine.url)
        first = scheduler_for(store_a, clock, leadership=lock_a)
        second = scheduler_for(store_b, clock, leadership=lock_b)
        try:
            await first.start()
            await second.start()
            assert first.is_leader and not second.is_leader
            assert set(first.jobs()) == {schedule_of(sub)} and second.jobs() == {}
            second.fire(schedule_of(sub))  # a follower has no jobs: firing does nothing
            await second.drain()
            assert await briefing_rows(store_a) == []
            assert not await second.elect()  # a retry round while the holder lives

            # The holder stops: the next round (every 30 s in production) takes over.
            await first.stop()
            assert await second.elect()
            assert second.is_leader and set(second.jobs()) == {schedule_of(sub)}

            # The new holder dies (its connection is cut): PostgreSQL frees the lock.
            third = scheduler_for(store_a, clock, leadership=PostgresLeadership(store_a.engine.url))
            await third.start()
            assert not third.is_leader
            assert lock_b.backend_pid
            await end_backend(store_a, lock_b.backend_pid)
            assert await third.elect()
            assert not await second.elect()  # it notices and stands down
            assert not second.is_leader and second.jobs() == {}
            await third.stop()
        finally:
            await second.stop()
            await first.stop()


async def test_one_scheduler_per_sqlite_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'one.db'}"
    async with Store.open(url) as store:
        clock = FixedClock(la(2019, 1, 17, 12, 0))
        first = scheduler_for(store, clock)
        second = scheduler_for(store, clock)
        await first.start()
        await second.start()
        try:
            assert first.is_leader and not second.is_leader
            await first.stop()
            assert await second.elect()
        finally:
            await second.stop()
            await first.stop()
    lock = FileLeadership(tmp_path / "x.lock")
    assert await lock.acquire() and await lock.still_held()
    await lock.release()
    assert not await lock.still_held()


async def test_a_channel_with_an_unknown_time_zone_does_not_stop_the_others(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    scheduler_factory: list[BriefingScheduler],
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock.now = la(2019, 1, 17, 12, 0)
    good = await subscribe(admin, channel(time(7, 0), name="good"))
    bad = await subscribe(admin, channel(time(7, 0), name="bad"))
    async with store.write() as tx:  # e.g. a zone only a newer tz database knows
        await tx.conn.execute(
            update(t.subscriptions)
            .where(t.subscriptions.c.id == bad.id)
            .values(timezone="America/Atlantis")
        )
    clock.now = la(2019, 1, 18, 7, 30)
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    assert set(scheduler.jobs()) == {schedule_of(good)}
    assert await briefing_rows(store) == [(good.id, f"briefing:s{good.id}:2019-01-18")]
    assert "the unknown time zone 'America/Atlantis' get no briefing" in caplog.text


async def test_the_dispatcher_delivers_a_queued_briefing_once(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    scheduler_factory: list[BriefingScheduler],
) -> None:
    """Scheduler → outbox → the real dispatcher → the console adapter, and a second fire
    that day changes nothing."""
    clock.now = la(2019, 1, 17, 12, 0)
    sub = await subscribe(
        admin,
        replace(channel(time(7, 0), language="es"), platform="console", workspace="local"),
    )
    scheduler = scheduler_for(store, clock, leadership=SoleLeadership())
    scheduler_factory.append(scheduler)
    await scheduler.start()
    console = ConsoleAdapter(Console(file=io.StringIO()), json_output=True)
    dispatcher = Dispatcher(
        store,
        {"console": console},
        CAMPAIGN,
        clock,
        settings=DeliverySection(),
        metrics=scheduler.metrics,
    )
    for minutes in (0, 1):  # the job, then a stray second fire a minute later
        clock.now = la(2019, 1, 18, 7, minutes)
        scheduler.fire(schedule_of(sub))
        await scheduler.drain()
        await dispatcher.drain()
    [(where, message)] = console.messages.values()
    assert (where.workspace, where.channel) == ("local", "c1")
    assert message.kind is MessageKind.BRIEFING
    assert message.title == "Resumen de la mañana — viernes, 18 de enero"
    async with store.read() as tx:
        [delivery] = await tx.list_deliveries()
    assert delivery.state is DeliveryState.SENT
