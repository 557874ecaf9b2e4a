"""Virtual monotonic time for pacing tests: no test waits for real seconds to pass.

    vt = VirtualTime()
    pacer = Pacer(pacing, monotonic=vt, sleep=vt.sleep)
    dispatcher = Dispatcher(..., monotonic=vt, sleep=vt.sleep)

`vt()` is the time; `await vt.sleep(s)` returns when virtual time has reached now + s. Time
jumps, like trio's autojump clock: once every task that can run has run (the event loop
has gone round `settle` times with no new sleeper), the clock moves straight to the earliest
wake-up and wakes whoever is due. So concurrent sleepers wake in deadline order and a
second of pacing takes microseconds. `advance(s)` moves it by hand (a slow answer).

Real waits (a request to a fake on 127.0.0.1, a database commit) still take real time, and
virtual time may jump while one is in flight, as time passes during a slow request: tests
assert at-least spacings (`>=`) where real I/O is involved, exact ones where it is not.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class VirtualTime:
    def __init__(self, start: float = 0.0, *, settle: int = 20) -> None:
        self.now = start
        self.settle = settle
        self.slept = 0.0  # total virtual seconds asked for, summed over every sleeper
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._jumper: asyncio.Task[None] | None = None

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        self.slept += seconds
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), woken))
        if self._jumper is None or self._jumper.done():
            self._jumper = asyncio.create_task(self._jump(), name="virtual-time")
        await woken  # cancelled with its caller; the jumper drops it

    def advance(self, seconds: float) -> None:
        """Move time on by hand, waking every sleeper now due."""
        self.now += seconds
        self._wake_due()

    async def _jump(self) -> None:
        while self._sleepers:
            waiting = len(self._sleepers)
            for _ in range(self.settle):
                await asyncio.sleep(0)  # let everything runnable run first
            if len(self._sleepers) != waiting:
                continue  # someone went to sleep meanwhile: let things settle again
            self._drop_cancelled()
            if not self._sleepers:
                return
            self.now = max(self.now, self._sleepers[0][0])
            self._wake_due()

    def _wake_due(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self.now:
            _, _, woken = heapq.heappop(self._sleepers)
            if not woken.done():
                woken.set_result(None)

    def _drop_cancelled(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
