"""A post from another process (here: another engine on the same database) wakes the
dispatcher's event, on SQLite through PRAGMA data_version and on PostgreSQL through NOTIFY."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import event

from bot.admin import Admin, Draft
from bot.clock import FixedClock
from bot.models import Status, Subscription, UpdateText
from bot.store import Store, wakeups
from bot.store.wakeups import watch_other_writers
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def watcher_ready(store: Store) -> None:
    """Return once the watcher has started watching: a write before that would not count
    (SQLite: it reads its first `data_version` after the write; PostgreSQL: it LISTENs too
    late for the NOTIFY)."""
    async with asyncio.timeout(15):
        if store.dialect == "postgresql":
            while True:
                async with store.read() as tx:
                    listening = await tx.conn.exec_driver_sql(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND query LIKE 'LISTEN %'"
                    )
                    if listening.scalar_one() > 0:
                        return
                await asyncio.sleep(0.01)
        read = asyncio.Event()

        def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if "data_version" in statement:
                read.set()

        event.listen(store.engine.sync_engine, "after_cursor_execute", seen)
        try:
            await read.wait()
        finally:
            event.remove(store.engine.sync_engine, "after_cursor_execute", seen)


async def test_write_from_another_engine_sets_outbox_event(
    store: Store, db_url: str, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wakeups, "SQLITE_CHECK_SECONDS", 0.05)  # check often: a faster test
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch_other_writers(store, stop))
    try:
        await watcher_ready(store)
        async with Store.open(db_url, migrate=False) as other:
            admin = Admin(other, CAMPAIGN, ADMINS, clock)
            await admin.subscribe(ADMIN, Subscription(0, "discord", "g", "c", "en", timezone="UTC"))
            store.outbox_written.clear()
            # `store` never writes here: only the watcher can set its event.
            await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("On strike")}))
            # A guard against a hang, not a speed target.
            await asyncio.wait_for(store.outbox_written.wait(), timeout=15)
        async with store.read() as tx:
            assert len(await tx.list_deliveries()) == 1
    finally:
        stop.set()
        await watcher
