"""Health that tells the truth: /livez (the process answers), /readyz (the store can be read
and written: 503 with the reason otherwise) and /healthz (as documented, now with whether
the database takes writes)."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from bot.clock import FixedClock
from bot.store import Store
from tests.support import _execute_as_admin, fresh_postgres_database
from tests.web_support import client_for, web_context


async def test_a_healthy_store_is_live_ready_and_healthy(store: Store, clock: FixedClock) -> None:
    site = web_context(store, clock)
    async with client_for(site) as client:
        live = await client.get("/livez")
        ready = await client.get("/readyz")
        health = await client.get("/healthz")

        assert live.status == 200 and await live.json() == {"live": True}
        assert ready.status == 200
        body = await ready.json()
        assert body["ready"] is True and body["reasons"] == []
        assert body["database"] == {"reachable": True, "writable": True, "error": None}
        assert health.status == 200
        assert (await health.json())["database"]["writable"] is True
        assert ready.headers["Cache-Control"] == "no-store"


async def test_a_store_that_cannot_be_written_is_not_ready_and_says_why(
    clock: FixedClock,
) -> None:
    """PostgreSQL fails over to a read-only standby (here: the database turned read-only and
    every session cut, as a failover does): reads still work, writes do not. /readyz says
    so and what to do; /livez stays up (a restart would not help); /healthz tells the truth."""
    async with fresh_postgres_database(migrated=True) as url, Store.open(url) as store:
        site = web_context(store, clock)
        name = make_url(url).database
        async with client_for(site) as client:
            assert (await client.get("/readyz")).status == 200

            # The name is our own test database's (sbtest_<hex>), not outside input.
            cut = f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"  # noqa: S608
            await _execute_as_admin(
                f'ALTER DATABASE "{name}" SET default_transaction_read_only = on',
                cut + " AND pid <> pg_backend_pid()",
            )

            ready = await client.get("/readyz")
            live = await client.get("/livez")
            health = await client.get("/healthz")
            status = await client.get("/api/v1/status")

            assert ready.status == 503
            body = await ready.json()
            assert body["ready"] is False
            (reason,) = body["reasons"]
            assert "can be read but not written" in reason and "primary" in reason
            assert "[SQL" not in reason and "meta" not in reason  # no statement, no table
            assert body["database"]["reachable"] is True
            assert body["database"]["writable"] is False
            assert live.status == 200
            assert health.status == 503
            assert (await health.json())["database"]["writable"] is False
            assert status.status == 200  # the public page and API still serve from reads


async def test_health_does_not_queue_behind_a_run_of_writes(
    store: Store, clock: FixedClock
) -> None:
    """SQLite has one writer: while writes are committing (a page of briefings after another),
    the one before proves the store takes writes, and /healthz answers without waiting for
    the writer (its own write probe would wait, and time out after 3 s)."""
    site = web_context(store, clock)
    async with client_for(site) as client:
        async with store.write() as tx:
            await tx.set_meta("test.before", "1")
        async with store.write() as tx:
            await tx.set_meta("test.during", "1")
            health = await client.get("/healthz")
            assert health.status == 200
            assert (await health.json())["database"]["writable"] is True
