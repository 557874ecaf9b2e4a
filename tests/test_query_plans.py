"""Every query a public view runs uses an index: EXPLAIN on SQLite and PostgreSQL. So do the
dispatcher's claim and idle queries, at 100,000 pending rows behind a history.

A realistic store (20,000 updates, most public, some retracted, some with a next step, a
few under embargo; 40,000 audit entries; 20,000 deliveries) is built and analysed; every
public address is fetched while the SQL it runs is recorded; then each recorded statement
is explained with its own parameters. No plan may scan `updates` or `deliveries` whole, nor
sort every row of `updates` to find the newest few.
"""

from __future__ import annotations

import re
from datetime import time, timedelta
from typing import Any

from sqlalchemy import insert, update

from bot.briefings.compose import gather_briefing_inputs
from bot.briefings.runs import queue_schedule
from bot.briefings.times import Schedule, latest_briefing
from bot.clock import FixedClock
from bot.models import DeliveryState, UpdateState
from bot.store import Store, Tx, shared_payloads
from bot.store import outbox_queries as q
from bot.store import schema as t
from tests.strike_week import strike_week
from tests.support import CAMPAIGN, FRIDAY, Recorded, recording
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


def _selects(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT")


async def plans(store: Store, recorded: Recorded, *, seqscan: bool = True) -> dict[str, list[str]]:
    """Each distinct statement's plan, explained with its own parameters: SQLite's
    (id, parent, notused, detail) rows or PostgreSQL's lines of text. `seqscan=False`:
    what PostgreSQL does when told to use its indexes where it can."""
    explain = "EXPLAIN QUERY PLAN " if store.dialect == "sqlite" else "EXPLAIN "
    explained: dict[str, list[str]] = {}
    async with store.read() as tx:
        if not seqscan and store.dialect == "postgresql":
            await tx.conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        for statement, parameters in recorded:
            if statement not in explained:
                if isinstance(parameters, list):  # executemany: each set plans alike
                    parameters = parameters[0]
                rows = await tx.conn.exec_driver_sql(explain + statement, parameters)
                explained[statement] = [str(row[-1]) for row in rows]
    return explained


async def test_every_public_query_uses_an_index(store: Store, clock: FixedClock) -> None:
    timeline = await strike_week(store, clock)
    await fill(store)
    ctx = web_context(store, clock)
    paths = [
        "/", "/es/", "/updates", f"/updates?after={timeline.friday.id}",
        f"/updates/{timeline.friday.id}", f"/es/updates/{timeline.began.id}", "/updates/999999",
        "/feed.atom", "/es/feed.atom", "/calendar.ics", "/api/v1/status", "/api/v1/updates",
        f"/api/v1/updates?after={timeline.friday.id}", f"/api/v1/updates/{timeline.friday.id}",
        "/api/v1/demands", "/api/v1/demands/pay",
    ]  # fmt: skip
    with recording(store, _selects) as recorded:
        async with client_for(ctx) as client:
            for path in paths:
                response = await client.get(path)
                assert response.status in (200, 404), path
    explained = await plans(store, recorded)
    assert any("FROM updates" in s for s in explained), "no public query was recorded"
    failures = {
        " ".join(statement.split())[:160]: bad
        for statement, plan in explained.items()
        if (bad := full_scans(store.dialect, statement, plan))
    }
    assert failures == {}


# -- the dispatcher's queries ---------------------------------------------------------------

PENDING_ROWS = 100_000
HISTORY_ROWS = 20_000


async def fill_outbox(store: Store, *, analyze: bool = True) -> None:
    """100,000 pending rows (posts and edits of two updates to 50,000 channels, some under
    an embargo, some leased) behind 20,000 rows of sent history. `analyze=False` leaves the
    planner without statistics, as a database nobody ran ANALYZE on (SQLite's, always)."""
    async with store.write() as tx:
        sub_ids = [
            row[0]
            for row in await tx.conn.execute(
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
                    for n in range(PENDING_ROWS // 2)
                ],
            )
        ]
        update_ids = [
            row[0]
            for row in await tx.conn.execute(
                insert(t.updates).returning(t.updates.c.id),
                [
                    {
                        "status": "strike_on",
                        "urgency": "urgent",
                        "state": "published",
                        "texts": {"en": {"headline": f"U{i}", "body": "", "next_step": ""}},
                        "author": "bench",
                        "created_at": FRIDAY,
                        "published_at": FRIDAY,
                        "revision": 1,
                    }
                    for i in range(3)
                ],
            )
        ]

        def row(n: int, update: int, action: str, state: str, **more: Any) -> dict[str, Any]:
            return {
                "id": f"{action[0]}{update}x{n:018d}",
                "dedupe_key": f"{action}:{update}:{n}",
                "subscription_id": sub_ids[n % len(sub_ids)],
                "platform": "discord" if n % 10 else "slack",
                "action": action,
                "update_id": update_ids[update],
                "revision": 1,
                "state": state,
                "attempts": 0,
                "not_before": FRIDAY + timedelta(seconds=n % 600 - 300),
                "created_at": FRIDAY - timedelta(days=1),
                "claimed_by": "other" if n % 97 == 0 else None,
                "claimed_until": FRIDAY + timedelta(seconds=60) if n % 97 == 0 else None,
            } | more

        await tx.conn.execute(
            insert(t.deliveries),
            [row(n, 0, "post", "sent", created_at=FRIDAY - timedelta(days=30))
             for n in range(HISTORY_ROWS)]
            + [row(n, 1, "post", "pending") for n in range(PENDING_ROWS // 2)]
            + [row(n, 2 if n % 2 else 1, "edit", "pending") for n in range(PENDING_ROWS // 2)],
        )  # fmt: skip
    if analyze:
        async with store.write() as tx:
            await tx.conn.exec_driver_sql("ANALYZE")


def claim_scans(dialect: str, plan: list[str]) -> list[str]:
    """Plan lines that read the whole outbox or sort it: a claim must read its batch."""
    bad = []
    for line in plan:
        step = line.strip().removeprefix("->").strip()
        if dialect == "sqlite":
            if re.match(r"SCAN (deliveries|candidate|post)\b(?! USING)", step):
                bad.append(step)
            if step.startswith("USE TEMP B-TREE"):
                bad.append(step)
        else:
            if re.match(r"(Parallel )?Seq Scan on deliveries\b", step):
                bad.append(step)
            if re.match(r"(Incremental )?Sort\b", step):
                bad.append(step)
    return bad


async def test_claims_and_idle_queries_read_only_their_rows_at_100000_pending(
    store: Store,
) -> None:
    await fill_outbox(store)
    explained_kinds = ("SELECT", "UPDATE", "WITH", "DELETE")
    with recording(store, lambda s: s.lstrip().upper().startswith(explained_kinds)) as recorded:
        # Recorded inside a transaction that is rolled back: the plans are of these rows.
        async with store.engine.connect() as conn, conn.begin() as outer:
            tx = Tx(conn)
            now = FRIDAY
            claimed = await q.claim(
                tx, worker="w", platform="discord", now=now, lease_until=now, limit=128
            )
            assert len(claimed) == 128
            assert await q.next_due(tx, platforms=["discord", "slack"], now=now) is not None
            counts = await q.pending_counts(tx)
            assert sum(counts.values()) == PENDING_ROWS
            # The hourly purge, with nothing old enough: one index entry read.
            before = FRIDAY - timedelta(days=90)
            assert await q.purge_history(tx, before=before, now=now) == 0
            await outer.rollback()
    explained = await plans(store, recorded)
    # The claim, next_due (one statement for every platform), the depth, the purge.
    assert len(explained) >= 4, list(explained)
    assert any(s.count("SELECT deliveries.not_before") == 2 for s in explained), list(explained)
    failures = {
        " ".join(statement.split())[:200]: (bad, plan)
        for statement, plan in explained.items()
        if (bad := claim_scans(store.dialect, plan)) and "count(" not in statement
    }
    assert failures == {}
    # The queue depth counts what is pending, from the pending rows' index (PostgreSQL
    # rightly prefers a sequential scan here, where most rows are pending).
    (depth,) = [(s, plan) for s, plan in explained.items() if "count(" in s]
    assert "state = 'pending'" in depth[0]
    if store.dialect == "sqlite":
        assert any("ix_deliveries_pending" in line for line in depth[1]), depth[1]


async def test_pickers_read_the_newest_updates_through_an_index(
    store: Store, clock: FixedClock
) -> None:
    await fill(store)
    live = {UpdateState.PUBLISHED, UpdateState.SCHEDULED, UpdateState.PENDING_APPROVAL}
    with recording(store, lambda _: True) as recorded:
        async with store.read() as tx:
            for states in (None, live, {UpdateState.PENDING_APPROVAL}):
                found = await tx.recent_updates(clock(), limit=25, states=states)
                assert len(found) == (0 if states == {UpdateState.PENDING_APPROVAL} else 25)
    explained = await plans(store, recorded)
    assert explained
    for plan in explained.values():
        text = "\n".join(plan)
        # Newest first along the primary key, stopping at the limit (SQLite says "SCAN
        # updates" for that walk too, but no sort), or the few rows of one state
        # found through its index and sorted.
        assert "TEMP B-TREE" not in text and "Seq Scan" not in text, plan
        if "Sort" in text:
            assert "Index Cond: ((state)" in text, plan


async def test_the_briefings_read_of_the_week_costs_the_week(store: Store) -> None:
    """What a morning briefing reads ("what changed in the last seven days") is found
    through the indexes on when updates were published and retracted and when revisions
    were made: neither `updates` nor `update_revisions` is read whole, however long the
    campaign has run."""
    await fill(store)
    async with store.write() as tx:
        made = FRIDAY - timedelta(days=400)
        await tx.conn.execute(
            insert(t.update_revisions),
            [
                {
                    "update_id": i + 1,
                    "number": 1,
                    "texts": {"en": {"headline": f"Update {i}", "body": "", "next_step": ""}},
                    "status": "strike_on",
                    "urgency": "routine",
                    "editor": "bench",
                    "reason": "typo",
                    "created_at": made + timedelta(minutes=25 * i + 5),
                }
                for i in range(0, UPDATES, 10)
            ],
        )
        await tx.conn.exec_driver_sql("ANALYZE")
    with recording(store, lambda s: _selects(s) and "update" in s) as recorded:
        async with store.read() as tx:
            # A morning deep in the campaign's history: 300 days of updates behind it.
            inputs = await gather_briefing_inputs(tx, CAMPAIGN, FRIDAY - timedelta(days=100))
    assert len(inputs.recent_updates) > 300  # a week of an update every 25 minutes
    assert any(u.revisions for u in inputs.recent_updates)
    scan = (
        r"(SCAN (updates|update_revisions)\b|(Parallel )?Seq Scan on (updates|update_revisions)\b)"
    )
    # At 20,000 rows PostgreSQL rightly reads `updates` whole rather than look up 400 rows
    # one by one; what is checked there is that every part of the read can go through an
    # index, which it does once the history is long.
    explained = await plans(store, recorded, seqscan=False)
    assert len(explained) >= 2  # the week's updates, their revisions
    failures = {
        " ".join(statement.split())[:160]: plan
        for statement, plan in explained.items()
        if any(re.match(scan, line.strip().removeprefix("->").strip()) for line in plan)
    }
    assert failures == {}


# -- the briefing scheduler's queries -------------------------------------------------------

SCHEDULED = 20_000


async def test_a_schedule_is_queued_through_the_schedule_index(
    store: Store, clock: FixedClock
) -> None:
    """The page, the claims and the outbox rows of one schedule read only its channels (the
    partial index is used only when the query states its condition word for word)."""
    times = [f"{6 + n // 2:02d}:{30 * (n % 2):02d}" for n in range(10)]
    async with store.write() as tx:
        await tx.conn.execute(
            insert(t.subscriptions),
            [
                {
                    "platform": "discord",
                    "workspace": "1",
                    "channel": str(n),
                    "language": "es" if n % 2 else "en",
                    "urgencies": "routine,important,urgent",
                    "briefing_time": None if n % 7 == 0 else times[n % 10],
                    "timezone": CAMPAIGN.timezone,
                    "briefing_days": "0123456",
                    "active": n % 5 != 0,
                    "created_at": FRIDAY - timedelta(days=30),
                }
                for n in range(SCHEDULED)
            ],
        )
    async with store.write() as tx:
        await tx.conn.exec_driver_sql("ANALYZE")

    def about_channels(statement: str) -> bool:
        return "subscriptions" in statement and not statement.lstrip().startswith("SELECT pg_")

    schedule = Schedule(time(7, 0), CAMPAIGN.timezone, frozenset(range(7)))
    slot = latest_briefing(schedule, FRIDAY + timedelta(days=1))
    assert slot is not None
    with recording(store, about_channels) as recorded:
        outcomes = await queue_schedule(
            store, CAMPAIGN, schedule, slot, slot.at, grace=timedelta(hours=2), page_size=500
        )
    assert len(outcomes) > 500
    explained = await plans(store, recorded)
    assert any(s.lstrip().startswith("INSERT INTO deliveries") for s in explained)
    scan = r"(SCAN subscriptions$|SCAN subscriptions \(|(Parallel )?Seq Scan on subscriptions)"
    failures = {
        " ".join(statement.split())[:160]: plan
        for statement, plan in explained.items()
        if any(re.match(scan, line.strip().removeprefix("->").strip()) for line in plan)
        # SQLite finds a schedule's channels through the schedule index, not by walking the
        # primary key (PostgreSQL weighs both with its statistics).
        or (
            store.dialect == "sqlite"
            and "briefing_time =" in statement
            and not any("ix_subscriptions_schedule" in line for line in plan)
        )
    }
    assert failures == {}


async def test_the_purge_asks_whether_a_shared_payload_is_used_through_an_index(
    store: Store,
) -> None:
    """100,000 outbox rows naming 40 shared payloads (20 days of two languages): deciding
    which old shared payloads no delivery names any more probes the deliveries' index on
    `shared_payload_id`, never reads the outbox whole."""
    await fill_outbox(store)
    old = FRIDAY - timedelta(days=200)
    async with store.write() as tx:
        payload_ids = [
            row[0]
            for row in await tx.conn.execute(
                insert(t.shared_payloads).returning(t.shared_payloads.c.id),
                [{"payload": {"message": {"title": str(n)}}, "created_at": old} for n in range(40)],
            )
        ]
        named = payload_ids[0] + t.deliveries.c.subscription_id % 40
        await tx.conn.execute(update(t.deliveries).values(shared_payload_id=named))
        await tx.conn.exec_driver_sql("ANALYZE")
    explained_kinds = ("DELETE",)
    with recording(store, lambda s: s.lstrip().upper().startswith(explained_kinds)) as recorded:
        async with store.engine.connect() as conn, conn.begin() as outer:
            tx = Tx(conn)
            assert await shared_payloads.purge_unused(tx, before=FRIDAY) == 0
            await outer.rollback()
    explained = await plans(store, recorded)
    assert len(explained) == 1, list(explained)
    [(statement, plan)] = explained.items()
    assert "shared_payloads" in statement
    assert claim_scans(store.dialect, plan) == [], plan
    assert any("ix_deliveries_shared_payload" in line for line in plan), plan


async def test_next_due_reads_one_lease_entry_per_platform_at_100000_pending(
    store: Store,
) -> None:
    """The earliest lease to lapse is the first entry of the leased rows' index for the
    platform, with or without the planner's statistics: planned on the pending rows' index
    (SQLite without ANALYZE did), it read every pending row of the platform, 0.1-0.2 s per
    look at 100,000."""
    await fill_outbox(store, analyze=store.dialect == "postgresql")
    with recording(store, lambda s: s.lstrip().upper().startswith("SELECT")) as recorded:
        async with store.read() as tx:
            due = await q.next_due_by_platform(tx, platforms=["discord", "slack"], now=FRIDAY)
    assert set(due) == {"discord", "slack"}
    explained = await plans(store, recorded)
    (plan,) = [p for s, p in explained.items() if "claimed_until" in s]
    leases = [line for line in plan if "ix_deliveries_leases" in line]
    assert len(leases) == 2, plan  # one entry per platform
    assert claim_scans(store.dialect, plan) == [], plan
    if store.dialect == "sqlite":
        assert all("(platform=? AND claimed_until>?)" in line for line in leases), plan


async def test_every_query_of_a_dispatcher_round_reads_its_rows_at_100000_pending(
    store: Store,
) -> None:
    """A round's queries (look, claim and what it reads with the claim, the SENT marks, a
    renewal, a retry, a postponement, a settlement, the update's state) read the rows they
    name through an index, not the outbox: at 100,000 pending rows, on SQLite without
    statistics (nothing runs ANALYZE there), on PostgreSQL with them (autovacuum's)."""
    await fill_outbox(store, analyze=store.dialect == "postgresql")
    kinds = ("SELECT", "UPDATE", "WITH")
    with recording(store, lambda s: s.lstrip().upper().startswith(kinds)) as recorded:
        async with store.engine.connect() as conn, conn.begin() as outer:
            tx = Tx(conn)
            now = FRIDAY
            until = now + timedelta(seconds=60)
            await q.next_due_by_platform(tx, platforms=["discord", "slack"], now=now)
            claimed = await q.claim(
                tx, worker="w", platform="discord", now=now, lease_until=until, limit=500
            )
            assert len(claimed) == 500
            await q.subscriptions_and_holders(tx, {d.subscription_id for d in claimed})
            for update_id in {d.update_id for d in claimed if d.update_id}:
                await tx.get_update(update_id, now)
                await q.state_of_update(tx, update_id)
            pairs = {(d.update_id, d.subscription_id) for d in claimed if d.update_id}
            await q.find_posts(tx, pairs)
            marks = [q.SentMark(d.id, f"m{d.id}", now) for d in claimed[:32]]
            await q.mark_sent(tx, worker="w", marks=marks)
            await q.renew(tx, worker="w", ids=[d.id for d in claimed[32:]], lease_until=until)
            one, two, three = claimed[32:35]
            assert await q.record_failure(
                tx, worker="w", delivery_id=one.id, reason="503", lease_until=until
            )
            await q.postpone(tx, worker="w", delivery_id=two.id, not_before=until)
            await q.settle(
                tx, worker="w", delivery_id=three.id, state=DeliveryState.CANCELLED, reason="x"
            )
            await outer.rollback()
    explained = await plans(store, recorded)
    assert len(explained) >= 10, list(explained)
    failures = {
        " ".join(statement.split())[:200]: (bad, plan)
        for statement, plan in explained.items()
        if (bad := outbox_scans(store.dialect, statement, plan))
    }
    assert failures == {}


def outbox_scans(dialect: str, statement: str, plan: list[str]) -> list[str]:
    """`claim_scans` for a statement on the outbox; for any, a plan line reading the outbox
    or the 50,000 channels whole (the 3 updates of this store are rightly read whole)."""
    on_outbox = re.search(r"\b(FROM|UPDATE) deliveries\b", statement) is not None
    found = claim_scans(dialect, plan) if on_outbox else []
    whole = (
        r"SCAN (deliveries|subscriptions)\b(?! USING)"
        r"|(Parallel )?Seq Scan on (deliveries|subscriptions)\b"
    )
    steps = [line.strip().removeprefix("->").strip() for line in plan]
    return found + [step for step in steps if re.match(whole, step)]
