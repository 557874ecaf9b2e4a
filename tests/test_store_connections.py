"""PostgreSQL connections without a ping before every transaction: JIT off, a dead
connection costs one retry (`Store.transact`), an idle one is pinged before use."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from bot.errors import StoreUnavailable
from bot.store import Store, Tx
from bot.store import engine as engine_module
from bot.store import schema as t
from tests.support import fresh_postgres_database, postgres_url


async def kill_other_sessions(url: str) -> int:
    """Terminate every session on the store's database, as a server restart would."""
    dsn = make_url(postgres_url()).set(drivername="postgresql").render_as_string(False)
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = $1 AND pid <> pg_backend_pid()",
            make_url(url).database,
        )
        return len(rows)
    finally:
        await conn.close()


@pytest.fixture
async def pg_store() -> AsyncIterator[Store]:
    async with fresh_postgres_database(migrated=True) as url, Store.open(url) as store:
        yield store


async def test_connections_have_jit_off_and_no_pre_ping(pg_store: Store) -> None:
    assert pg_store.engine.pool._pre_ping is False
    async with pg_store.read() as tx:
        assert await tx.conn.scalar(select(1)) == 1
        assert (await tx.conn.exec_driver_sql("SHOW jit")).scalar() == "off"


async def test_a_connection_the_server_closed_is_replaced_at_checkout(pg_store: Store) -> None:
    async with pg_store.read() as tx:  # a pooled connection, now idle
        await tx.conn.exec_driver_sql("SELECT 1")
    assert await kill_other_sessions(pg_store.url) >= 1
    await asyncio.sleep(0.05)  # the event loop reads the server's goodbye
    calls = 0

    async def work(tx: Tx) -> int:
        nonlocal calls
        calls += 1
        return int(await tx.conn.scalar(select(t.public_version.c.version)) or 0)

    assert await pg_store.transact(work) >= 1
    assert calls == 1  # no retry, and no ping: asyncpg knew the connection was closed
    async with pg_store.read() as tx:
        await tx.conn.exec_driver_sql("SELECT 1")


async def test_a_connection_lost_in_use_costs_one_retry(pg_store: Store) -> None:
    calls = 0

    async def work(tx: Tx) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:  # the server goes away in the middle of the transaction
            await tx.conn.exec_driver_sql("SELECT pg_terminate_backend(pg_backend_pid())")
        return int(await tx.conn.scalar(select(t.public_version.c.version)) or 0)

    assert await pg_store.transact(work) >= 1
    assert calls == 2


async def test_an_error_that_is_not_a_lost_connection_is_not_retried(pg_store: Store) -> None:
    calls = 0

    async def work(tx: Tx) -> None:
        nonlocal calls
        calls += 1
        await tx.conn.exec_driver_sql("SELECT * FROM no_such_table")

    with pytest.raises(Exception, match="no_such_table"):
        await pg_store.transact(work)
    assert calls == 1


async def test_a_connection_idle_in_the_pool_is_pinged_before_use(
    pg_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with pg_store.read() as tx:
        await tx.conn.exec_driver_sql("SELECT 1")
    await kill_other_sessions(pg_store.url)
    monkeypatch.setattr(engine_module, "IDLE_PING_SECONDS", 0.0)
    # No retry needed: the ping found the dead connection and the pool opened a new one.
    async with pg_store.read() as tx:
        assert (await tx.conn.exec_driver_sql("SELECT 1")).scalar() == 1


async def test_a_connection_lost_twice_is_not_retried_again(pg_store: Store) -> None:
    calls = 0

    async def work(tx: Tx) -> None:
        nonlocal calls
        calls += 1
        await tx.conn.exec_driver_sql("SELECT pg_terminate_backend(pg_backend_pid())")

    with pytest.raises((DBAPIError, StoreUnavailable)):
        await pg_store.transact(work)
    assert calls == 2
