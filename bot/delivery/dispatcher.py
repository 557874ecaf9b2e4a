"""The dispatcher: drains the outbox into the platforms, paced, retried, exactly once.

    dispatcher = Dispatcher(store, adapters, campaign, clock, settings=config.delivery)
    task = asyncio.create_task(dispatcher.run())
    ...
    await dispatcher.stop()   # stops claiming, finishes in-flight sends, releases the rest

How it wakes, claims, paces, marks and recovers: docs/delivery.md, "Inside the dispatcher".
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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.clock import Clock
from bot.config import DeliverySection
from bot.delivery.leadership import Leadership
from bot.delivery.marks import KeyedLocks, Marker
from bot.delivery.pacing import Monotonic, Pacer, Paused, Sleep, backoff_delay
from bot.delivery.planning import release_time
from bot.delivery.refusals import delivery_refused
from bot.errors import PermanentDeliveryError, TransientDeliveryError
from bot.messages.compose import correction_message, retraction_message, update_message
from bot.metrics import Metrics
from bot.models import (
    Campaign,
    Delivery,
    DeliveryAction,
    DeliveryState,
    Platform,
    Subscription,
    Update,
    UpdateState,
)
from bot.plugins.outbound import (
    Adapter,
    ChannelRef,
    EventSink,
    FindsSent,
    OutboundMessage,
    call_timeout,
    edits_in_place,
)
from bot.store import Store, Tx
from bot.store import outbox_queries as q

# Follow-ups that change a copy in place rather than post anything new.
IN_PLACE = frozenset({DeliveryAction.EDIT, DeliveryAction.RETRACT})
log = logging.getLogger("strikebot.dispatcher")

FOLLOW_UPS = frozenset({DeliveryAction.EDIT, DeliveryAction.CORRECTION, DeliveryAction.RETRACT})
TAKEOVER_PAUSE = 1.0  # seconds: a platform's rate window, waited out by a new holder
# Rows held per platform: at least this many seconds of sending at its rate (or four times
# the time a look and a claim take, when that is longer), at most MAX_HELD rows.
PACE_HORIZON = 1.0
MAX_HELD = 2000
# A platform's sends are timed (round trip, averaged) and, after this many, compared with
# what its places in flight allow: a setting that caps the rate is said once in the log.
ROUND_TRIPS_BEFORE_VERDICT = 200


@dataclass(slots=True)
class DrainStats:
    """What one `drain()` (or one `run()`) did."""

    claimed: int = 0
    sent: int = 0
    retried: int = 0
    dead: int = 0
    cancelled: int = 0
    postponed: int = 0
    found: int = 0  # copies in doubt found already posted, recorded instead of sent again


# What to do with one claimed row, decided just before sending it.
@dataclass(frozen=True, slots=True)
class _Send:
    message: OutboundMessage


@dataclass(frozen=True, slots=True)
class _Edit:
    message_id: str
    message: OutboundMessage


@dataclass(frozen=True, slots=True)
class _SendEvent:
    event: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Skip:
    reason: str


@dataclass(frozen=True, slots=True)
class _Later:
    not_before: datetime


@dataclass(frozen=True, slots=True)
class _Dead:
    reason: str


_Plan = _Send | _Edit | _SendEvent | _Skip | _Later | _Dead


def default_worker_id() -> str:
    """Unique among live dispatchers: host, process and a random suffix (64 chars max)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(3)}"


class Dispatcher:
    """Delivers outbox rows through `adapters` (one per platform). See the module docstring.

    Tunables beyond `settings` exist for tests and operators: `lease` (seconds a claim is
    held without renewal), `retry_base` / `retry_cap` (backoff), `inline_retry_limit` (retry
    waits up to this long happen in memory; longer ones go back to the queue), `send_timeout`,
    `idle_recheck` (the longest sleep, so rows from other processes are noticed),
    `update_state_ttl` (how long POSTs trust their view of whether the update was retracted),
    `depth_every` (seconds between counts of the queue for the queue-depth gauge),
    `mark_window` (how long SENT marks gather before one commit records them all),
    `history_every` (seconds between purges of old history, `purge_history`),
    `rng` (the jitter's source, seeded in tests), and `monotonic` / `sleep`, the time the
    pacing and the in-memory retry waits run on (real time; tests pass virtual time).
    """

    def __init__(
        self,
        store: Store,
        adapters: Mapping[Platform, Adapter],
        campaign: Campaign,
        clock: Clock,
        *,
        settings: DeliverySection,
        metrics: Metrics | None = None,
        worker_id: str | None = None,
        rng: random.Random | None = None,
        lease: float = 60.0,
        retry_base: float = 1.0,
        retry_cap: float = 300.0,
        inline_retry_limit: float = 10.0,
        send_timeout: float = 30.0,
        idle_recheck: float = 2.0,
        update_state_ttl: float = 1.0,
        monotonic: Monotonic = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        depth_every: float = 5.0,
        mark_window: float = 0.5,
        history_every: float = 3600.0,
        leadership: Callable[[Platform], Leadership] | None = None,
        election_seconds: float = 1.0,
    ) -> None:
        self.store = store
        self.adapters = dict(adapters)
        self.campaign = campaign
        self.clock = clock
        self.settings = settings
        self.metrics = metrics
        self.worker_id = (worker_id or default_worker_id())[:64]
        self.rng = rng or random.Random()
        self.lease = lease
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.inline_retry_limit = inline_retry_limit
        self.send_timeout = send_timeout
        self.idle_recheck = idle_recheck
        self.update_state_ttl = update_state_ttl
        self.monotonic = monotonic
        self.pace_sleep = sleep
        self.depth_every = depth_every
        self.mark_window = mark_window
        self.history_every = history_every
        self.election_seconds = election_seconds
        self.stats = DrainStats()
        self._depth_at = float("-inf")
        self._leadership = leadership
        self._leads: dict[Platform, Leadership] = {}
        self._leading: set[Platform] = set()
        self._election: asyncio.Task[None] | None = None

        self._pacers: dict[Platform, Pacer] = {}
        self._held: dict[str, Delivery] = {}
        self._held_per_platform: Counter[Platform] = Counter()
        self._marked: set[str] = set()  # held rows whose SENT mark is committed
        # Held rows whose send has returned and whose mark is not yet committed: they no
        # longer count against their platform's room (`_held_per_platform`).
        self._answered: set[str] = set()
        # Rows sent whose mark could not be committed: given back in doubt at the end.
        self._unrecorded: set[str] = set()
        self._claim_seconds = 0.0  # a look and a claim, averaged (see `_capacity`)
        self._round_trips: dict[Platform, tuple[int, float]] = {}  # sends timed, mean seconds
        self._capped_said: set[Platform] = set()
        # Platforms whose pending rows may have changed since the loop last looked (see
        # `_round`): a platform with nothing due is not looked at again at every wake-up.
        self._dirty: set[Platform] = set()
        self._due_at: dict[Platform, datetime] = {}  # what each platform's last look found
        self._tasks: set[asyncio.Task[None]] = set()
        self._sending: set[asyncio.Task[None]] = set()
        self._locks = KeyedLocks()
        self._update_states: dict[int, tuple[float, asyncio.Future[str | None]]] = {}
        self._rendered: dict[tuple[int, int, bool, str, str | None], OutboundMessage] = {}
        self._marker: Marker | None = None
        self._counters: dict[tuple[Platform, str], Any] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._tasks_aside: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._stop_requested = asyncio.Event()
        self._stopped = asyncio.Event()
        self._running = False
        self._stopping = False

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
            history = asyncio.create_task(self._keep_history(), name="delivery-history")
            self._tasks_aside.add(history)
            if self._leadership is not None:
                self._election = asyncio.create_task(self._elect_loop(), name="dispatcher-leases")
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
        Retries that wait longer than `inline_retry_limit` are left in the queue.
        """
        if self._running:
            raise RuntimeError("drain() cannot run while run() is running; call stop() first")
        self.stats = DrainStats()
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
                self._record_depth(await q.pending_counts(tx))
        finally:
            await self._end()
        return self.stats

    # ------------------------------------------------------------------ leases

    @property
    def leading(self) -> frozenset[Platform]:
        """The platforms this dispatcher sends for (all of them without `leadership`)."""
        if self._leadership is None:
            return frozenset(self.adapters)
        return frozenset(self._leading)

    async def elect(self) -> frozenset[Platform]:
        """One election round for every platform: keep, lose or take its lock. A platform
        taken over gets the rows its previous holder had claimed back at once."""
        assert self._leadership is not None
        for platform in self.adapters:
            lead = self._leads.get(platform)
            if lead is None:
                lead = self._leads[platform] = self._leadership(platform)
            try:
                if platform in self._leading:
                    if await lead.still_held():
                        continue
                    self._lose(platform)
                if not await lead.acquire():
                    continue
                async with self.store.write() as tx:
                    taken = await q.take_over(
                        tx, worker=self.worker_id, platform=str(platform), now=self.clock()
                    )
            except Exception:
                log.exception("the %s dispatcher election failed; trying again", platform)
                self._leading.discard(platform)
                continue
            self._leading.add(platform)
            # The previous holder's last second of requests still counts against the token's
            # limit (Discord counts per second, whoever sent them): start after it.
            self.pacer(platform).pause_global(TAKEOVER_PAUSE)
            self._dirty.add(platform)
            log.info(
                "this instance now sends for %s%s",
                platform,
                f" (took over {taken} deliveries of a previous holder)" if taken else "",
            )
            self._wake.set()
        return self.leading

    def _lose(self, platform: Platform) -> None:
        if platform in self._leading:
            self._leading.discard(platform)
            log.warning("lost the %s dispatcher lock; another instance sends now", platform)

    async def _elect_loop(self) -> None:
        while not self._stopping:
            await self.elect()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_requested.wait(), self.election_seconds)

    async def resign(self) -> None:
        """Give up every lead this dispatcher holds (its election stops); `run()` does on its
        way out, and a dispatcher used through `elect()` and `drain()` calls it when done."""
        if self._election is not None:
            self._election.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._election
            self._election = None
        for lead in self._leads.values():
            with contextlib.suppress(Exception):
                await lead.release()
        self._leads.clear()
        self._leading.clear()

    # ------------------------------------------------------------------ the loop

    def _begin(self) -> None:
        if self._marker is None:
            self._marker = Marker(
                self.store, self.worker_id, self.mark_window, committed=self._marks_committed
            )
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._renew_leases(), name="lease-renewal")

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
            if task not in self._sending:
                task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._marker is not None:
            await self._marker.close()
            self._marker = None
        for aside in list(self._tasks_aside):
            aside.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await aside
        self._tasks_aside.clear()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        try:
            async with self.store.write() as tx:
                if self._unrecorded:
                    # Sent, not recorded: given back in doubt, so the next attempt looks
                    # for the copy first (`FindsSent`) and counts the attempt made.
                    ids, self._unrecorded = self._unrecorded, set()
                    await q.release(
                        tx, worker=self.worker_id, ids=ids, in_doubt=True, now=self.clock()
                    )
                released = await q.release(tx, worker=self.worker_id)
        except Exception:
            log.exception("could not release leases; they lapse after %g s", self.lease)
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
        lease_until = now + timedelta(seconds=self.lease)
        Round = tuple[
            list[Delivery],
            dict[int, Subscription],
            dict[int, Subscription],
            dict[int, Update],
            dict[tuple[int, int], Delivery],
            list[Platform],
        ]

        async def claim(tx: Tx) -> Round:
            claimed: list[Delivery] = []
            lost: list[Platform] = []
            for platform, limit in room.items():
                lead = self._leads.get(platform)
                if lead is not None and not await lead.confirm(tx.conn):
                    lost.append(platform)  # another instance may hold it now: claim nothing
                    continue
                claimed += await q.claim(
                    tx,
                    worker=self.worker_id,
                    platform=str(platform),
                    now=now,
                    lease_until=lease_until,
                    limit=limit,
                )
            if not claimed:
                return [], {}, {}, {}, {}, lost
            # A copy already posted keeps receiving edits and its retraction after its
            # channel unsubscribes (`holders`): misinformation must not stay up uncorrected.
            subs, holders = await q.subscriptions_and_holders(
                tx, {d.subscription_id for d in claimed}
            )
            # One read per update and one per update's POSTs for the whole round, not per
            # channel: a 10,000-channel edit costs a handful of queries, as a post does.
            updates = await _updates(tx, claimed, now)
            posts = await q.find_posts(
                tx,
                {
                    (d.update_id, d.subscription_id)
                    for d in claimed
                    if d.action in FOLLOW_UPS and d.update_id is not None
                },
            )
            return claimed, subs, holders, updates, posts, lost

        claimed, subs, holders, updates, posts, lost = await self.store.transact(claim)
        for platform in lost:
            self._lose(platform)
        if not claimed:
            return 0
        self.stats.claimed += len(claimed)
        for delivery in claimed:
            update = updates.get(delivery.update_id) if delivery.update_id is not None else None
            pool = holders if self._reaches_unsubscribed(delivery) else subs
            post = (
                posts.get((delivery.update_id, delivery.subscription_id))
                if delivery.update_id is not None
                else None
            )
            self._spawn(delivery, pool.get(delivery.subscription_id), update, post)
        return len(claimed)

    def _reaches_unsubscribed(self, delivery: Delivery) -> bool:
        """An edit or retraction changes a copy in place even in a channel that unsubscribed
        since; a sign-up's confirmation goes to a person not yet subscribed. A platform that
        cannot edit sends new messages instead, and those respect unsubscribing."""
        if delivery.action is DeliveryAction.CONFIRM:
            return True
        adapter = self.adapters.get(delivery.platform)
        return delivery.action in IN_PLACE and edits_in_place(adapter)

    def _spawn(
        self,
        delivery: Delivery,
        sub: Subscription | None,
        update: Update | None,
        post: Delivery | None = None,
    ) -> None:
        self._held[delivery.id] = delivery
        self._held_per_platform[delivery.platform] += 1
        task = asyncio.create_task(self._deliver(delivery, sub, update, post), name=delivery.id)
        self._tasks.add(task)

        def done(task: asyncio.Task[None]) -> None:
            self._tasks.discard(task)
            self._held.pop(delivery.id, None)
            if delivery.id in self._answered:
                # Its room was given back when the answer came (`_answered_now`); a mark
                # that failed to commit leaves a lease to lapse, for a look to find.
                self._answered.discard(delivery.id)
                if delivery.id not in self._marked:
                    self._dirty.add(delivery.platform)
                    self._wake.set()
                self._marked.discard(delivery.id)
                if not task.cancelled() and task.exception() is not None:
                    log.error("delivery %s crashed", delivery.id, exc_info=task.exception())
                return
            self._held_per_platform[delivery.platform] -= 1
            held = self._held_per_platform[delivery.platform]
            half = self._capacity(delivery.platform) // 2
            # Look at the store again when this made room (the platform fell to half its
            # rows), or when the row ended otherwise than recorded as sent (settled, put back
            # for later, dead: follow-ups or notices may be due). A row recorded as sent
            # frees its follow-ups with the commit of its mark, which wakes the loop itself:
            # the last rows of a fan-out do not each cost a look.
            recorded = delivery.id in self._marked
            self._marked.discard(delivery.id)
            if held == half or not recorded:
                self._dirty.add(delivery.platform)
                if held <= half:
                    self._wake.set()
            if not task.cancelled() and task.exception() is not None:
                log.error("delivery %s crashed", delivery.id, exc_info=task.exception())

        task.add_done_callback(done)

    def _capacity(self, platform: Platform) -> int:
        """How many rows of a platform to hold at once (rows sent and waiting only for their
        mark's commit do not count): enough to keep its sends busy and to send at its pace
        while the next claim is made: twice its places in flight, or `PACE_HORIZON` seconds
        of its rate (four looks and claims when those are slower), at most `MAX_HELD`."""
        pacing = self.pacer(platform).pacing
        horizon = max(PACE_HORIZON, 4 * self._claim_seconds)
        paced = min(math.ceil(pacing.global_per_second * horizon), MAX_HELD)
        return max(pacing.max_in_flight * 2, paced, 2)

    def say_caps(self) -> list[str]:
        """Log, for each platform with an in-flight setting, when its places in flight keep
        it below its configured rate unless every send is answered quickly (the round trip
        they allow); returns the lines. Said at start; a measured cap is said once sends
        have been timed."""
        lines = []
        for platform in sorted(self.adapters):
            pacing = self.pacer(platform).pacing
            allowed = pacing.max_in_flight / pacing.global_per_second
            if allowed >= 0.25 or not pacing.in_flight_setting:
                continue  # quick enough, or nothing an operator could raise (the console)
            setting = f" ({pacing.in_flight_setting})"
            lines.append(
                f"{platform}: {pacing.max_in_flight} sends in flight{setting} reach "
                f"{pacing.global_per_second:g} a second only while each is answered within "
                f"{allowed * 1000:.0f} ms; raise it if the provider answers slower"
            )
        for line in lines:
            log.info("%s", line)
        return lines

    def _timed(self, platform: Platform, seconds: float) -> None:
        """One send's round trip; once enough are timed, say whether the places in flight
        cap the platform's rate (once per run)."""
        n, mean = self._round_trips.get(platform, (0, 0.0))
        n += 1
        mean += (seconds - mean) / min(n, 100)
        self._round_trips[platform] = (n, mean)
        if n < ROUND_TRIPS_BEFORE_VERDICT or platform in self._capped_said or mean <= 0:
            return
        self._capped_said.add(platform)
        pacing = self.pacer(platform).pacing
        reach = pacing.max_in_flight / mean
        if reach < 0.95 * pacing.global_per_second:
            setting = f" ({pacing.in_flight_setting})" if pacing.in_flight_setting else ""
            log.warning(
                "%s sends at most %.0f a second, below its configured %g: %d in flight%s "
                "at a %.0f ms round trip; raise the places in flight to reach the rate",
                platform,
                reach,
                pacing.global_per_second,
                pacing.max_in_flight,
                setting,
                mean * 1000,
            )

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
        platforms = [str(p) for p in looked]
        count_depth = (
            self.metrics is not None and time.monotonic() - self._depth_at >= self.depth_every
        )
        if not platforms and not count_depth:
            return self._until_due(now)

        async def look(tx: Tx) -> tuple[dict[str, datetime], dict[str, int] | None]:
            due = await q.next_due_by_platform(tx, platforms=platforms, now=now)
            return due, await q.pending_counts(tx) if count_depth else None

        # Cleared before the look, not after it: a change made while the look runs (an
        # election taking rows over, a mark committed) marks its platform again and is
        # looked at next round instead of being forgotten.
        self._dirty.difference_update(looked)
        started = time.monotonic()
        try:
            due_by_platform, depth = await self.store.transact(look, write=False)
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
            self._record_depth(depth)
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
            return min(self.idle_recheck, 0.05)
        return self._until_due(now)

    def _until_due(self, now: datetime) -> float:
        """How long to sleep: until the earliest time a look asked for (this round's, or an
        earlier one's for a platform not looked at now: a row falling due, a lease
        lapsing), at most `idle_recheck`."""
        leading = self.leading
        due = min((at for p, at in self._due_at.items() if at > now and p in leading), default=None)
        if due is None:
            return self.idle_recheck
        return min(max((due - now).total_seconds(), 0.0), self.idle_recheck)

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

    async def purge_history(self, batch: int = 2000) -> int:
        """Summarise and delete settled deliveries older than `keep_history_days` (none when
        it is 0), a batch per transaction so writers and the loop are never held long.
        Returns how many were purged."""
        days = self.settings.keep_history_days
        if days <= 0:
            return 0
        now = self.clock()
        before = now - timedelta(days=days)
        purged = 0
        while True:
            n = await self.store.transact(
                lambda tx: q.purge_history(tx, before=before, now=now, limit=batch)
            )
            purged += n
            if n < batch or self._stopping:
                break
            await asyncio.sleep(0)
        if purged:
            log.info("purged %d deliveries older than %d days (summarised)", purged, days)
        return purged

    async def _keep_history(self) -> None:
        """`purge_history` a minute after start, then every `history_every` seconds."""
        await asyncio.sleep(min(60.0, self.history_every))
        while True:
            try:
                await self.purge_history()
            except Exception:
                log.exception("purging old deliveries failed; again in %g s", self.history_every)
            await asyncio.sleep(self.history_every)

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            ids = list(self._held)
            if not ids:
                continue
            try:
                until = self.clock() + timedelta(seconds=self.lease)
                async with self.store.write() as tx:
                    await q.renew(tx, worker=self.worker_id, ids=ids, lease_until=until)
            except Exception:
                log.exception("renewing %d leases failed; will try again", len(ids))

    def _record_depth(self, counts: Mapping[str, int]) -> None:
        if self.metrics is None:
            return
        for platform in {*map(str, self.adapters), *counts}:
            self.metrics.queue_depth.labels(platform=platform).set(counts.get(platform, 0))

    def _count(self, platform: Platform, outcome: str) -> None:
        if self.metrics is None:
            return
        # The labelled child is looked up once per (platform, outcome), not once per send.
        child = self._counters.get((platform, outcome))
        if child is None:
            child = self.metrics.deliveries.labels(platform=str(platform), outcome=outcome)
            self._counters[(platform, outcome)] = child
        child.inc()

    # ------------------------------------------------------------------ one delivery

    async def _deliver(
        self,
        delivery: Delivery,
        sub: Subscription | None,
        update: Update | None,
        post: Delivery | None = None,
    ) -> None:
        if sub is None:
            await self._settle(delivery, _Skip("the channel was unsubscribed before it was sent"))
            return
        if sub.broken_reason is not None:
            reason = f"the channel is paused after a failure: {sub.broken_reason}"
            await self._settle(delivery, _Skip(reason))
            return
        channel = ChannelRef(sub.workspace, sub.channel)
        adapter = self.adapters[delivery.platform]
        pacer = self.pacer(delivery.platform)
        attempts = delivery.attempts
        in_doubt = delivery.in_doubt_since is not None
        key = None if delivery.update_id is None else (delivery.update_id, sub.id)
        async with self._locks.hold(key):
            while True:
                try:
                    async with pacer.slot(channel, max_pause=self.inline_retry_limit):
                        # Rendered at the last moment, so the copy is as current as it can be.
                        plan = await self._plan(delivery, sub, update, post)
                        post = None  # a retry of this row looks at the store afresh
                        if not isinstance(plan, _Send | _Edit | _SendEvent):
                            await self._settle(delivery, plan)
                            return
                        task = asyncio.current_task()
                        assert task is not None
                        self._sending.add(task)  # from here on, stop() waits for the outcome
                        try:
                            outcome = await self._attempt(
                                adapter, channel, delivery, sub, plan, in_doubt=in_doubt
                            )
                        except BaseException:
                            self._sending.discard(task)
                            raise
                    # Sent: its mark is recorded with others' after the send's place in
                    # flight is given back, so the wait for the commit holds no send slot.
                    if isinstance(outcome, asyncio.Future):
                        self._answered_now(delivery)
                        try:
                            await self._recorded(delivery, outcome)
                        finally:
                            self._sending.discard(task)
                        return
                    self._sending.discard(task)
                    failure = outcome
                except Paused as paused:
                    # A pause longer than a row may wait here (a long Retry-After): back to
                    # the queue until it ends, rather than holding the lease all along.
                    later = self.clock() + timedelta(seconds=paused.seconds)
                    await self._settle(delivery, _Later(later))
                    return
                if failure is None:
                    return
                attempts += 1
                in_doubt = in_doubt or failure.in_doubt
                wait = await self._after_failure(delivery, sub, channel, failure, attempts)
                if wait is None:
                    return
                if wait > 0:
                    await self.pace_sleep(wait)

    async def _attempt(
        self,
        adapter: Adapter,
        channel: ChannelRef,
        delivery: Delivery,
        sub: Subscription,
        plan: _Send | _Edit | _SendEvent,
        *,
        in_doubt: bool = False,
    ) -> TransientDeliveryError | asyncio.Future[None] | None:
        """One try. Returns the failure, None when the row is settled (dead), or when sent
        the future of its SENT mark (see `_recorded`).

        A new message whose earlier attempt's outcome is unknown (`in_doubt`) is first
        looked for on the platform when the adapter can (`FindsSent`): found, it is recorded
        as sent instead of posted again."""
        looks = in_doubt and isinstance(plan, _Send) and isinstance(adapter, FindsSent)
        bound = call_timeout(adapter)
        started = time.monotonic()
        try:
            if not looks and bound is not None and bound <= self.send_timeout:
                # The adapter's own timeout bounds the call: no second timer for it.
                message_id = await self._call(adapter, channel, delivery, plan)
            else:
                async with asyncio.timeout(self.send_timeout):
                    found = None
                    if looks:
                        assert isinstance(adapter, FindsSent) and isinstance(plan, _Send)
                        found = await adapter.find_sent(
                            channel, delivery.id, plan.message, since=delivery.created_at
                        )
                    if found is not None:
                        log.info(
                            "delivery %s was already posted (%s); recorded, not sent again",
                            delivery.id,
                            found,
                        )
                        self.stats.found += 1
                        message_id = found
                    else:
                        message_id = await self._call(adapter, channel, delivery, plan)
        except PermanentDeliveryError as exc:
            # A refused send means the channel is unusable; a refused edit may only mean
            # that one message was deleted, so the channel stays subscribed.
            await self._park_dead(
                delivery,
                sub,
                exc.reason,
                breaks=not isinstance(plan, _Edit),
                tell_admins=exc.tell_admins,
            )
            return None
        except TransientDeliveryError as exc:
            return exc
        except TimeoutError:
            return TransientDeliveryError(
                f"no answer within {self.send_timeout:g} s", in_doubt=True
            )
        except Exception as exc:
            log.warning(
                "sending %s raised %s; retrying", delivery.id, type(exc).__name__, exc_info=True
            )
            return TransientDeliveryError(f"{type(exc).__name__}: {exc}", in_doubt=True)
        assert self._marker is not None
        self._timed(delivery.platform, time.monotonic() - started)
        log.debug("delivered %s (%s) as %s", delivery.id, delivery.action, message_id)
        return self._marker.mark(q.SentMark(delivery.id, str(message_id), self.clock()))

    @staticmethod
    async def _call(
        adapter: Adapter,
        channel: ChannelRef,
        delivery: Delivery,
        plan: _Send | _Edit | _SendEvent,
    ) -> str:
        """The adapter call `plan` asks for; returns the platform's message id."""
        if isinstance(plan, _SendEvent):
            if not isinstance(adapter, EventSink):
                raise PermanentDeliveryError(f"{adapter.platform} cannot deliver events")
            return await adapter.send_event(channel, plan.event, idempotency_key=delivery.id)
        if isinstance(plan, _Send):
            return await adapter.send(channel, plan.message, idempotency_key=delivery.id)
        await adapter.edit(channel, plan.message_id, plan.message)
        return plan.message_id

    async def _recorded(self, delivery: Delivery, marked: asyncio.Future[None]) -> None:
        """Wait for a sent row's mark to be committed. (The future is this row's alone:
        no shield needed; a cancelled one is skipped by the marker, the mark still made.)"""
        try:
            await marked
        except Exception:
            # The message exists but is not recorded: after the lease lapses the row is sent
            # again with the same idempotency key (a no-op on Discord).
            log.exception("delivery %s was sent but could not be recorded", delivery.id)
            self._unrecorded.add(delivery.id)
            return
        self._marked.add(delivery.id)
        self.stats.sent += 1
        self._count(delivery.platform, "sent")

    async def _after_failure(
        self,
        delivery: Delivery,
        sub: Subscription,
        channel: ChannelRef,
        failure: TransientDeliveryError,
        attempts: int,
    ) -> float | None:
        """Record a transient failure. Returns how long to wait before retrying here, or None
        when this task is done with the row (dead, or back in the queue for later)."""
        pacer = self.pacer(delivery.platform)
        if failure.retry_after is not None:
            if failure.is_global:
                pacer.pause_global(failure.retry_after)
            else:
                pacer.pause_channel(channel, failure.retry_after)
        if attempts >= self.settings.max_attempts:
            reason = f"gave up after {attempts} attempts; last error: {failure.reason}"
            await self._park_dead(delivery, sub, reason, breaks=False)
            return None
        if failure.retry_after is not None:
            delay = failure.retry_after
        else:
            delay = backoff_delay(attempts, self.rng, base=self.retry_base, cap=self.retry_cap)
        inline = delay <= self.inline_retry_limit and not self._stopping
        now = self.clock()
        async with self.store.write() as tx:
            recorded = await q.record_failure(
                tx,
                worker=self.worker_id,
                delivery_id=delivery.id,
                reason=failure.reason,
                lease_until=now + timedelta(seconds=self.lease),
                retry_at=None if inline else now + timedelta(seconds=delay),
                in_doubt_since=now if failure.in_doubt else None,
            )
        if recorded is None:
            log.warning("lost the lease on %s; another dispatcher has it", delivery.id)
            return None
        self.stats.retried += 1
        self._count(delivery.platform, "retried")
        log.info(
            "delivery %s to %s failed (%s); retry %d in %.2f s",
            delivery.id,
            sub.address,
            failure.reason,
            attempts,
            delay,
        )
        if not inline:
            self.stats.postponed += 1
            return None
        # After a 429 the paused bucket makes the next acquire() wait; no extra sleep.
        return 0.0 if failure.retry_after is not None else delay

    async def _plan(
        self,
        delivery: Delivery,
        sub: Subscription,
        update: Update | None,
        post: Delivery | None = None,
    ) -> _Plan:
        """Render what this row sends; a row carrying an event sends that instead, once the
        same checks found something to send."""
        event = (delivery.payload or {}).get("event")
        if delivery.action is DeliveryAction.EVENT:
            if not isinstance(event, Mapping):
                return _Dead("the delivery carries no event to send (payload['event'])")
            return _SendEvent(event)
        plan = await self._plan_message(delivery, sub, update, post)
        if isinstance(event, Mapping) and isinstance(plan, _Send | _Edit):
            return _SendEvent(event)
        return plan

    async def _plan_message(
        self,
        delivery: Delivery,
        sub: Subscription,
        update: Update | None,
        post: Delivery | None = None,
    ) -> _Plan:
        """Render what this row sends. `update` and a follow-up's `post` were read with the
        claim; a POST not yet settled then is read again here."""
        action = delivery.action
        language, zone = sub.language, sub.timezone
        if action is DeliveryAction.POST:
            if update is None:
                return _Skip("the update no longer exists")
            state = await self._update_state(update.id)
            if state == UpdateState.RETRACTED and delivery.attempts > 0:
                # In doubt: the copy may be up. Same key, rendered as the retraction; the
                # RETRACT row that waits for this one then edits whatever message it names.
                async with self.store.read() as tx:
                    current = await tx.get_update(update.id, self.clock())
                if current is not None and current.retracted:
                    message = retraction_message(current, language, self.campaign, timezone=zone)
                    return _Send(message)
            if state != UpdateState.PUBLISHED:
                return _Skip("the update was withdrawn before it reached this channel")
            if update.published_at is not None and update.published_at > self.clock():
                return _Later(update.published_at)
            return _Send(self._update_message(update, language, zone))
        if action in (DeliveryAction.BRIEFING, DeliveryAction.NOTICE, DeliveryAction.CONFIRM):
            raw = (delivery.payload or {}).get("message")
            if not isinstance(raw, Mapping):
                return _Dead("the delivery carries no message to send (payload['message'])")
            return _Send(OutboundMessage.from_json(raw))
        if action in FOLLOW_UPS and delivery.update_id is not None:
            now = self.clock()
            current = update
            if post is None or post.state is not DeliveryState.SENT or current is None:
                async with self.store.read() as tx:
                    post = await q.find_post(tx, delivery.update_id, sub.id)
                    current = await tx.get_update(delivery.update_id, now)
            if current is None:
                return _Skip("the update no longer exists")
            if not current.retracted and await self._update_state(current.id) == str(
                UpdateState.RETRACTED
            ):
                # Retracted since the claim: an edit must not undo the retraction.
                async with self.store.read() as tx:
                    current = await tx.get_update(delivery.update_id, now)
                if current is None:
                    return _Skip("the update no longer exists")
            if post is not None and post.state is DeliveryState.PENDING:
                return _Later(now)  # claimable again once the POST settles
            if post is None or post.state is not DeliveryState.SENT:
                return _Skip(f"nothing to {action}: the update never reached this channel")
            if not post.platform_message_id:
                return _Skip(f"nothing to {action}: the post recorded no message id")
            if not edits_in_place(self.adapters.get(delivery.platform)):
                return self._plan_new_message(action, current, sub, now)
            if action is DeliveryAction.RETRACT:
                message = retraction_message(current, language, self.campaign, timezone=zone)
                return _Edit(post.platform_message_id, message)
            if action is DeliveryAction.EDIT:
                message = update_message(current, language, self.campaign, timezone=zone)
                return _Edit(post.platform_message_id, message)
            if current.retracted:
                return _Skip("the update was retracted; its retraction replaces the correction")
            return _Send(correction_message(current, language, self.campaign, timezone=zone))
        return _Dead(f"cannot deliver a {action} row (update {delivery.update_id})")

    def _update_message(self, update: Update, language: str, zone: str | None) -> OutboundMessage:
        """`update_message`, rendered once per (update revision, language, zone): a fan-out
        to 10,000 channels renders a handful of messages, and hands the adapter the same
        object each time (which lets it reuse its own rendering)."""
        key = (update.id, update.revision, update.retracted, language, zone)
        message = self._rendered.get(key)
        if message is None:
            if len(self._rendered) >= 256:
                self._rendered.clear()
            message = update_message(update, language, self.campaign, timezone=zone)
            self._rendered[key] = message
        return message

    def _plan_new_message(
        self, action: DeliveryAction, current: Update, sub: Subscription, now: datetime
    ) -> _Plan:
        """A follow-up on a platform whose messages cannot change: a retraction or a
        correction is a new short message (which, like any new message, waits out the
        channel's quiet hours unless urgent); a silent edit has nothing to send."""
        language, zone = sub.language, sub.timezone
        if action is DeliveryAction.EDIT:
            return _Skip("this platform cannot change a sent message; its link shows the edit")
        if action is DeliveryAction.RETRACT:
            release = release_time(sub, current.urgency, now)
            if release > now:
                return _Later(release)
            return _Send(retraction_message(current, language, self.campaign, timezone=zone))
        if current.retracted:
            return _Skip("the update was retracted; its retraction replaces the correction")
        return _Send(correction_message(current, language, self.campaign, timezone=zone))

    async def _update_state(self, update_id: int) -> str | None:
        """The update's stored state, re-read at most once a second (one read shared by
        every copy waiting for it): a retraction during a fan-out stops the POSTs not yet
        sent."""
        cached = self._update_states.get(update_id)
        if cached is None or time.monotonic() - cached[0] >= self.update_state_ttl:
            cached = (time.monotonic(), asyncio.ensure_future(self._read_update_state(update_id)))
            self._update_states[update_id] = cached
        return await asyncio.shield(cached[1])

    async def _read_update_state(self, update_id: int) -> str | None:
        return await self.store.transact(lambda tx: q.state_of_update(tx, update_id), write=False)

    async def _settle(self, delivery: Delivery, plan: _Plan) -> None:
        """Finish a row that needs no send: nothing to do, not yet, or unsendable."""
        if isinstance(plan, _Dead):
            log.error("delivery %s is unsendable: %s", delivery.id, plan.reason)
            async with self.store.write() as tx:
                await q.settle(
                    tx,
                    worker=self.worker_id,
                    delivery_id=delivery.id,
                    state=DeliveryState.DEAD,
                    reason=plan.reason,
                )
            self.stats.dead += 1
            self._count(delivery.platform, "dead")
            return
        async with self.store.write() as tx:
            if isinstance(plan, _Later):
                await q.postpone(
                    tx, worker=self.worker_id, delivery_id=delivery.id, not_before=plan.not_before
                )
                self.stats.postponed += 1
            elif isinstance(plan, _Skip):
                await q.settle(
                    tx,
                    worker=self.worker_id,
                    delivery_id=delivery.id,
                    state=DeliveryState.CANCELLED,
                    reason=plan.reason,
                )
                self.stats.cancelled += 1
                log.info("delivery %s cancelled: %s", delivery.id, plan.reason)

    async def _park_dead(
        self,
        delivery: Delivery,
        sub: Subscription,
        reason: str,
        *,
        breaks: bool,
        tell_admins: bool = True,
    ) -> None:
        """DEAD with its reason, and what follows for the channel (`bot.delivery.refusals`); admins
        are told unless the adapter said the failure is one person's (`tell_admins=False`)."""
        now = self.clock()
        async with self.store.write() as tx:
            settled = await q.settle(
                tx,
                worker=self.worker_id,
                delivery_id=delivery.id,
                state=DeliveryState.DEAD,
                reason=reason,
                count_attempt=True,
            )
            if not settled:
                log.warning("lost the lease on %s before recording: %s", delivery.id, reason)
                return
            await delivery_refused(
                tx,
                self.settings,
                delivery,
                sub,
                reason,
                breaks=breaks,
                tell_admins=tell_admins,
                now=now,
            )
        self.stats.dead += 1
        self._count(delivery.platform, "dead")
        log.warning(
            "delivery %s (%s) to %s is dead: %s%s",
            delivery.id,
            delivery.action,
            sub.address,
            reason,
            "; channel paused" if breaks else "",
        )


async def _updates(tx: Tx, claimed: list[Delivery], now: datetime) -> dict[int, Update]:
    """The updates the claimed rows render (one read per update, not per row)."""
    ids = {d.update_id for d in claimed if d.update_id}
    found: dict[int, Update] = {}
    for update_id in ids:
        update = await tx.get_update(update_id, now)
        if update is not None:
            found[update_id] = update
    return found
