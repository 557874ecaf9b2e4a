"""The scheduler that queues each channel's briefing at its local time.

When a briefing is due is pure maths, in `bot.briefings.times` (DST-aware: a wall time that
does not exist moves forward by the gap; one that happens twice means the first).
APScheduler's `CronTrigger` agrees on the first rule and fires *twice* on the second
(01:30 PDT and 01:30 PST). That second fire belongs to the same local date, so the unique
(subscription, local date) claim in `briefing_runs` turns it into a recorded duplicate: one
briefing per channel per local date, whatever fires.

Cost follows the *schedules*, not the channels. `BriefingScheduler` runs APScheduler 3.11's
`AsyncIOScheduler` with one `CronTrigger` per distinct schedule (time, days, time zone:
100,000 channels share a few dozen), kept in memory (no pickled job store). When a
schedule's job fires, its channels are read page by page through the schedule index and
queued in batches (`bot.briefings.runs.queue_briefings`), yielding to the event loop between
batches. Changes reach it incrementally: every subscription change is recorded under a
version (`Tx.next_subscriptions_version`), and each poll reads only the rows changed since
the version it saw; a full look at the distinct schedules (one grouped read of the index)
happens at promotion and every `full_refresh_seconds`. On PostgreSQL only the instance
holding an advisory lock runs jobs (see `bot.delivery.leadership`); on SQLite one process does.

APScheduler times its jobs on the real clock. Under a replay (`strikebot run --now`, a
`bot.clock.ShiftedClock`) each trigger is wrapped in `ShiftedTrigger`, so a job fires when
the shifted clock reaches its slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

from bot.briefings.queries import schedules, subscriptions_changed
from bot.briefings.runs import Due, catch_up, queue_briefings, queue_schedule
from bot.briefings.times import DAY_NAMES, BriefingSlot, Schedule, latest_briefing
from bot.clock import Clock, clock_shift
from bot.delivery.leadership import Leadership, leadership_for
from bot.metrics import Metrics
from bot.models import Campaign
from bot.store import Store

log = logging.getLogger("strikebot.schedule")

# A job may fire a hair before the scheduler's clock says the slot has come.
_FIRE_TOLERANCE = timedelta(seconds=2)


def cron_trigger(schedule: Schedule) -> CronTrigger:
    """APScheduler's trigger for a schedule: its time, its days, in its own zone."""
    at = schedule.briefing_time
    return CronTrigger(
        day_of_week=",".join(DAY_NAMES[d] for d in sorted(schedule.briefing_days)),
        hour=at.hour,
        minute=at.minute,
        second=0,
        timezone=ZoneInfo(schedule.timezone),
    )


class ShiftedTrigger(BaseTrigger):  # type: ignore[misc]  # APScheduler ships no types
    """A trigger whose times are read on a shifted clock (`strikebot run --now`).

    APScheduler keeps its timers on the real clock (`datetime.now()`, also in the misfire
    check). This translates: the inner trigger is asked on the shifted clock, and its answer
    is handed back in real time, so the job fires when the shifted clock reaches the slot.
    """

    def __init__(self, inner: CronTrigger, shift: timedelta) -> None:
        self.inner = inner
        self.shift = shift

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        previous = None if previous_fire_time is None else previous_fire_time + self.shift
        nxt: datetime | None = self.inner.get_next_fire_time(previous, now + self.shift)
        return None if nxt is None else nxt - self.shift

    def __str__(self) -> str:
        return f"{self.inner} (shifted by {self.shift})"


def usable(schedule: Schedule, warned: set[Schedule]) -> bool:
    """Whether the schedule's time zone loads. A broken one (a zone name from a newer tz
    database, a hand edit) is logged once and left out; it never stops the others."""
    try:
        ZoneInfo(schedule.timezone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        if schedule not in warned:
            warned.add(schedule)
            log.error(
                "channels with the unknown time zone %r get no briefing; set a valid one "
                "with `strikebot briefing set --channel ... --timezone ...`",
                schedule.timezone,
            )
        return False
    return True


class BriefingScheduler:
    """Queues every channel's briefing at its local time, once, on one instance at a time.

    `start()` tries to become the leader at once and keeps trying every `election_seconds`
    (so another instance takes over within a minute of the leader dying); the leader
    catches up on missed briefings, builds one job per schedule and reads what changed
    every `poll_seconds`.
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
        full_refresh_seconds: float = 3600.0,
        batch_size: int | None = None,  # channels per write transaction: the store's own
        leadership: Leadership | None = None,
    ) -> None:
        self.store = store
        self.campaign = campaign
        self.clock = clock
        self.grace = grace
        self.metrics = metrics or Metrics()
        self.poll_seconds = poll_seconds
        self.election_seconds = election_seconds
        self.full_refresh_seconds = full_refresh_seconds
        self.batch_size = batch_size
        self._leadership = leadership
        self._scheduler: AsyncIOScheduler | None = None
        self._jobs: dict[Schedule, CronTrigger] = {}
        self._warned: set[Schedule] = set()
        self._version = 0
        self._full_at = 0.0  # time.monotonic() of the last full look at the schedules
        self._due_schedules: dict[Schedule, BriefingSlot] = {}
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
        self._jobs.clear()
        now = self.clock()
        try:
            async with self.store.read() as tx:
                self._version = await tx.subscriptions_version()
            await catch_up(
                self.store,
                self.campaign,
                now,
                grace=self.grace,
                metrics=self.metrics,
                batch_size=self.batch_size,
            )
            self._refreshed_at = now
            # Jobs added before start() are scheduled in one go.
            await self._look_at_every_schedule()
            scheduler.start()
            # start() schedules each job from the moment it runs: a briefing that fell due
            # during the catch-up (a leader taking over at 06:59:59) is neither caught up nor
            # scheduled. Queue it here; the claim makes a fire of the job too a duplicate.
            started = self.clock()
            for schedule in self._jobs:
                slot = latest_briefing(schedule, started)
                if slot is not None and now < slot.at:
                    self._add_schedule(schedule, slot)
        except BaseException:
            # Step down so that the next round (here or elsewhere) starts over cleanly.
            self._demote()
            assert self._leadership is not None
            await self._leadership.release()
            raise

    def _demote(self) -> None:
        scheduler, self._scheduler = self._scheduler, None
        self._jobs.clear()
        if scheduler is not None and scheduler.running:
            scheduler.shutdown(wait=False)

    # -- jobs ------------------------------------------------------------------

    async def refresh(self) -> None:
        """Apply what changed since the last look: channels given a (new) schedule get its
        job, and one set to a time that has just passed gets that briefing now. Every
        `full_refresh_seconds`, jobs of schedules no channel uses any more are dropped."""
        if not self.is_leader:
            return
        now = self.clock()
        since = self._refreshed_at or now
        async with self.store.read() as tx:
            version = await tx.subscriptions_version()
            changed = await subscriptions_changed(tx, self._version) if version else []
        self._version = max(self._version, version)
        for sub in changed:
            schedule = Schedule.of(sub)
            if schedule is None or not usable(schedule, self._warned):
                continue
            self._add_job(schedule)
            # A schedule set (or changed) between two polls to a time that has just passed.
            slot = latest_briefing(schedule, now)
            if slot is not None and since < slot.at <= now:
                self._pending[sub.id] = Due(sub.id, slot)
                self._start_flushing()
        self._refreshed_at = now
        if time.monotonic() - self._full_at >= self.full_refresh_seconds:
            await self._look_at_every_schedule()

    async def _look_at_every_schedule(self) -> None:
        async with self.store.read() as tx:
            found = await schedules(tx)
        self._full_at = time.monotonic()
        for schedule in set(self._jobs) - set(found):
            self._remove_job(schedule)
        for schedule in found:
            if usable(schedule, self._warned):
                self._add_job(schedule)

    def _add_job(self, schedule: Schedule) -> None:
        scheduler = self._scheduler
        if scheduler is None or schedule in self._jobs:
            return
        trigger = cron_trigger(schedule)
        shift = clock_shift(self.clock)
        scheduler.add_job(
            self._fire,
            ShiftedTrigger(trigger, shift) if shift else trigger,
            args=[schedule],
            id=_job_id(schedule),
            name=f"briefings at {schedule}",
            replace_existing=True,
        )
        self._jobs[schedule] = trigger

    def _remove_job(self, schedule: Schedule) -> None:
        self._jobs.pop(schedule, None)
        if self._scheduler is not None:
            with contextlib.suppress(Exception):  # JobLookupError: already gone
                self._scheduler.remove_job(_job_id(schedule))

    def jobs(self) -> dict[Schedule, CronTrigger]:
        """Schedule -> its trigger, for inspection."""
        return dict(self._jobs)

    async def _fire(self, schedule: Schedule) -> None:
        """The job. It only hands the schedule to the batcher: no I/O here."""
        self.fire(schedule)

    def fire(self, schedule: Schedule) -> None:
        """Hand this schedule's latest due briefing to the batcher (what its job does)."""
        if schedule not in self._jobs:
            return
        slot = latest_briefing(schedule, self.clock() + _FIRE_TOLERANCE)
        if slot is not None:
            self._add_schedule(schedule, slot)

    def _add_schedule(self, schedule: Schedule, slot: BriefingSlot) -> None:
        self._due_schedules[schedule] = slot
        self._start_flushing()

    def _start_flushing(self) -> None:
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush(), name="briefing-batch")

    async def drain(self) -> None:
        """Wait until every due briefing handed to the batcher has been queued."""
        while self._flushing is not None and not self._flushing.done():
            await asyncio.shield(self._flushing)

    async def _flush(self) -> None:
        """Queue everything due in batches. Jobs firing together (several schedules at
        07:00) all land here before the first batch starts."""
        await asyncio.sleep(0)
        delay = 1.0
        while self._due_schedules or self._pending:
            try:
                if self._due_schedules:
                    schedule, slot = next(iter(self._due_schedules.items()))
                    await self._queue_schedule(schedule, slot)
                    del self._due_schedules[schedule]
                else:
                    batch = list(self._pending.values())
                    self._pending.clear()
                    await queue_briefings(
                        self.store,
                        self.campaign,
                        batch,
                        self.clock(),
                        grace=self.grace,
                        metrics=self.metrics,
                    )
                delay = 1.0
            except Exception:
                log.exception("queueing briefings failed; retrying in %.0fs", delay)
                now = self.clock()
                for stale in [
                    s for s, slot in self._due_schedules.items() if now - slot.at >= self.grace
                ]:
                    del self._due_schedules[stale]
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                if self._stopping.is_set():
                    log.error("stopping with briefings not queued")
                    return
                delay = min(delay * 2, 60.0)

    async def _queue_schedule(self, schedule: Schedule, slot: BriefingSlot) -> None:
        """Every channel on `schedule`, page by page, each page one batch; a schedule no
        channel uses any more loses its job."""
        outcomes = await queue_schedule(
            self.store,
            self.campaign,
            schedule,
            slot,
            self.clock(),
            grace=self.grace,
            metrics=self.metrics,
            page_size=self.batch_size,
        )
        if not outcomes:
            self._remove_job(schedule)


def _job_id(schedule: Schedule) -> str:
    days = "".join(str(d) for d in sorted(schedule.briefing_days))
    return f"briefing:{schedule.briefing_time:%H%M}:{days}:{schedule.timezone}"
