"""Old settled deliveries summarised and deleted, a batch per transaction, every hour."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from bot.clock import Clock
from bot.store import Store
from bot.store import outbox_queries as q

log = logging.getLogger("strikebot.dispatcher")


async def purge_history(
    store: Store,
    clock: Clock,
    days: int,
    *,
    batch: int = 2000,
    stopping: Callable[[], bool] = lambda: False,
) -> int:
    """Summarise and delete settled deliveries older than `days` (none when it is 0), a
    batch per transaction so writers and the dispatcher are never held long. Returns how
    many were purged."""
    if days <= 0:
        return 0
    now = clock()
    before = now - timedelta(days=days)
    purged = 0
    while True:
        n = await store.transact(
            lambda tx: q.purge_history(tx, before=before, now=now, limit=batch)
        )
        purged += n
        if n < batch or stopping():
            break
        await asyncio.sleep(0)
    if purged:
        log.info("purged %d deliveries older than %d days (summarised)", purged, days)
    return purged


async def keep_history(purge: Callable[[], Awaitable[int]], every: float) -> None:
    """`purge()` a minute after start (or after `every`, when shorter), then every `every`
    seconds, until cancelled."""
    await asyncio.sleep(min(60.0, every))
    while True:
        try:
            await purge()
        except Exception:
            log.exception("purging old deliveries failed; again in %g s", every)
        await asyncio.sleep(every)
