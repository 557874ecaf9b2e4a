"""The public content version: how the page, feeds and API know they are current in O(1).

Every write transaction that changes something a public view shows (an update posted,
edited, corrected, retracted or approved, a demand moved, an import) marks its `Tx`
(`Tx.touch_public`); `Store.write` then bumps the one row of `public_version` in the same
transaction, so the version and the change become visible together. What the process knows
of the version lives in `PublicVersion`:

- a write committed here advances it at once;
- a write committed elsewhere (the CLI, another instance) reaches it the way the
  dispatcher's wake-ups do: PostgreSQL `LISTEN strikebot_public` (the bump issues
  `pg_notify` in its transaction), SQLite the process's one poll of `PRAGMA data_version`
  (`store.commits`, shared with the dispatcher's watcher, `bot.store.commits`);
- while nothing is watching (no watcher started, or its connection lost), every check
  reads the row: one primary-key read, shared by all requests arriving together.

A check therefore costs nothing when nothing changed, and one indexed read at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from bot.store.commits import first_of

if TYPE_CHECKING:
    from bot.store import Store

log = logging.getLogger(__name__)

PUBLIC_CHANNEL = "strikebot_public"  # PostgreSQL NOTIFY channel for public changes
# A missed notification (a dropped connection not yet noticed) is caught by re-reading the
# version this often even while watching.
RECHECK_SECONDS = 15.0
RETRY_SECONDS = 2.0


T = TypeVar("T")


class SharedCheck(Generic[T]):
    """Runs `fetch` for many concurrent callers, never answering with a stale value.

    Callers arriving while a fetch is running wait for the *next* fetch, which starts as
    soon as the running one ends and serves all of them at once.
    """

    def __init__(self, fetch: Callable[[], Awaitable[T]]) -> None:
        self._fetch = fetch
        self._waiting: asyncio.Future[T] | None = None
        self._running = False
        self._task: asyncio.Task[None] | None = None  # held so it cannot be collected

    async def get(self) -> T:
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()
        future = self._waiting
        if not self._running:
            self._running = True
            self._task = asyncio.get_running_loop().create_task(self._run())
        return await asyncio.shield(future)

    async def _run(self) -> None:
        try:
            while self._waiting is not None:
                future, self._waiting = self._waiting, None
                try:
                    value = await self._fetch()
                except Exception as exc:
                    future.set_exception(exc)
                    # Nobody may be waiting any more; do not log "exception never retrieved".
                    future.exception()
                else:
                    future.set_result(value)
        finally:
            self._running = False


class PublicVersion:
    """What this process knows of the store's public content version.

    `current()` answers from memory while a watcher vouches that nothing changed, and
    otherwise runs `read` (shared by concurrent callers, never older than the call).
    `listen()` gives an event set whenever the version may have moved (a publisher waits
    on its own, and clears it when it has looked).
    """

    def __init__(self, read: Callable[[], Awaitable[int]]) -> None:
        self.known: int | None = None
        self._listeners: weakref.WeakSet[asyncio.Event] = weakref.WeakSet()
        self._check = SharedCheck(read)
        self._watchers = 0
        self._dirty = True
        self._generation = 0

    @property
    def watching(self) -> bool:
        return self._watchers > 0

    def listen(self) -> asyncio.Event:
        """An event of one's own, set at every possible change (keep a reference to it)."""
        event = asyncio.Event()
        self._listeners.add(event)
        return event

    def _notify(self) -> None:
        for event in list(self._listeners):
            event.set()

    def advance(self, version: int) -> None:
        """A write committed here produced `version`."""
        if self.known is None or version > self.known:
            self.known = version
        self._notify()

    def maybe_changed(self) -> None:
        """Someone else may have committed: the next check reads the row."""
        self._generation += 1
        self._dirty = True
        self._notify()

    def watch_started(self) -> None:
        self._watchers += 1
        self.maybe_changed()  # whatever happened before the watcher began is unknown

    def watch_stopped(self) -> None:
        self._watchers = max(0, self._watchers - 1)
        self.maybe_changed()

    def vouched(self) -> int | None:
        """The version, if a watcher vouches nothing changed since it was read; else None."""
        if self.watching and not self._dirty:
            return self.known
        return None

    async def current(self) -> int:
        if self.watching and not self._dirty and self.known is not None:
            return self.known
        generation = self._generation
        version = await self._check.get()
        if self.known is None or version > self.known:
            self.known = version
        if generation == self._generation:
            self._dirty = False
        return self.known


async def watch_public_version(store: Store, stop: asyncio.Event) -> None:
    """Tell `store.public` about public changes committed by other processes until `stop`.

    Reconnects after a lost connection; while disconnected every check reads the row."""
    while not stop.is_set():
        try:
            if store.dialect == "postgresql":
                await _listen_postgres(store, stop)
            else:
                await _watch_sqlite(store, stop)
        except Exception as exc:
            log.warning("watching for public changes failed (%s); retrying", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), RETRY_SECONDS)


async def _listen_postgres(store: Store, stop: asyncio.Event) -> None:
    async with store.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        lost = asyncio.Event()

        def notified(*_args: object) -> None:
            store.public.maybe_changed()

        def terminated(*_args: object) -> None:
            lost.set()

        await driver.add_listener(PUBLIC_CHANNEL, notified)
        driver.add_termination_listener(terminated)
        store.public.watch_started()
        try:
            while not stop.is_set() and not lost.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(first_of(stop, lost), RECHECK_SECONDS)
                if not stop.is_set() and not lost.is_set():
                    await conn.exec_driver_sql("SELECT 1")  # notice a dead connection
                    await conn.rollback()
                    store.public.maybe_changed()
        finally:
            store.public.watch_stopped()
            with contextlib.suppress(Exception):
                driver.remove_termination_listener(terminated)
                await driver.remove_listener(PUBLIC_CHANNEL, notified)
        if lost.is_set() and not stop.is_set():
            raise ConnectionError("the listening connection was closed")


async def _watch_sqlite(store: Store, stop: asyncio.Event) -> None:
    """On the process's one commit watch (`store.commits`, shared with the dispatcher's)."""
    async with store.commits.subscribe(store.public.maybe_changed) as watch:
        store.public.watch_started()
        try:
            while not stop.is_set() and not watch.lost.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(first_of(stop, watch.lost), RECHECK_SECONDS)
                if not stop.is_set():
                    store.public.maybe_changed()  # a recheck, as on PostgreSQL
        finally:
            store.public.watch_stopped()
    if watch.lost.is_set() and not stop.is_set():
        raise ConnectionError("polling for commits failed")
