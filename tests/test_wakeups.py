"""A post from another process (here: another engine on the same database) wakes the
dispatcher's event, on SQLite through PRAGMA data_version and on PostgreSQL through NOTIFY."""

from __future__ import annotations

import asyncio

from bot.admin import Admin, Draft
from bot.clock import FixedClock
from bot.models import Platform, Status, Subscription, UpdateText
from bot.store import Store
from bot.store.wakeups import watch_other_writers
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def test_write_from_another_engine_sets_outbox_event(
    store: Store, db_url: str, clock: FixedClock
) -> None:
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_other_writers(store, stop))
    try:
        async with Store.open(db_url, migrate=False) as other:
            admin = Admin(other, CAMPAIGN, ADMINS, clock)
            await admin.subscribe(
                ADMIN, Subscription(0, Platform.DISCORD, "g", "c", "en", timezone="UTC")
            )
            store.outbox_written.clear()
            # `store` never writes here: only the watcher can set its event.
            await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("On strike")}))
            await asyncio.wait_for(store.outbox_written.wait(), timeout=5)
        async with store.read() as tx:
            assert len(await tx.list_deliveries()) == 1
    finally:
        stop.set()
        await watcher
