"""Bounded history: settled deliveries older than `keep_history_days` are summarised and
purged in batches; pending ones, newer ones and the audit log stay."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import func, insert, select

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher
from bot.editorial.admin import Admin
from bot.models import Subscription
from bot.store import Store
from bot.store import outbox_queries as q
from bot.store import schema as t
from tests.support import ADMIN, CAMPAIGN, FRIDAY


async def fill(store: Store, admin: Admin) -> tuple[int, int]:
    sub = await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", "c1", "en", timezone="UTC"))
    async with store.write() as tx:
        (update_id,) = (
            await tx.conn.execute(
                insert(t.updates).returning(t.updates.c.id),
                [
                    {
                        "status": "strike_on",
                        "urgency": "urgent",
                        "state": "published",
                        "texts": {"en": {"headline": "Old", "body": "", "next_step": ""}},
                        "author": "a",
                        "created_at": FRIDAY,
                        "published_at": FRIDAY,
                        "revision": 1,
                    }
                ],
            )
        ).one()

        def row(n: int, state: str, age_days: int, attempts: int = 1) -> dict[str, Any]:
            return {
                "id": f"h{n:06d}",
                "dedupe_key": f"h{n}",
                "subscription_id": sub.id,
                "platform": "discord" if n % 2 else "slack",
                "action": "post",
                "update_id": update_id,
                "revision": 1,
                "state": state,
                "attempts": attempts,
                "not_before": FRIDAY - timedelta(days=age_days),
                "created_at": FRIDAY - timedelta(days=age_days),
            }

        rows = (
            [row(n, "sent", 100, attempts=1 + n % 3) for n in range(0, 50)]
            + [row(n, "dead", 95) for n in range(50, 60)]
            + [row(n, "cancelled", 91) for n in range(60, 65)]
            + [row(n, "pending", 120) for n in range(65, 70)]  # old but not settled
            + [row(n, "sent", 10) for n in range(70, 80)]  # recent
        )
        await tx.conn.execute(insert(t.deliveries), rows)
    return update_id, len(rows)


async def test_old_settled_deliveries_are_summarised_then_purged(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    update_id, _ = await fill(store, admin)
    async with store.read() as tx:
        before = await q.update_summary(tx, update_id, clock())
        audit = await tx.conn.scalar(select(func.count()).select_from(t.audit_log))
    dispatcher = Dispatcher(
        store, {}, CAMPAIGN, clock, settings=DeliverySection(keep_history_days=90)
    )

    assert await dispatcher.purge_history(batch=7) == 65  # in batches of 7
    assert await dispatcher.purge_history() == 0

    async with store.read() as tx:
        left = await tx.list_deliveries(limit=None)
        after = await q.update_summary(tx, update_id, clock())
        history = (await tx.conn.execute(select(t.delivery_history))).all()
        assert await tx.conn.scalar(select(func.count()).select_from(t.audit_log)) == audit
    assert sorted(str(d.state) for d in left) == ["pending"] * 5 + ["sent"] * 10
    # The per-update summary counts the purged copies from their summary.
    assert after == before
    assert sum(h._mapping["count"] for h in history) == 65
    assert {(h.platform, h.state) for h in history} >= {("discord", "sent"), ("slack", "dead")}


async def test_zero_keeps_everything(store: Store, admin: Admin, clock: FixedClock) -> None:
    _, total = await fill(store, admin)
    dispatcher = Dispatcher(
        store, {}, CAMPAIGN, clock, settings=DeliverySection(keep_history_days=0)
    )
    assert await dispatcher.purge_history() == 0
    async with store.read() as tx:
        assert len(await tx.list_deliveries(limit=None)) == total
