"""One watch on SQLite for commits made by other connections, shared by the whole process.

SQLite has no notifications: `PRAGMA data_version` on a connection changes when any other
connection commits. Two parts of `strikebot run` want to hear of such commits: the
dispatcher (a `strikebot post` from a shell queued rows, `bot.store.wakeups`) and the public
pages (something they show changed, `bot.store.content`). Each used to poll on a connection
of its own; now `store.commits` polls once for everyone who subscribed, every
`SQLITE_CHECK_SECONDS`, and only while somebody is subscribed. A poll is one call into the
driver (`execute_fetchall` on aiosqlite's thread): no transaction, no SQLAlchemy statement.

PostgreSQL does not poll: NOTIFY reaches its listeners (see the two modules above).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

# How often the one poll runs: bounds the delay of a post made from another process, and of
# a public change made elsewhere reaching the pages' cache.
SQLITE_CHECK_SECONDS = 0.5


class Subscription:
    """One subscriber's view of the watch: `lost` is set when polling failed (the
    subscriber then knows nothing about other connections' commits until it subscribes
    again)."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self.changed = changed
        self.lost = asyncio.Event()


class CommitWatch:
    """Calls every subscriber's `changed()` after another connection committed (SQLite)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._subscribers: list[Subscription] = []
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None

    @property
    def polling(self) -> bool:
        """True once the poll has read its first version, until it stops or fails."""
        return (
            self._task is not None
            and not self._task.done()
            and self._ready is not None
            and self._ready.done()
            and self._ready.exception() is None
        )

    @asynccontextmanager
    async def subscribe(self, changed: Callable[[], None]) -> AsyncIterator[Subscription]:
        """Within the block, `changed()` is called after each commit made elsewhere that the
        poll sees (any commit made after the block was entered). Raises what the poll's
        first read raised."""
        subscription = Subscription(changed)
        self._subscribers.append(subscription)
        try:
            if self._task is None or self._task.done():
                ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                self._ready = ready
                self._task = asyncio.create_task(self._poll(ready), name="sqlite commit watch")
            assert self._ready is not None
            await asyncio.shield(self._ready)
            yield subscription
        finally:
            self._subscribers.remove(subscription)
            if not self._subscribers:
                await self._stop()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _poll(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._engine.connect() as conn:
                raw = await conn.get_raw_connection()
                driver: Any = raw.driver_connection  # aiosqlite's connection, autocommit
                seen = await _data_version(driver)
                ready.set_result(None)
                while True:
                    await asyncio.sleep(SQLITE_CHECK_SECONDS)
                    current = await _data_version(driver)
                    if current != seen:
                        seen = current
                        for subscription in list(self._subscribers):
                            subscription.changed()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
                ready.exception()  # retrieved: the subscribers raise it themselves
            else:
                log.warning("watching for commits from other processes failed (%s)", exc)
            for subscription in list(self._subscribers):
                subscription.lost.set()


async def _data_version(driver: Any) -> object:
    rows = await driver.execute_fetchall("PRAGMA data_version")
    return rows[0][0]


async def first_of(*events: asyncio.Event) -> None:
    """Return once any of `events` is set (a watcher's stop, or its watch lost)."""
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
