"""The dispatcher: drains the outbox into the platforms, paced, retried, exactly once.

    dispatcher = Dispatcher(store, adapters, campaign, clock, settings=config.delivery)
    task = asyncio.create_task(dispatcher.run())
    ...
    await dispatcher.stop()   # stops claiming, finishes in-flight sends, releases the rest

This module holds the loop (wake, look, claim, hold); its parts are beside it. How it all
works: docs/delivery.md, "Inside the dispatcher".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import random
import secrets
import socket
import time
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from bot.clock import Clock
from bot.config import DeliverySection
from bot.delivery import claims
from bot.delivery.elections import Elections
from bot.delivery.history import keep_history, purge_history
from bot.delivery.leadership import Leadership
from bot.delivery.marks import Marker
from bot.delivery.meters import DrainStats, Meter
from bot.delivery.pacing import Monotonic, Pacer, Sleep
from bot.delivery.rendering import Renderer
from bot.delivery.retries import Outcomes
from bot.delivery.sending import Sender
from bot.delivery.timings import Timings
from bot.metrics import Metrics
from bot.models import Campaign, Delivery, Platform
from bot.plugins.outbound import Adapter, Pacing
from bot.store import Store
from bot.store import outbox_queries as q

__all__ = ["Dispatcher", "DrainStats", "Timings", "default_worker_id"]

log = logging.getLogger("strikebot.dispatcher")

TAKEOVER_PAUSE = 1.0  # seconds: a platform's rate window, waited out by a new holder
# Rows held per platform: at least this many seconds of sending at its rate (or four times
# the time a look and a claim take, when that is longer), at most MAX_HELD rows.
PACE_HORIZON = 1.0
MAX_HELD = 2000


def default_worker_id() -> str:
    """Unique among live dispatchers: host, process and a random suffix (64 chars max)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(3)}"


class Dispatcher:
    """Delivers outbox rows through `adapters` (one per platform). `timings` are production's
    unless given; `rng` is the jitter's source (seeded in tests), `monotonic` / `sleep` the
    time pacing and in-memory retry waits run on (tests pass virtual time)."""

    def __init__(
        self,
        store: Store,
        adapters: Mapping[Platform, Adapter],
        campaign: Campaign,
        clock: Clock,
        *,
        settings: DeliverySection,
        timings: Timings | None = None,
        metrics: Metrics | None = None,
        worker_id: str | None = None,
        leadership: Callable[[Platform], Leadership] | None = None,
        rng: random.Random | None = None,
        monotonic: Monotonic = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.store = store
        self.adapters = dict(adapters)
        self.clock = clock
        self.settings = settings
        self.timings = timings = timings or Timings()
        self.metrics = metrics
        self.worker_id = (worker_id or default_worker_id())[:64]
        self.monotonic = monotonic
        self.pace_sleep = sleep
        self._pacers: dict[Platform, Pacer] = {}
        self.meter = Meter(list(self.adapters), self._pacing, metrics)
        self.elections = Elections(
            store, clock, self.adapters, leadership, worker=self.worker_id, taken=self._taken
        )
        outcomes = Outcomes(
            store,
            clock,
            settings,
            timings,
            self.meter,
            worker=self.worker_id,
            rng=rng or random.Random(),
            stopping=lambda: self._stopping,
        )
        renderer = Renderer(store, self.adapters, campaign, clock, timings.update_state_ttl)
        self.sender = Sender(
            self.adapters,
            self.pacer,
            renderer,
            outcomes,
            self.meter,
            clock,
            timings,
            sleep=sleep,
            answered=self._answered_now,
        )
        self._depth_at = float("-inf")
        self._held: dict[str, Delivery] = {}
        self._held_per_platform: Counter[Platform] = Counter()
        # Held rows whose send has returned and whose mark is not yet committed: they no
        # longer count against their platform's room (`_held_per_platform`).
        self._answered: set[str] = set()
        self._claim_seconds = 0.0  # a look and a claim, averaged (see `_capacity`)
        # Platforms whose pending rows may have changed since the loop last looked (see
        # `_round`): a platform with nothing due is not looked at again at every wake-up.
        self._dirty: set[Platform] = set()
        self._due_at: dict[Platform, datetime] = {}  # what each platform's last look found
        self._tasks: set[asyncio.Task[None]] = set()
        self._heartbeat: asyncio.Task[None] | None = None
        self._tasks_aside: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._stop_requested = asyncio.Event()
        self._stopped = asyncio.Event()
        self._running = False
        self._stopping = False

    @property
    def stats(self) -> DrainStats:
        """What the last `drain()` did (or this `run()` so far)."""
        return self.meter.stats

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        """Deliver until `stop()`. Rows this worker id still held from a crashed run are
        released first, so they go out at once instead of after their lease."""
        if self._running:
            raise RuntimeError("this dispatcher is already running")
        if self._stop_requested.is_set():
            return  # stop() came first: a stopped dispatcher stays stopped
        self._running, self._stopping = True, False
        self._stopped.clear()
        failures = 0
        try:
            async with self.store.write() as tx:
                released = await q.release(
                    tx, worker=self.worker_id, in_doubt=True, now=self.clock()
                )
            if released:
                log.info(
                    "took back %d deliveries held by a previous run of %s", released, self.worker_id
                )
            self._begin()
            self.say_caps()
            history = asyncio.create_task(
                keep_history(self.purge_history, self.timings.history_every),
                name="delivery-history",
            )
            self._tasks_aside.add(history)
            self.elections.start(self._stop_requested, self.timings.election_seconds)
            self._dirty.update(self.adapters)
            while not self._stopping:
                if self.store.outbox_written.is_set():
                    self._dirty.update(self.adapters)  # rows queued: any platform may have some
                self.store.outbox_written.clear()
                self._wake.clear()
                try:
                    wait = await self._round()
                    failures = 0
                except Exception:
                    # The database went away (a restart, a network blip): keep the sends in
                    # flight, and look again later rather than die.
                    failures += 1
                    wait = min(2.0**failures, 60.0)
                    log.exception("the dispatcher could not read the outbox; again in %g s", wait)
                if await self._sleep(wait):
                    # The time asked for came (a row falling due, a lease lapsing), or the
                    # longest sleep ended (another dispatcher's changes): look everywhere.
                    self._dirty.update(self.adapters)
        finally:
            await self._end()
            await self.resign()
            self._running = False
            self._stopped.set()

    async def stop(self) -> None:
        """Stop claiming, let sends already on the wire finish and record their outcome,
        and release every row not yet sent. Returns when `run()` has wound down."""
        self._stopping = True
        self._stop_requested.set()
        if self._running:
            await self._stopped.wait()

    async def drain(self, until_idle: bool = True) -> DrainStats:
        """Deliver what is due now (by `clock`) and return what happened, without `run()`.

        With `until_idle`, keep going until nothing is due and nothing is in flight
        (follow-ups freed by a POST, notices queued by a failure); otherwise one batch.
        Retries that wait longer than `timings.inline_retry_limit` are left in the queue.
        """
        if self._running:
            raise RuntimeError("drain() cannot run while run() is running; call stop() first")
        self.meter.stats = DrainStats()
        self._stopping = False
        self._begin()
        try:
            while True:
                self._wake.clear()
                claimed = await self._claim_round()
                if not self._tasks:
                    if claimed == 0:
                        break
                    continue
                if not until_idle:
                    await asyncio.gather(*self._tasks, return_exceptions=True)
                    break
                await self._wait_for_progress()
            async with self.store.read() as tx:
                self.meter.record_depth(await q.pending_counts(tx))
        finally:
            await self._end()
        return self.stats

    async def purge_history(self, batch: int = 2000) -> int:
        """Summarise and delete settled deliveries older than `keep_history_days` (none when
        it is 0). Returns how many were purged."""
        days = self.settings.keep_history_days
        stopping = lambda: self._stopping  # noqa: E731 - read at each batch
        return await purge_history(self.store, self.clock, days, batch=batch, stopping=stopping)

    def say_caps(self) -> list[str]:
        """Log (and return) each platform whose places in flight keep it below its rate
        unless every send is answered quickly; a measured cap is said once sends are timed."""
        return self.meter.say_caps()

    # ------------------------------------------------------------------ leads

    @property
    def leading(self) -> frozenset[Platform]:
        """The platforms this dispatcher sends for (all of them without `leadership`)."""
        return self.elections.leading

    async def elect(self) -> frozenset[Platform]:
        """One election round for every platform (`Elections.elect`)."""
        return await self.elections.elect()

    async def resign(self) -> None:
        """Give up every lead this dispatcher holds (its election stops); `run()` does on its
        way out, and a dispatcher used through `elect()` and `drain()` calls it when done."""
        await self.elections.resign()

    def _taken(self, platform: Platform) -> None:
        # The previous holder's last second of requests still counts against the token's
        # limit (Discord counts per second, whoever sent them): start after it.
        self.pacer(platform).pause_global(TAKEOVER_PAUSE)
        self._dirty.add(platform)
        self._wake.set()

    # ------------------------------------------------------------------ the loop

    def _begin(self) -> None:
        if self.sender.marker is None:
            self.sender.marker = Marker(
                self.store,
                self.worker_id,
                self.timings.mark_window,
                committed=self._marks_committed,
            )
        if self._heartbeat is None:
            renew = claims.keep_leases(
                self.store,
                self.clock,
                worker=self.worker_id,
                lease=self.timings.lease,
                held=lambda: list(self._held),
            )
            self._heartbeat = asyncio.create_task(renew, name="lease-renewal")

    def _marks_committed(self, delivery_ids: list[str]) -> None:
        """Rows were recorded as sent: their follow-ups may be due now. The platform is marked
        for a look; the loop is woken only when it would look now (the platform at half its
        rows or fewer). Above that, the rows finishing wake it when they bring the platform
        to half: a commit in the middle of a fan-out costs no round of its own."""
        wake = False
        for delivery_id in delivery_ids:
            held = self._held.get(delivery_id)
            if held is None:
                wake = True
                continue
            platform = held.platform
            self._dirty.add(platform)
            wake = wake or self._held_per_platform[platform] <= self._capacity(platform) // 2
        if wake:
            self._wake.set()

    async def _end(self) -> None:
        """Cancel rows still waiting for a slot, finish sends on the wire, release leases."""
        self._stopping = True
        for task in list(self._tasks):
            if task not in self.sender.sending:
                task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.sender.marker is not None:
            await self.sender.marker.close()
            self.sender.marker = None
        for aside in [*self._tasks_aside, self._heartbeat]:
            if aside is not None:
                aside.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await aside
        self._tasks_aside.clear()
        self._heartbeat = None
        unrecorded, self.sender.unrecorded = self.sender.unrecorded, set()
        try:
            released = await claims.give_back(
                self.store, self.clock, worker=self.worker_id, unrecorded=unrecorded
            )
        except Exception:
            log.exception("could not release leases; they lapse after %g s", self.timings.lease)
        else:
            if released:
                log.info("released %d deliveries not yet sent", released)

    async def _claim_round(self, only: set[Platform] | None = None) -> int:
        """Lease due rows for every platform with room (of `only`, when given: those a look
        found rows due for), and start a task for each."""
        room = {
            platform: self._capacity(platform) - self._held_per_platform[platform]
            for platform in self.leading
            if only is None or platform in only
        }
        room = {platform: n for platform, n in room.items() if n > 0}
        if not room or self._stopping:
            return 0
        now = self.clock()
        claimed, lost = await claims.claim(
            self.store,
            self.adapters,
            self.elections.leads,
            worker=self.worker_id,
            room=room,
            now=now,
            lease_until=now + timedelta(seconds=self.timings.lease),
        )
        for platform in lost:
            self.elections.lose(platform)
        self.stats.claimed += len(claimed)
        for row in claimed:
            self._spawn(row)
        return len(claimed)

    def _spawn(self, row: claims.Claimed) -> None:
        delivery = row.delivery
        self._held[delivery.id] = delivery
        self._held_per_platform[delivery.platform] += 1
        send = self.sender.deliver(delivery, row.sub, row.update, row.post)
        task = asyncio.create_task(send, name=delivery.id)
        self._tasks.add(task)
        task.add_done_callback(lambda task: self._done(task, delivery))

    def _done(self, task: asyncio.Task[None], delivery: Delivery) -> None:
        """A row's task ended: it is no longer held, and the loop may look again."""
        marked = self.sender.marked
        self._tasks.discard(task)
        self._held.pop(delivery.id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("delivery %s crashed", delivery.id, exc_info=task.exception())
        recorded = delivery.id in marked
        marked.discard(delivery.id)
        if delivery.id in self._answered:
            # Its room was given back when the answer came (`_answered_now`); a mark
            # that failed to commit leaves a lease to lapse, for a look to find.
            self._answered.discard(delivery.id)
            if not recorded:
                self._dirty.add(delivery.platform)
                self._wake.set()
            return
        self._held_per_platform[delivery.platform] -= 1
        held = self._held_per_platform[delivery.platform]
        half = self._capacity(delivery.platform) // 2
        # Look at the store again when this made room (the platform fell to half its
        # rows), or when the row ended otherwise than recorded as sent (settled, put back
        # for later, dead: follow-ups or notices may be due). A row recorded as sent
        # frees its follow-ups with the commit of its mark, which wakes the loop itself:
        # the last rows of a fan-out do not each cost a look.
        if held == half or not recorded:
            self._dirty.add(delivery.platform)
            if held <= half:
                self._wake.set()

    def _capacity(self, platform: Platform) -> int:
        """How many rows of a platform to hold at once (rows sent and waiting only for their
        mark's commit do not count): enough to keep its sends busy and to send at its pace
        while the next claim is made: twice its places in flight, or `PACE_HORIZON` seconds
        of its rate (four looks and claims when those are slower), at most `MAX_HELD`."""
        pacing = self.pacer(platform).pacing
        horizon = max(PACE_HORIZON, 4 * self._claim_seconds)
        paced = min(math.ceil(pacing.global_per_second * horizon), MAX_HELD)
        return max(pacing.max_in_flight * 2, paced, 2)

    def _answered_now(self, delivery: Delivery) -> None:
        """A send returned: the row stops counting against its platform's room at once (its
        mark commits with others' later; it stays held, its lease renewed, until then)."""
        self._answered.add(delivery.id)
        platform = delivery.platform
        self._held_per_platform[platform] -= 1
        held = self._held_per_platform[platform]
        half = self._capacity(platform) // 2
        if held == half:
            self._dirty.add(platform)
        if held <= half and platform in self._dirty:
            self._wake.set()

    def pacer(self, platform: Platform) -> Pacer:
        """The pacer of `platform` (its buckets and pauses), made on first use."""
        pacer = self._pacers.get(platform)
        if pacer is None:
            pacer = self._pacers[platform] = Pacer(
                self.adapters[platform].pacing, monotonic=self.monotonic, sleep=self.pace_sleep
            )
        return pacer

    def _pacing(self, platform: Platform) -> Pacing:
        return self.pacer(platform).pacing

    async def _round(self) -> float:
        """One look at the store, and a claim only when something is due: an idle round
        reads two index entries and writes nothing. Returns how long to sleep."""
        now = self.clock()
        # A platform is topped up once half its rows are done (a task finishing there wakes
        # the loop), not after every send: a fan-out costs one claim per half batch. It is
        # looked at only when something may have changed there since the last look (`_dirty`:
        # rows queued, a row of its own settled or recorded as sent, room made, the time
        # asked for come): another platform's traffic, or the last sends of a fan-out, do
        # not each cost a look at an empty queue.
        looked = [
            p
            for p in self.leading
            if p in self._dirty and self._held_per_platform[p] <= self._capacity(p) // 2
        ]
        count_depth = (
            self.metrics is not None
            and time.monotonic() - self._depth_at >= self.timings.depth_every
        )
        if not looked and not count_depth:
            return self._until_due(now)
        # Cleared before the look, not after it: a change made while the look runs (an
        # election taking rows over, a mark committed) marks its platform again and is
        # looked at next round instead of being forgotten.
        self._dirty.difference_update(looked)
        started = time.monotonic()
        try:
            platforms = [str(p) for p in looked]
            due_by_platform, depth = await claims.look(
                self.store, platforms, now, count_depth=count_depth
            )
        except BaseException:
            self._dirty.update(looked)
            raise
        for p in looked:
            if (at := due_by_platform.get(str(p))) is None:
                self._due_at.pop(p, None)
            else:
                self._due_at[p] = at
        if depth is not None:
            self._depth_at = time.monotonic()
            self.meter.record_depth(depth)
        due_now = {p for p in looked if (at := self._due_at.get(p)) is not None and at <= now}
        if due_now and not self._stopping:
            claimed = await self._claim_round(due_now)
            # How long a look and a claim take, averaged: rows held cover it (`_capacity`).
            took = time.monotonic() - started
            self._claim_seconds += (took - self._claim_seconds) / 8
            # Look again at once (more may be due than there was room for, or another
            # platform's row later); if another dispatcher took the rows, not in a tight
            # loop (the timer then makes every platform looked at).
            if claimed:
                self._dirty.update(looked)
                return 0.0
            return min(self.timings.idle_recheck, 0.05)
        return self._until_due(now)

    def _until_due(self, now: datetime) -> float:
        """How long to sleep: until the earliest time a look asked for (this round's, or an
        earlier one's for a platform not looked at now: a row falling due, a lease
        lapsing), at most `idle_recheck`."""
        leading, recheck = self.leading, self.timings.idle_recheck
        due = min((at for p, at in self._due_at.items() if at > now and p in leading), default=None)
        if due is None:
            return recheck
        return min(max((due - now).total_seconds(), 0.0), recheck)

    async def _sleep(self, seconds: float) -> bool:
        """Until a commit queues rows, a task frees room, stop() is called, or `seconds`.
        True when `seconds` ran out."""
        if seconds <= 0:
            return False
        waiters = [
            asyncio.ensure_future(event.wait())
            for event in (self.store.outbox_written, self._wake, self._stop_requested)
        ]
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        return not done

    async def _wait_for_progress(self) -> None:
        """drain(): until every task is done, or one finishing made room or freed rows."""
        waker: asyncio.Future[Any] = asyncio.ensure_future(self._wake.wait())
        pending: set[asyncio.Future[Any]] = set(self._tasks)
        try:
            while pending and not waker.done():
                _, pending = await asyncio.wait(
                    pending | {waker}, return_when=asyncio.FIRST_COMPLETED
                )
                pending.discard(waker)
        finally:
            waker.cancel()
