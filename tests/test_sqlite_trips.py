"""SQLite statements in one trip to aiosqlite's thread (`bot.store._one_trip`), and the way
back to SQLAlchemy's own cursors when an upgrade of aiosqlite or SQLAlchemy renamed the
private parts that cursor uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy.exc import IntegrityError

from bot.store import Store
from bot.store._one_trip import OneTripConnection, OneTripDBAPI, one_trip_dbapi


async def test_the_store_runs_on_one_trip_cursors(tmp_path: Path) -> None:
    async with Store.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        assert isinstance(store.engine.dialect.dbapi, OneTripDBAPI)
        async with store.write() as tx:
            await tx.set_meta("k", "v")
            raw = tx.conn.sync_connection
            assert raw is not None
            assert isinstance(raw.connection.dbapi_connection, OneTripConnection)
        async with store.read() as tx:
            assert await tx.get_meta("k") == "v"
        # A driver error still reaches the caller as SQLAlchemy's, and rolls back.
        with pytest.raises(IntegrityError):
            async with store.write() as tx:
                await tx.conn.exec_driver_sql("INSERT INTO meta (key, value) VALUES ('k', 'w')")
        async with store.read() as tx:
            assert await tx.get_meta("k") == "v"


def test_without_the_private_parts_the_engine_keeps_sqlalchemys_cursors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`create_engine` passes `module=None` then: SQLAlchemy's own aiosqlite module."""
    assert isinstance(one_trip_dbapi(), OneTripDBAPI)
    with monkeypatch.context() as patched:
        patched.delattr(aiosqlite.Connection, "_execute")  # as a future aiosqlite might
        assert one_trip_dbapi() is None


async def test_a_transaction_begins_in_the_trip_of_its_first_statement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BEGIN goes with the first statement, and a transaction that ran none costs no trip:
    each trip wakes aiosqlite's thread and then the event loop."""
    trips: list[object] = []
    execute: Any = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        trips.append(fn)
        return await execute(self, fn, *args, **kwargs)

    async with Store.open(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as store:
        async with store.read() as tx:  # the pool's connection made and set up
            await tx.get_meta("k")
        monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
        async with store.write() as tx:
            await tx.set_meta("k", "v")
            raw = tx.conn.sync_connection
            assert raw is not None
            driver: Any = raw.connection.driver_connection
            assert driver.in_transaction  # begun with the statement
        assert len(trips) == 2  # BEGIN IMMEDIATE and the statement; the commit
        trips.clear()
        async with store.write() as tx:
            pass
        async with store.read() as tx:
            pass
        assert trips == []
        # A failed statement still rolls the transaction back, and the next one begins.
        with pytest.raises(IntegrityError):
            async with store.write() as tx:
                await tx.set_meta("k2", "w")
                await tx.conn.exec_driver_sql("INSERT INTO meta (key, value) VALUES ('k', 'w')")
        async with store.read() as tx:
            assert (await tx.get_meta("k"), await tx.get_meta("k2")) == ("v", None)
