"""Wake the dispatcher when *another process* queues deliveries (a CLI post, another instance).

Within one process `Store.write()` sets `store.outbox_written` directly. Across processes:
- PostgreSQL: `LISTEN strikebot_outbox`; `Tx.enqueue` issues `pg_notify` in the same
  transaction, so the notification arrives exactly when the rows become visible.
- SQLite has no notifications: the process's one poll of `PRAGMA data_version`
  (`store.commits`, `bot.store.commits`, shared with the public pages' watcher) sees any
  other connection's commit within `SQLITE_CHECK_SECONDS` (half a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from bot.store import Store
from bot.store.commits import first_of
from bot.store.repo import OUTBOX_CHANNEL

log = logging.getLogger(__name__)
RETRY_SECONDS = 2.0


async def watch_other_writers(store: Store, stop: asyncio.Event) -> None:
    """Set `store.outbox_written` on writes from elsewhere until `stop` is set."""
    if store.dialect == "postgresql":
        await _listen_postgres(store, stop)
    else:
        await _watch_sqlite(store, stop)


async def _listen_postgres(store: Store, stop: asyncio.Event) -> None:
    async with store.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection

        def notified(*_args: object) -> None:
            store.outbox_written.set()

        await driver.add_listener(OUTBOX_CHANNEL, notified)
        try:
            await stop.wait()
        finally:
            with contextlib.suppress(Exception):
                await driver.remove_listener(OUTBOX_CHANNEL, notified)


async def _watch_sqlite(store: Store, stop: asyncio.Event) -> None:
    """On the process's one commit watch (`store.commits`); subscribed again after it
    failed, every `RETRY_SECONDS`."""
    while not stop.is_set():
        try:
            async with store.commits.subscribe(store.outbox_written.set) as watch:
                # What was committed before the subscription is not reported: look once.
                store.outbox_written.set()
                await first_of(stop, watch.lost)
        except Exception as exc:
            log.warning("watching for posts from other processes failed (%s); retrying", exc)
        if not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), RETRY_SECONDS)
