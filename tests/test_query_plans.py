"""Every query a public view runs uses an index: EXPLAIN on SQLite and PostgreSQL.

A realistic store (20,000 updates, most public, some retracted, some with a next step, a
few under embargo; 40,000 audit entries; 20,000 deliveries) is built and analysed; every
public address is fetched while the SQL it runs is recorded; then each recorded statement
is explained with its own parameters. No plan may scan `updates` or `deliveries` whole, nor
sort every row of `updates` to find the newest few.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from sqlalchemy import event, insert

from bot.clock import FixedClock
from bot.store import Store
from bot.store import schema as t
from tests.strike_week import strike_week
from tests.support import CAMPAIGN, FRIDAY
from tests.web_support import client_for, web_context

UPDATES = 20_000


async def fill(store: Store) -> None:
    start = FRIDAY - timedelta(days=400)
    updates = []
    for i in range(UPDATES):
        at = start + timedelta(minutes=25 * i)
        embargoed = i >= UPDATES - 20  # a few scheduled for later
        updates.append(
            {
                "status": "strike_on",
                "urgency": "routine",
                "state": "retracted" if i % 10 == 0 else "published",
                "texts": {"en": {"headline": f"Update {i}", "body": "", "next_step": ""}},
                "next_step_at": at + timedelta(days=1) if i % 3 == 0 else None,
                "author": "bench",
                "created_at": at,
                "publish_at": FRIDAY + timedelta(hours=i % 7 + 1) if embargoed else None,
                "published_at": FRIDAY + timedelta(hours=i % 7 + 1) if embargoed else at,
                "revision": 1,
            }
        )
    async with store.write() as tx:
        await tx.conn.execute(insert(t.updates), updates)
        sub = await tx.conn.execute(
            insert(t.subscriptions).returning(t.subscriptions.c.id),
            [
                {
                    "platform": "discord",
                    "workspace": "1",
                    "channel": str(n),
                    "language": "en",
                    "urgencies": "routine,important,urgent",
                    "timezone": CAMPAIGN.timezone,
                    "created_at": FRIDAY,
                }
                for n in range(10)
            ],
        )
        subs = [row[0] for row in sub]
        await tx.conn.execute(
            insert(t.audit_log),
            [
                {"at": FRIDAY, "actor": "bench", "action": "update.post", "target": f"update:{i}"}
                for i in range(2 * UPDATES)
            ],
        )
        await tx.conn.execute(
            insert(t.deliveries),
            [
                {
                    "id": f"d{i:019d}",
                    "dedupe_key": f"k{i}",
                    "subscription_id": subs[i % 10],
                    "platform": "discord",
                    "action": "post",
                    "update_id": i % UPDATES + 1,
                    "revision": 1,
                    "state": "sent",
                    "attempts": 1,
                    "not_before": FRIDAY,
                    "created_at": FRIDAY,
                }
                for i in range(UPDATES)
            ],
        )
    async with store.write() as tx:
        await tx.conn.exec_driver_sql("ANALYZE")


def full_scans(dialect: str, statement: str, plan: list[str]) -> list[str]:
    """The plan lines that read `updates` or `deliveries` whole (or sort all of updates)."""
    bad = []
    for line in plan:
        step = line.strip().removeprefix("->").strip()
        if dialect == "sqlite":
            if re.match(r"SCAN (updates|deliveries)\b", step):
                bad.append(step)
            if step.startswith("USE TEMP B-TREE") and re.search(r"\bFROM updates\b", statement):
                bad.append(step)
        else:
            if re.match(r"(Parallel )?Seq Scan on (updates|deliveries)\b", step):
                bad.append(step)
            if re.match(r"Sort  ?\(", step) and re.search(r"\bFROM updates\b", statement):
                bad.append(step)
    return bad


async def test_every_public_query_uses_an_index(store: Store, clock: FixedClock) -> None:
    timeline = await strike_week(store, clock)
    await fill(store)
    ctx = web_context(store, clock)
    recorded: list[tuple[str, Any]] = []

    def record(*args: Any) -> None:
        statement, parameters = str(args[2]), args[3]
        if statement.lstrip().upper().startswith("SELECT"):
            recorded.append((statement, parameters))

    paths = [
        "/", "/es/", "/updates", f"/updates?after={timeline.friday.id}",
        f"/updates/{timeline.friday.id}", f"/es/updates/{timeline.began.id}", "/updates/999999",
        "/feed.atom", "/es/feed.atom", "/calendar.ics", "/api/v1/status", "/api/v1/updates",
        f"/api/v1/updates?after={timeline.friday.id}", f"/api/v1/updates/{timeline.friday.id}",
        "/api/v1/demands", "/api/v1/demands/pay",
    ]  # fmt: skip
    engine = store.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        async with client_for(ctx) as client:
            for path in paths:
                response = await client.get(path)
                assert response.status in (200, 404), path
    finally:
        event.remove(engine, "before_cursor_execute", record)

    explain = "EXPLAIN QUERY PLAN " if store.dialect == "sqlite" else "EXPLAIN "
    explained: dict[str, list[str]] = {}
    async with store.read() as tx:
        for statement, parameters in recorded:
            if statement in explained:
                continue
            rows = await tx.conn.exec_driver_sql(explain + statement, parameters)
            # SQLite: (id, parent, notused, detail); PostgreSQL: one line of text per row.
            explained[statement] = [str(row[-1]) for row in rows]
    assert any("FROM updates" in s for s in explained), "no public query was recorded"
    failures = {
        " ".join(statement.split())[:160]: bad
        for statement, plan in explained.items()
        if (bad := full_scans(store.dialect, statement, plan))
    }
    assert failures == {}
