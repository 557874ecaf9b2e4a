"""The dispatcher's two small helpers: SENT marks committed in groups (`Marker`), and one
send at a time per key (`KeyedLocks`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Hashable

from bot.store import Store
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")


class Marker:
    """Group commit of SENT marks: a send that returns waits for its row to be committed.
    The first mark of a batch opens a window of `window` seconds, closed early by
    `batch_max` marks; everything returning meanwhile shares one commit. At 48 sends a second
    and a 1 s window that is one commit for about 48 sends (each commit is several trips to
    the database's thread, each a wake-up of the event loop, and on SQLite the half-second
    poll for other processes' commits hears each one, which sets every idle platform looked
    at once more); at 500 a second the batch fills in 128 ms. A crash in the window costs
    what a crash before any commit costs (the row is sent again with the same key). The
    wait holds no send slot."""

    def __init__(
        self,
        store: Store,
        worker: str,
        window: float = 1.0,
        batch_max: int = 64,
        *,
        committed: Callable[[list[str]], None] | None = None,
    ):
        self._store = store
        self._committed = committed
        self._worker = worker
        self._window = window
        self._batch_max = batch_max
        self._queue: list[tuple[q.SentMark, asyncio.Future[None]]] = []
        self._ready = asyncio.Event()
        self._full = asyncio.Event()
        self._closing = False
        self._task = asyncio.create_task(self._loop(), name="sent-marker")

    def mark(self, mark: q.SentMark) -> asyncio.Future[None]:
        """Queue a mark; the future is done when it is committed."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((mark, done))
        self._ready.set()
        if len(self._queue) >= self._batch_max:
            self._full.set()
        return done

    async def close(self) -> None:
        """Commit what is queued, then stop."""
        self._closing = True
        self._ready.set()
        self._full.set()
        await self._task

    async def _loop(self) -> None:
        while True:
            await self._ready.wait()
            self._ready.clear()
            if self._window > 0 and not self._closing:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), self._window)
            self._full.clear()
            await self._commit_pending()
            if self._queue:
                self._ready.set()
            elif self._closing:
                return

    async def _commit_pending(self) -> None:
        batch, self._queue = self._queue, []
        if not batch:
            return
        marks = [m for m, _ in batch]
        try:
            marked = await self._store.transact(
                lambda tx: q.mark_sent(tx, worker=self._worker, marks=marks)
            )
        except Exception as exc:
            for _, done in batch:
                if not done.done():
                    done.set_exception(exc)
            return
        if 0 <= marked < len(batch):
            log.warning(
                "%d of %d sent deliveries were no longer leased to this dispatcher",
                len(batch) - marked,
                len(batch),
            )
        for _, done in batch:
            if not done.done():
                done.set_result(None)
        if self._committed is not None:
            self._committed([m.delivery_id for m in marks])


class KeyedLocks:
    """One lock per key (an update's copy in one channel), dropped when nobody holds it."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: Hashable | None) -> AsyncIterator[None]:
        if key is None:
            yield
            return
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
