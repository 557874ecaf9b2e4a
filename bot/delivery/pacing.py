"""Staying under a platform's rate limits: token buckets per platform, workspace and channel.

A `Bucket` is a virtual-scheduling token bucket (GCRA): each caller reserves the next free
slot at once and sleeps until it, so concurrent senders are spaced evenly without a lock and
without polling. A 429 pauses a bucket until the platform's `Retry-After` has passed; callers
who reserved a slot before the pause notice it when they wake and queue again.

A `Pacer` holds one platform's buckets (global, per workspace, per channel) and its cap on
requests in flight. Time is injectable (`monotonic`, `sleep`) so the maths is tested without
waiting.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence

from bot.plugins.outbound import ChannelRef, Pacing

Monotonic = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

# Idle channel buckets are forgotten once this many exist (10,000 channels is a big campaign).
_PRUNE_ABOVE = 4096
GROUP_SECONDS = 0.05  # waiting requests wake together, a group at most this often


class Bucket:
    """`rate` requests per second, `burst` of which may start back to back.

    Requests that must wait leave in groups of up to `group` (at most `GROUP_SECONDS` of
    the rate, within the burst): each waits for the end of its group's period, so a queue
    at 100/s wakes 20 times a second, not 100. The burst left beside a group is smaller by
    it, so any window still holds at most its rate's share plus `burst`."""

    def __init__(self, rate: float, burst: int = 1) -> None:
        if rate <= 0:
            raise ValueError("a bucket's rate must be positive")
        self.interval = 1.0 / rate
        burst = max(burst, 1)
        self.group = max(1, min(burst, int(rate * GROUP_SECONDS)))
        self.period = self.group * self.interval
        self.tolerance = (burst - self.group) * self.interval
        self._tat = -math.inf  # theoretical arrival time of the next request
        self.paused_until = -math.inf

    def reserve(self, now: float) -> float:
        """Take the next free slot; returns how long to wait for it (0 = go now)."""
        at = max(now, self._tat - self.tolerance, self.paused_until)
        self._tat = max(self._tat, at) + self.interval
        if at > now and self.group > 1:
            # The end of the slot's group (less a float's error: a slot that falls on a
            # group's end stays in that group, which would otherwise hold three or one).
            at = math.ceil(at / self.period - 1e-9) * self.period
        return at - now

    def pause(self, until: float) -> None:
        """Nothing goes before `until` (a 429's Retry-After)."""
        self.paused_until = max(self.paused_until, until)

    def paused(self, now: float) -> bool:
        return now < self.paused_until

    def idle(self, now: float) -> bool:
        return self._tat <= now and self.paused_until <= now


class Paused(Exception):
    """The channel (or the whole platform) is paused for longer than the caller will wait:
    the caller should put its request back in the queue for `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"paused for {seconds:.1f} s")
        self.seconds = seconds


class Pacer:
    """One platform's limits: every send awaits `acquire(channel)` first."""

    def __init__(
        self,
        pacing: Pacing,
        *,
        monotonic: Monotonic = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.pacing = pacing
        self._now = monotonic
        self._sleep = sleep
        self.global_bucket = Bucket(pacing.global_per_second, pacing.burst)
        self._channels: dict[tuple[str, str], Bucket] = {}
        self._workspaces: dict[str, Bucket] = {}
        self.in_flight = asyncio.Semaphore(max(pacing.max_in_flight, 1))

    def channel_bucket(self, channel: ChannelRef) -> Bucket:
        key = (channel.workspace, channel.channel)
        bucket = self._channels.get(key)
        if bucket is None:
            if len(self._channels) >= _PRUNE_ABOVE:
                self._prune()
            bucket = Bucket(self.pacing.per_channel_per_second)
            self._channels[key] = bucket
        return bucket

    def channel_buckets(self) -> list[Bucket]:
        """Every channel's bucket made so far (idle ones may have been forgotten)."""
        return list(self._channels.values())

    def workspace_bucket(self, channel: ChannelRef) -> Bucket | None:
        rate = self.pacing.per_workspace_per_second
        if rate is None:
            return None
        bucket = self._workspaces.get(channel.workspace)
        if bucket is None:
            bucket = Bucket(rate, self.pacing.burst)
            self._workspaces[channel.workspace] = bucket
        return bucket

    async def acquire(self, channel: ChannelRef) -> None:
        """Wait until a request to `channel` keeps every limit (channel, workspace, global)."""
        # The global slot is taken last, so time spent waiting on a busy channel never
        # wastes the platform-wide rate that other channels could use.
        await self._take([*self._local_buckets(channel), self.global_bucket])

    def slot(self, channel: ChannelRef, *, max_pause: float = math.inf) -> Slot:
        """`acquire(channel)` and a place among the requests in flight, for one request
        (`async with pacer.slot(channel):`).

        The global slot is taken once a place is free: taken before, the requests queued
        for a place while the platform answered slowly would all start together the moment
        it caught up, in a burst over the platform-wide rate. A pause (a 429's Retry-After)
        longer than `max_pause` raises `Paused` instead of holding the caller that long."""
        return Slot(self, channel, max_pause)

    def _local_buckets(self, channel: ChannelRef) -> list[Bucket]:
        workspace = self.workspace_bucket(channel)
        channel_bucket = self.channel_bucket(channel)
        return [channel_bucket] if workspace is None else [channel_bucket, workspace]

    async def _take(
        self, buckets: list[Bucket], also: Sequence[Bucket] = (), *, max_pause: float = math.inf
    ) -> None:
        """A slot in each of `buckets`, once none of them nor `also` is paused."""
        while True:
            now = self._now()
            longest = -math.inf
            for bucket in buckets:
                longest = max(longest, bucket.paused_until - now)
            for bucket in also:
                longest = max(longest, bucket.paused_until - now)
            if longest > max_pause:
                raise Paused(longest)
            slept = False
            for bucket in buckets:
                delay = bucket.reserve(self._now())
                if delay > 0:
                    await self._sleep(delay)
                    slept = True
            if longest <= 0 and not slept:
                return  # nothing was paused, and nothing awaited since: nor is it now
            now = self._now()
            if any(bucket.paused_until > now for bucket in buckets):
                continue  # reserving again waits for the pause
            until = max((b.paused_until for b in also if b.paused_until > now), default=None)
            if until is None:
                return
            await self._sleep(until - now)

    def pause_channel(self, channel: ChannelRef, seconds: float) -> None:
        self.channel_bucket(channel).pause(self._now() + max(seconds, 0.0))

    def pause_global(self, seconds: float) -> None:
        self.global_bucket.pause(self._now() + max(seconds, 0.0))

    def _prune(self) -> None:
        now = self._now()
        for key in [k for k, b in self._channels.items() if b.idle(now)]:
            del self._channels[key]


class Slot:
    """`Pacer.slot`: the buckets' slots on entry, the place in flight until exit."""

    __slots__ = ("_channel", "_max_pause", "_pacer")

    def __init__(self, pacer: Pacer, channel: ChannelRef, max_pause: float) -> None:
        self._pacer, self._channel, self._max_pause = pacer, channel, max_pause

    async def __aenter__(self) -> None:
        pacer, max_pause = self._pacer, self._max_pause
        local = pacer._local_buckets(self._channel)
        await pacer._take(local, max_pause=max_pause)
        await pacer.in_flight.acquire()
        try:
            await pacer._take([pacer.global_bucket], also=local, max_pause=max_pause)
        except BaseException:
            pacer.in_flight.release()
            raise

    async def __aexit__(self, *_exc: object) -> None:
        self._pacer.in_flight.release()


def backoff_delay(attempt: int, rng: random.Random, *, base: float, cap: float) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(cap, base * 2^(attempt-1))].

    Full jitter spreads the retries of many failed sends instead of having them return
    together (see AWS's "Exponential Backoff And Jitter").
    """
    ceiling = min(cap, base * 2.0 ** max(attempt - 1, 0))
    return rng.uniform(0.0, ceiling)
