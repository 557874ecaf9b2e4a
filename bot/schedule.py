"""The scheduler that queues each channel's briefing at its local time.

When a briefing is due is pure maths, in `bot.briefing_times` (DST-aware: a wall time that
does not exist moves forward by the gap; one that happens twice means the first).
APScheduler's `CronTrigger` agrees on the first rule and fires *twice* on the second
(01:30 PDT and 01:30 PST). That second fire belongs to the same local date, so the unique
(subscription, local date) claim in `briefing_runs` turns it into a recorded duplicate: one
briefing per channel per local date, whatever fires.

`BriefingScheduler` runs APScheduler 3.11's `AsyncIOScheduler` with one `CronTrigger` per
subscription (its own `ZoneInfo`, time and days), kept in memory (no pickled job store) and
rebuilt from the store: at start, on `refresh()`, and every `poll_seconds` so that changes
made by another process are picked up. Due briefings are handed to
`bot.briefing_runs.queue_briefings` in batches. On PostgreSQL only the instance holding an
advisory lock runs jobs (see `bot.leader`); on SQLite one process does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger

from bot.briefing_runs import Due, catch_up, queue_briefings
from bot.briefing_times import DAY_NAMES, BriefingSlot, latest_briefing, schedulable
from bot.clock import Clock
from bot.errors import InvalidInput
from bot.leader import Leadership, leadership_for
from bot.metrics import Metrics
from bot.models import Campaign, Subscription
from bot.store import Store
from bot.store.briefings import scheduled_subscriptions

log = logging.getLogger("strikebot.schedule")

# A job may fire a hair before the scheduler's clock says the slot has come.
_FIRE_TOLERANCE = timedelta(seconds=2)


class _RememberingCronTrigger(CronTrigger):  # type: ignore[misc]
    """A `CronTrigger` that remembers its last answers.

    `get_next_fire_time(previous, now)` depends only on its two instants (APScheduler
    always asks with `now` at or after `previous`), and at 07:00
    APScheduler asks it the very same question for each of 10,000 jobs sharing one
    schedule (twice per job): computing it once makes that pass cheap.
    """

    __slots__ = ("_answers",)

    def __init__(self, **fields: Any) -> None:
        super().__init__(**fields)
        self._answers: dict[tuple[datetime | None, datetime], datetime | None] = {}

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        # As UTC instants: two aware datetimes sharing a zone compare equal on their wall
        # time alone, so 01:30 PDT and 01:30 PST would otherwise be one key.
        key = (None if previous_fire_time is None else previous_fire_time.astimezone(UTC),
               now.astimezone(UTC))  # fmt: skip
        if key in self._answers:
            return self._answers[key]
        answer: datetime | None = super().get_next_fire_time(previous_fire_time, now)
        if len(self._answers) >= 64:
            self._answers.clear()
        self._answers[key] = answer
        return answer


def cron_trigger(subscription: Subscription) -> CronTrigger:
    """APScheduler's trigger for a channel: its time, its days, in its own zone."""
    if subscription.briefing_time is None or not subscription.briefing_days:
        raise InvalidInput(f"{subscription.address} has no briefing time; set one first.")
    at = subscription.briefing_time
    return _RememberingCronTrigger(
        day_of_week=",".join(DAY_NAMES[d] for d in sorted(subscription.briefing_days)),
        hour=at.hour,
        minute=at.minute,
        second=0,
        timezone=ZoneInfo(subscription.timezone),
    )


def _schedule_key(subscription: Subscription) -> tuple[object, ...]:
    """What a job depends on: a change here replaces the job."""
    return (
        subscription.briefing_time,
        subscription.timezone,
        tuple(sorted(subscription.briefing_days)),
    )


# ------------------------------------------------------------------------- scheduler


class BriefingScheduler:
    """Queues every channel's briefing at its local time, once, on one instance at a time.

    `start()` tries to become the leader at once and keeps trying every `election_seconds`
    (so another instance takes over within a minute of the leader dying); the leader
    catches up on missed briefings, builds one job per subscription and re-reads the
    subscriptions every `poll_seconds`.
    """

    def __init__(
        self,
        store: Store,
        campaign: Campaign,
        clock: Clock,
        *,
        grace: timedelta,
        metrics: Metrics | None = None,
        poll_seconds: float = 60.0,
        election_seconds: float = 30.0,
        leadership: Leadership | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.clock = clock
        self.grace = grace
        self.metrics = metrics or Metrics()
        self.poll_seconds = poll_seconds
        self.election_seconds = election_seconds
        self._leadership = leadership
        self._scheduler: AsyncIOScheduler | None = None
        self._keys: dict[int, tuple[object, ...]] = {}
        self._triggers: dict[tuple[object, ...], CronTrigger] = {}
        self._warned: set[int] = set()
        self._subs: dict[int, Subscription] = {}
        self._pending: dict[int, Due] = {}
        self._flushing: asyncio.Task[None] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._lock = asyncio.Lock()
        self._refreshed_at: datetime | None = None

    @property
    def is_leader(self) -> bool:
        return self._scheduler is not None

    @property
    def apscheduler(self) -> AsyncIOScheduler | None:
        """The running APScheduler while this instance leads (for inspection)."""
        return self._scheduler

    # -- lifecycle ---------------------------------------------------------------

    async def start(self) -> None:
        """Try to lead now, then keep the election / refresh loop running in the background."""
        if self._leadership is None:
            self._leadership = leadership_for(self.store)
        self._stopping.clear()
        try:
            await self.elect()
        except Exception:
            log.exception("could not start the briefing scheduler yet; retrying in the background")
        self._loop_task = asyncio.create_task(self._loop(), name="briefing-scheduler")

    async def stop(self) -> None:
        """Stop the loop and the jobs, finish a batch being queued, release leadership."""
        self._stopping.set()
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        self._demote()
        await self.drain()
        if self._leadership is not None:
            await self._leadership.release()

    async def elect(self) -> bool:
        """One election round: keep, lose or take the lead. Returns whether we lead now."""
        assert self._leadership is not None, "call start() first"
        async with self._lock:
            if self.is_leader:
                if await self._leadership.still_held():
                    return True
                log.warning("lost the briefing scheduler lock; another instance may take over")
                self._demote()
            if not await self._leadership.acquire():
                return False
            log.info("this instance now runs the briefing scheduler")
            await self._promote()
            return True

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            wait = self.poll_seconds if self.is_leader else self.election_seconds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=wait)
            if self._stopping.is_set():
                return
            try:
                if await self.elect():
                    await self.refresh()
            except Exception:
                log.exception("briefing scheduler round failed; retrying next round")

    async def _promote(self) -> None:
        grace_seconds = max(int(self.grace.total_seconds()), 60)
        scheduler = AsyncIOScheduler(
            jobstores={"default": MemoryJobStore()},
            job_defaults={
                "coalesce": True,
                "misfire_grace_time": grace_seconds,
                "max_instances": 1,
            },
            timezone=UTC,
        )
        self._scheduler = scheduler
        self._keys.clear()
        self._subs.clear()
        now = self.clock()
        try:
            await catch_up(self.store, self.campaign, now, grace=self.grace, metrics=self.metrics)
            self._refreshed_at = now
            # Jobs added before start() are scheduled in one go (one wake-up, not 10,000).
            await self._sync(now, fire_missed=False)
            scheduler.start()
            # start() schedules each job from the moment it runs: a briefing that fell due
            # during the catch-up (a leader taking over at 06:59:59) is neither caught up nor
            # scheduled. Queue it here; the claim makes a fire of the job too a duplicate.
            started = self.clock()
            for sub in self._subs.values():
                slot = latest_briefing(sub, started)
                if slot is not None and now < slot.at:
                    self._add_due(sub, slot)
        except BaseException:
            # Step down so that the next round (here or elsewhere) starts over cleanly.
            self._demote()
            assert self._leadership is not None
            await self._leadership.release()
            raise

    def _demote(self) -> None:
        scheduler, self._scheduler = self._scheduler, None
        self._keys.clear()
        self._subs.clear()
        if scheduler is not None and scheduler.running:
            scheduler.shutdown(wait=False)

    # -- jobs ------------------------------------------------------------------

    async def refresh(self) -> None:
        """Re-read the subscriptions and add, replace or remove jobs to match."""
        if not self.is_leader:
            return
        await self._sync(self.clock(), fire_missed=True)

    async def _sync(self, now: datetime, *, fire_missed: bool) -> None:
        async with self.store.read() as tx:
            found = await scheduled_subscriptions(tx)
        subs = {s.id: s for s in schedulable(found, self._warned)}
        scheduler = self._scheduler
        if scheduler is None:
            return
        since = self._refreshed_at or now
        for sub_id in set(self._keys) - set(subs):
            scheduler.remove_job(_job_id(sub_id))
            del self._keys[sub_id]
            self._subs.pop(sub_id, None)
        for sub in subs.values():
            key = _schedule_key(sub)
            self._subs[sub.id] = sub
            if self._keys.get(sub.id) == key:
                continue
            if not sub.briefing_days:
                if sub.id in self._keys:
                    scheduler.remove_job(_job_id(sub.id))
                    del self._keys[sub.id]
                continue
            trigger = self._triggers.get(key)
            if trigger is None:  # stateless: channels with the same schedule share one
                trigger = self._triggers[key] = cron_trigger(sub)
            scheduler.add_job(
                self._fire,
                trigger,
                args=[sub.id],
                id=_job_id(sub.id),
                name=f"briefing {sub.address}",
                replace_existing=True,
            )
            self._keys[sub.id] = key
            # A schedule set (or changed) between two polls to a time that has just passed.
            slot = latest_briefing(sub, now)
            if fire_missed and slot is not None and since < slot.at <= now:
                self._add_due(sub, slot)
        self._refreshed_at = now

    def jobs(self) -> dict[int, CronTrigger]:
        """Subscription id -> its trigger, for inspection."""
        if self._scheduler is None:
            return {}
        found: dict[int, CronTrigger] = {}
        for job in self._scheduler.get_jobs():
            if isinstance(job.trigger, CronTrigger):
                found[int(job.args[0])] = job.trigger
        return found

    async def _fire(self, sub_id: int) -> None:
        """The job. It only adds to the next batch: no I/O, so jobs firing together all
        land in one batch."""
        self.fire(sub_id)

    def fire(self, sub_id: int) -> None:
        """Hand this subscription's latest due briefing to the batcher (what its job does)."""
        sub = self._subs.get(sub_id)
        if sub is None:
            return
        slot = latest_briefing(sub, self.clock() + _FIRE_TOLERANCE)
        if slot is not None:
            self._add_due(sub, slot)

    def _add_due(self, sub: Subscription, slot: BriefingSlot) -> None:
        self._pending[sub.id] = Due(sub.id, slot)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush(), name="briefing-batch")

    async def drain(self) -> None:
        """Wait until every due briefing handed to the batcher has been queued."""
        while self._flushing is not None and not self._flushing.done():
            await asyncio.shield(self._flushing)

    async def _flush(self) -> None:
        """Queue everything due in batches. Jobs firing together (10,000 channels at 07:00)
        all land here before the first batch starts, since each job only adds a key."""
        await asyncio.sleep(0)
        delay = 1.0
        while self._pending:
            batch = list(self._pending.values())
            self._pending.clear()
            now = self.clock()
            try:
                await queue_briefings(
                    self.store,
                    self.campaign,
                    batch,
                    now,
                    grace=self.grace,
                    metrics=self.metrics,
                )
                delay = 1.0
            except Exception:
                log.exception("queueing %d briefings failed; retrying in %.0fs", len(batch), delay)
                for due in batch:
                    if now - due.slot.at < self.grace:
                        self._pending.setdefault(due.subscription_id, due)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                if self._stopping.is_set():
                    log.error("stopping with %d briefings not queued", len(self._pending))
                    return
                delay = min(delay * 2, 60.0)


def _job_id(sub_id: int) -> str:
    return f"briefing:s{sub_id}"
