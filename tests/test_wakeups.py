"""A post from another process (here: another engine on the same database) wakes the
dispatcher's event, on SQLite through PRAGMA data_version and on PostgreSQL through NOTIFY."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.clock import FixedClock
from bot.editorial.admin import Admin, Draft
from bot.models import Status, Subscription, UpdateText
from bot.store import Store, commits, content, wakeups
from bot.store.content import watch_public_version
from bot.store.wakeups import watch_other_writers
from tests.support import ADMIN, ADMINS, CAMPAIGN


async def watcher_ready(store: Store) -> None:
    """Return once the watcher has started watching: a write before that would not count
    (SQLite: the shared poll reads its first `data_version` after the write; PostgreSQL: it
    LISTENs too late for the NOTIFY)."""
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
        # The watcher sets the event once it is on the poll (it looks once, as what was
        # committed before is not reported). Called right after the watcher's task was
        # created, before it ran: the event is cleared first.
        store.outbox_written.clear()
        await store.outbox_written.wait()
        assert store.commits.polling


async def public_watched(store: Store) -> None:
    changes = store.public.listen()
    async with asyncio.timeout(15):
        while not store.public.watching:
            await changes.wait()
            changes.clear()


async def test_write_from_another_engine_sets_outbox_event(
    store: Store, db_url: str, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(commits, "SQLITE_CHECK_SECONDS", 0.05)  # check often: a faster test
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


async def test_the_outbox_and_the_public_pages_share_one_poll_on_sqlite(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`strikebot run` watches other processes' commits for the dispatcher and for the
    public pages: on SQLite that is one `PRAGMA data_version` poll on one connection."""
    monkeypatch.setattr(commits, "SQLITE_CHECK_SECONDS", 0.05)
    polled_on: set[int] = set()
    read = commits._data_version

    async def counting(driver: object) -> object:
        polled_on.add(id(driver))
        return await read(driver)

    monkeypatch.setattr(commits, "_data_version", counting)
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    async with Store.open(url) as store, Store.open(url, migrate=False) as other:
        stop = asyncio.Event()
        public = store.public.listen()
        watchers = [
            asyncio.create_task(watch_other_writers(store, stop)),
            asyncio.create_task(watch_public_version(store, stop)),
        ]
        try:
            await watcher_ready(store)
            await public_watched(store)
            admin = Admin(other, CAMPAIGN, ADMINS, clock)
            await admin.subscribe(ADMIN, Subscription(0, "discord", "g", "c", "en", timezone="UTC"))
            store.outbox_written.clear()
            public.clear()
            await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("On strike")}))
            async with asyncio.timeout(15):  # a hang guard
                await store.outbox_written.wait()
                await public.wait()
        finally:
            stop.set()
            await asyncio.gather(*watchers)
        assert len(polled_on) == 1
        assert not store.commits.polling  # nobody subscribed: the poll stopped


async def test_a_failed_poll_is_taken_up_again(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A poll that fails stops vouching for the public version (pages read the store again)
    and starts over; posts from elsewhere still wake the dispatcher afterwards."""
    monkeypatch.setattr(commits, "SQLITE_CHECK_SECONDS", 0.05)
    monkeypatch.setattr(content, "RETRY_SECONDS", 0.05)
    monkeypatch.setattr(wakeups, "RETRY_SECONDS", 0.05)
    read = commits._data_version
    failed = asyncio.Event()

    async def failing_once(driver: object) -> object:
        if not failed.is_set() and store.commits.polling:
            failed.set()
            raise OSError("disk I/O error")
        return await read(driver)

    monkeypatch.setattr(commits, "_data_version", failing_once)
    url = f"sqlite+aiosqlite:///{tmp_path / 'failing.db'}"
    async with Store.open(url) as store, Store.open(url, migrate=False) as other:
        stop = asyncio.Event()
        watchers = [
            asyncio.create_task(watch_other_writers(store, stop)),
            asyncio.create_task(watch_public_version(store, stop)),
        ]
        try:
            await watcher_ready(store)
            await asyncio.wait_for(failed.wait(), timeout=15)
            await watcher_ready(store)  # on the poll again
            await public_watched(store)
            admin = Admin(other, CAMPAIGN, ADMINS, clock)
            await admin.subscribe(ADMIN, Subscription(0, "discord", "g", "c", "en", timezone="UTC"))
            store.outbox_written.clear()
            await admin.post(ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("On strike")}))
            await asyncio.wait_for(store.outbox_written.wait(), timeout=15)  # a hang guard
        finally:
            stop.set()
            await asyncio.gather(*watchers)
