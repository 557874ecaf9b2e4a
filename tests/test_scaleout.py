"""Several instances on one PostgreSQL database: one dispatcher per platform (a hot standby
takes over when the holder dies), exactly once past the platform's idempotency window."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import pytest

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.delivery.leadership import PostgresLeadership, dispatcher_lock_key, leadership_for
from bot.editorial.admin import Admin, Draft
from bot.models import Delivery, DeliveryState, Status, Subscription, UpdateText, Urgency
from bot.store import Store
from tests.fakes.platform import FakePlatform, FakePlatformAdapter, Fault
from tests.support import (
    ADMIN,
    ADMINS,
    CAMPAIGN,
    end_backend,
    fresh_postgres_database,
    postgres_url,
)

WS = "g1"


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    postgres_url()  # skips with the reason when PostgreSQL is not configured
    async with fresh_postgres_database(migrated=True) as url:
        yield url


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with FakePlatform(global_per_second=400, per_channel_per_second=40) as platform:
        yield platform


def dispatcher(
    store: Store, adapter: FakePlatformAdapter, clock: FixedClock, name: str
) -> Dispatcher:
    return Dispatcher(
        store,
        {"discord": adapter},
        CAMPAIGN,
        clock,
        settings=DeliverySection(max_attempts=12, admin_channels=[]),
        worker_id=name,
        rng=random.Random(7),
        leadership=lambda platform: leadership_for(store, dispatcher_lock_key(platform)),
        timings=Timings(
            retry_base=0.01, retry_cap=0.05, idle_recheck=0.1, election_seconds=0.1, send_timeout=60
        ),
    )


async def fan_out(admin: Admin, channels: list[str]) -> None:
    for channel in channels:
        await admin.subscribe(ADMIN, Subscription(0, "discord", WS, channel, "en", timezone="UTC"))
    draft = Draft(
        Status.STRIKE_ON, {"en": UpdateText("Strike on", "Picket at 6:30")}, Urgency.URGENT
    )
    await admin.post(ADMIN, draft)


@contextlib.asynccontextmanager
async def two_instances(
    pg_url: str, clock: FixedClock, fake: FakePlatform
) -> AsyncIterator[tuple[Store, Store, Dispatcher, Dispatcher]]:
    """Two instances on one database, each its store, its adapter and its dispatcher."""
    async with (
        Store.open(pg_url) as one,
        Store.open(pg_url) as two,
        FakePlatformAdapter(fake.url, timeout=60) as adapter_one,
        FakePlatformAdapter(fake.url, timeout=60) as adapter_two,
    ):
        yield (
            one,
            two,
            dispatcher(one, adapter_one, clock, "first"),
            dispatcher(two, adapter_two, clock, "second"),
        )


async def cut_lock_connection(holder: Dispatcher, store: Store) -> None:
    """The holder's lock connection goes, as when its process is killed or cut off: the
    server ends that backend, and the lock with it."""
    lead = holder.elections.leads["discord"]
    assert isinstance(lead, PostgresLeadership) and lead.backend_pid
    await end_backend(store, lead.backend_pid)


async def deliveries(store: Store) -> list[Delivery]:
    async with store.read() as tx:
        return await tx.list_deliveries(limit=None)


async def test_one_dispatcher_per_platform_and_a_standby_takes_over_its_rows_at_once(
    pg_url: str, clock: FixedClock, fake: FakePlatform
) -> None:
    channels = [f"c{i:02}" for i in range(6)]
    async with two_instances(pg_url, clock, fake) as (one, two, first, second):
        assert await first.elect() == {"discord"}
        assert await second.elect() == frozenset()  # a hot standby: it sends nothing

        # The holder's sends hang on the wire (each channel's first request).
        for channel in channels:
            fake.script(WS, channel, Fault.HANG)
        await fan_out(Admin(one, CAMPAIGN, ADMINS, clock), channels)
        first_run = asyncio.create_task(first.run())
        second_run = asyncio.create_task(second.run())
        try:
            await fake.wait_until(lambda: len(fake.requests) == len(channels))
            assert first.stats.claimed == len(channels) and second.stats.claimed == 0

            # The holder's connection to PostgreSQL goes (as when its process is killed):
            # the standby takes the lock and the rows it held at once, not after their
            # 60-second lease, and sends each once more with the same idempotency key.
            assert first.elections.task is not None
            first.elections.task.cancel()  # a dead process stands for nothing again
            await cut_lock_connection(first, one)
            await fake.wait_until(lambda: len(fake.messages_per_channel()) == len(channels))
            await second.stop()
            await second_run
        finally:
            hung = first.adapters["discord"]
            assert isinstance(hung, FakePlatformAdapter)
            await hung.stop()  # ends the hung requests
            first_run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first_run
        rows = await deliveries(two)
        assert {d.state for d in rows} == {DeliveryState.SENT}
        # Two attempts each: the hung one (outcome unknown) and the one that was recorded.
        assert {d.attempts for d in rows} == {2}
        assert set(fake.messages_per_channel().values()) == {1}
        assert first.leading == frozenset()


async def test_a_holder_whose_lock_went_between_elections_claims_nothing(
    pg_url: str, clock: FixedClock, fake: FakePlatform, caplog: pytest.LogCaptureFixture
) -> None:
    """Fencing: the claim asks PostgreSQL whether the lock is still the holder's, so a holder
    cut off from its lock (before its next election notices) cannot pace beside the new one."""
    channels = [f"c{i:02}" for i in range(4)]
    async with two_instances(pg_url, clock, fake) as (one, two, first, second):
        assert await first.elect() == {"discord"}
        await fan_out(Admin(one, CAMPAIGN, ADMINS, clock), channels)

        await cut_lock_connection(first, two)
        assert await second.elect() == {"discord"}

        try:
            assert (await first.drain()).claimed == 0
            assert first.leading == frozenset()
            assert "lost the discord dispatcher lock" in caplog.text
            assert fake.requests == []

            assert (await second.drain()).sent == len(channels)
        finally:
            await first.resign()
            await second.resign()
        assert set(fake.messages_per_channel().values()) == {1}
        rows = await deliveries(two)
        assert {(d.state, d.attempts) for d in rows} == {(DeliveryState.SENT, 1)}
