"""Wake the dispatcher when *another process* queues deliveries (a CLI post, another instance).

Within one process `Store.write()` sets `store.outbox_written` directly. Across processes:
- PostgreSQL: `LISTEN strikebot_outbox`; `Tx.enqueue` issues `pg_notify` in the same
  transaction, so the notification arrives exactly when the rows become visible.
- SQLite has no notifications: `PRAGMA data_version` on a dedicated connection changes when
  any other connection commits. Checking it once a second costs one tiny query and bounds
  the delay of a post made from another process to about a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from bot.store import Store
from bot.store.repo import OUTBOX_CHANNEL

log = logging.getLogger(__name__)
SQLITE_CHECK_SECONDS = 1.0


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
    async with store.engine.connect() as conn:
        last = await conn.exec_driver_sql("PRAGMA data_version")
        seen = last.scalar()
        await conn.rollback()
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SQLITE_CHECK_SECONDS)
            current = (await conn.exec_driver_sql("PRAGMA data_version")).scalar()
            await conn.rollback()
            if current != seen:
                seen = current
                store.outbox_written.set()
