"""Which platforms this dispatcher sends for: one lock per platform (`bot.delivery.leadership`),
kept, lost or taken, with the rows a previous holder had claimed taken over at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable

from bot.clock import Clock
from bot.delivery.leadership import Leadership
from bot.models import Platform
from bot.store import Store
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")


class Elections:
    """The leads of one dispatcher; `taken(platform)` is called when it starts sending for
    a platform. Without `leadership`, it sends for every platform."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        platforms: Iterable[Platform],
        leadership: Callable[[Platform], Leadership] | None,
        *,
        worker: str,
        taken: Callable[[Platform], None],
    ) -> None:
        self.store = store
        self.clock = clock
        self.platforms = list(platforms)
        self.leadership = leadership
        self.worker = worker
        self.taken = taken
        self.leads: dict[Platform, Leadership] = {}
        self._leading: set[Platform] = set()
        self.task: asyncio.Task[None] | None = None  # the election loop, while it runs

    @property
    def leading(self) -> frozenset[Platform]:
        """The platforms this dispatcher sends for."""
        if self.leadership is None:
            return frozenset(self.platforms)
        return frozenset(self._leading)

    async def elect(self) -> frozenset[Platform]:
        """One election round for every platform: keep, lose or take its lock. A platform
        taken over gets the rows its previous holder had claimed back at once."""
        assert self.leadership is not None
        for platform in self.platforms:
            lead = self.leads.get(platform)
            if lead is None:
                lead = self.leads[platform] = self.leadership(platform)
            try:
                if platform in self._leading:
                    if await lead.still_held():
                        continue
                    self.lose(platform)
                if not await lead.acquire():
                    continue
                async with self.store.write() as tx:
                    took = await q.take_over(
                        tx, worker=self.worker, platform=str(platform), now=self.clock()
                    )
            except Exception:
                log.exception("the %s dispatcher election failed; trying again", platform)
                self._leading.discard(platform)
                continue
            self._leading.add(platform)
            log.info(
                "this instance now sends for %s%s",
                platform,
                f" (took over {took} deliveries of a previous holder)" if took else "",
            )
            self.taken(platform)
        return self.leading

    def lose(self, platform: Platform) -> None:
        if platform in self._leading:
            self._leading.discard(platform)
            log.warning("lost the %s dispatcher lock; another instance sends now", platform)

    def start(self, stop: asyncio.Event, every: float) -> None:
        """Elect every `every` seconds until `stop` is set (or `resign()`)."""
        if self.leadership is not None:
            self.task = asyncio.create_task(self._elect_loop(stop, every), name="dispatcher-leases")

    async def _elect_loop(self, stop: asyncio.Event, every: float) -> None:
        while not stop.is_set():
            await self.elect()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)

    async def resign(self) -> None:
        """Give up every lead held (the election loop stops)."""
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
        for lead in self.leads.values():
            with contextlib.suppress(Exception):
                await lead.release()
        self.leads.clear()
        self._leading.clear()
