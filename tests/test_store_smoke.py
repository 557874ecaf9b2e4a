from __future__ import annotations

from bot.clock import FixedClock
from bot.editorial.admin import Admin, Draft
from bot.models import Status, Subscription, UpdateText, Urgency
from bot.store import Store
from tests.support import ADMIN


async def test_post_queues_one_delivery_per_channel(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    for channel in ("c1", "c2"):
        await admin.subscribe(
            ADMIN, Subscription(0, "discord", "g1", channel, "en", timezone="UTC")
        )
    update = await admin.post(
        ADMIN,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Strike continues")}, Urgency.URGENT),
    )
    async with store.read() as tx:
        rows = await tx.list_deliveries(update_id=update.id)
        assert (await tx.latest_update(clock())) == update
    assert sorted(d.dedupe_key for d in rows) == [
        f"post:u{update.id}:s1",
        f"post:u{update.id}:s2",
    ]
    assert store.outbox_written.is_set()


async def test_database_from_a_newer_strikebot_is_refused_with_advice(sqlite_url: str) -> None:
    import pytest

    from bot.errors import StoreUnavailable

    async with Store.open(sqlite_url) as opened, opened.write() as tx:
        await tx.conn.exec_driver_sql("UPDATE alembic_version SET version_num='9999'")
    with pytest.raises(StoreUnavailable, match="newer strikebot"):
        async with Store.open(sqlite_url):
            pass


async def test_unreachable_database_is_one_clear_sentence() -> None:
    import pytest

    from bot.errors import StoreUnavailable

    # Port 9 (discard) on loopback: nothing listens there.
    with pytest.raises(StoreUnavailable, match="Check STRIKEBOT_DATABASE_URL"):
        async with Store.open("postgresql+asyncpg://nobody@127.0.0.1:9/none"):
            pass


async def test_a_mistyped_year_is_refused_before_it_is_stored(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    from datetime import UTC, datetime

    import pytest

    from bot.errors import InvalidInput

    draft = Draft(
        Status.STRIKE_ON,
        {"en": UpdateText("Strike resumes")},
        next_step_at=datetime(1, 1, 2, tzinfo=UTC),
    )
    with pytest.raises(InvalidInput, match="check the year"):
        await admin.post(ADMIN, draft)
    with pytest.raises(InvalidInput, match="check the year"):
        await admin.post(
            ADMIN,
            Draft(Status.STRIKE_ON, {"en": UpdateText("Later")}),
            publish_at=datetime(9999, 1, 1, tzinfo=UTC),
        )
    async with store.read() as tx:
        assert await tx.count_updates() == 0
