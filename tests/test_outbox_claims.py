"""The outbox queries the dispatcher relies on, on SQLite and PostgreSQL: claims under a
lease, follow-ups held behind their POST, writes conditioned on the claim, re-queueing."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.clock import FixedClock
from bot.editorial.admin import Admin, Changes, Draft
from bot.models import (
    Delivery,
    DeliveryAction,
    DeliveryState,
    Status,
    Subscription,
    Update,
    UpdateText,
    Urgency,
)
from bot.store import NewDelivery, Store
from bot.store import outbox_queries as q
from tests.support import ADMIN, ADMINS, CAMPAIGN, fresh_postgres_database

LEASE = timedelta(seconds=60)
DISCORD = "discord"


async def subscribe(admin: Admin, count: int) -> list[Subscription]:
    return [
        await admin.subscribe(
            ADMIN, Subscription(0, "discord", "g1", f"c{i}", "en", timezone="UTC")
        )
        for i in range(count)
    ]


async def post(admin: Admin, headline: str = "Strike on") -> Update:
    return await admin.post(
        ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText(headline)}, Urgency.URGENT)
    )


async def claim(store: Store, worker: str, now: datetime, limit: int = 100) -> list[Delivery]:
    async with store.write() as tx:
        return await q.claim(
            tx, worker=worker, platform=DISCORD, now=now, lease_until=now + LEASE, limit=limit
        )


async def mark_sent(store: Store, worker: str, delivery: Delivery, now: datetime) -> int:
    async with store.write() as tx:
        return await q.mark_sent(
            tx, worker=worker, marks=[q.SentMark(delivery.id, f"m-{delivery.id}", now)]
        )


async def row(store: Store, delivery_id: str) -> Delivery:
    async with store.read() as tx:
        (found,) = await q.deliveries_by_id(tx, [delivery_id])
    return found


async def test_a_claim_takes_due_rows_once_until_its_lease_lapses(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    subs = await subscribe(admin, 3)
    update = await post(admin)
    later = NewDelivery(
        "briefing:later", subs[0].id, "discord", DeliveryAction.BRIEFING,
        clock() + timedelta(hours=1), payload={"message": {"title": "later"}},
    )  # fmt: skip
    async with store.write() as tx:
        await tx.enqueue([later], clock())

    first = await claim(store, "a", clock())

    assert {d.update_id for d in first} == {update.id}
    assert len(first) == 3  # the briefing is not due yet
    assert await claim(store, "b", clock()) == []  # leased to "a"

    clock.advance(seconds=61)  # "a" stopped renewing: its lease lapsed
    second = await claim(store, "b", clock())
    assert {d.id for d in second} == {d.id for d in first}

    # "a" comes back and tries to record its send: the row is "b"'s now.
    assert await mark_sent(store, "a", first[0], clock()) == 0
    assert await mark_sent(store, "b", first[0], clock()) == 1
    sent = await row(store, first[0].id)
    assert sent.state is DeliveryState.SENT
    assert sent.platform_message_id == f"m-{first[0].id}"
    # Two attempts: "b"'s, and "a"'s, whose outcome nobody recorded (its lease lapsed).
    assert sent.attempts == 2 and sent.sent_at == clock()
    for other in first[1:]:
        assert await mark_sent(store, "b", other, clock()) == 1
    clock.advance(hours=1)
    assert [d.action for d in await claim(store, "c", clock())] == [DeliveryAction.BRIEFING]


async def test_a_claim_takes_the_earliest_due_rows_up_to_its_limit(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    (sub,) = await subscribe(admin, 1)
    rows = [
        NewDelivery(f"notice:{minutes}", sub.id, "discord", DeliveryAction.NOTICE,
                    clock() - timedelta(minutes=minutes), payload={"message": {"title": "x"}})
        for minutes in (5, 50, 20, 1)
    ]  # fmt: skip
    async with store.write() as tx:
        await tx.enqueue(rows, clock())

    taken = await claim(store, "a", clock(), limit=2)

    assert [d.dedupe_key for d in taken] == ["notice:50", "notice:20"]


async def test_a_followup_waits_until_its_post_is_settled(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 1)
    update = await post(admin, "Strike resumes Monday")
    await admin.edit(
        ADMIN, update.id, Changes(texts={"en": UpdateText("Strike resumes Tuesday")}), reason="Day"
    )

    (the_post,) = await claim(store, "a", clock())
    assert the_post.action is DeliveryAction.POST
    assert await claim(store, "b", clock()) == []  # the EDIT waits for the POST on the wire

    # An admin cancels the POST while it is on the wire (a retraction racing the fan-out):
    # the EDIT still waits, because the sender's outcome decides whether a copy exists.
    async with store.write() as tx:
        await tx.cancel_pending(update_id=update.id, actions=[DeliveryAction.POST])
    assert await claim(store, "b", clock()) == []

    assert await mark_sent(store, "a", the_post, clock()) == 1
    assert (await row(store, the_post.id)).state is DeliveryState.SENT
    (edit,) = await claim(store, "b", clock())
    assert edit.action is DeliveryAction.EDIT


async def test_a_followup_is_claimable_once_its_post_is_dead_or_its_lease_lapsed(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 2)
    update = await post(admin)
    await admin.retract(ADMIN, update.id, reason="Wrong campaign")
    # The retraction cancelled both POSTs; nobody held them, so the RETRACTs are free.
    retracts = await claim(store, "a", clock())
    assert {d.action for d in retracts} == {DeliveryAction.RETRACT}
    assert len(retracts) == 2
    async with store.write() as tx:
        for d in retracts:
            await q.settle(tx, worker="a", delivery_id=d.id, state=DeliveryState.CANCELLED,
                           reason="nothing to retract")  # fmt: skip

    other = await post(admin, "Second")
    posts = await claim(store, "a", clock())
    await admin.retract(ADMIN, other.id, reason="Also wrong")
    async with store.write() as tx:
        dead = posts[0]
        assert await q.settle(tx, worker="a", delivery_id=dead.id, state=DeliveryState.DEAD,
                              reason="Missing Access (403)", count_attempt=True)  # fmt: skip
    # One POST died (its RETRACT is free), the other is still on the wire under "a".
    freed = await claim(store, "b", clock())
    assert [(d.action, d.subscription_id) for d in freed] == [
        (DeliveryAction.RETRACT, dead.subscription_id)
    ]
    async with store.write() as tx:
        await q.settle(tx, worker="b", delivery_id=freed[0].id, state=DeliveryState.CANCELLED,
                       reason="nothing to retract")  # fmt: skip
    # "a" crashed mid-send: its POST may be up, so the retraction left it pending. Once the
    # lease lapses "b" takes the POST over (one attempt of unknown outcome counted), and its
    # RETRACT waits for it, so the retraction reaches the copy if there is one.
    clock.advance(seconds=61)
    (taken,) = await claim(store, "b", clock())
    assert (taken.action, taken.attempts) == (DeliveryAction.POST, 1)
    assert await mark_sent(store, "b", taken, clock()) == 1
    assert [d.action for d in await claim(store, "b", clock())] == [DeliveryAction.RETRACT]


async def test_failures_keep_or_return_the_row_and_only_the_holder_may_write(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 2)
    await post(admin)
    kept, returned = await claim(store, "a", clock())
    now = clock()

    async with store.write() as tx:
        assert await q.record_failure(tx, worker="a", delivery_id=kept.id, reason="500",
                                      lease_until=now + 10 * LEASE) == 1  # fmt: skip
        assert await q.record_failure(tx, worker="a", delivery_id=returned.id, reason="502",
                                      lease_until=now + LEASE,
                                      retry_at=now + timedelta(minutes=5)) == 1  # fmt: skip
        assert await q.record_failure(tx, worker="b", delivery_id=kept.id, reason="x",
                                      lease_until=now + LEASE) is None  # fmt: skip

    clock.advance(seconds=61)
    assert await claim(store, "b", clock()) == []  # one renewed, one due in 5 minutes
    again = await row(store, returned.id)
    assert (again.attempts, again.last_error) == (1, "502")
    assert again.not_before == now + timedelta(minutes=5)
    clock.advance(minutes=5)
    assert [d.id for d in await claim(store, "b", clock())] == [returned.id]


async def test_release_and_renew_apply_to_the_holders_rows_only(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 3)
    await post(admin)
    held = await claim(store, "a", clock())
    async with store.write() as tx:
        assert await q.release(tx, worker="b") == 0
        assert await q.release(tx, worker="a", ids=[held[0].id]) == 1
        assert await q.renew(tx, worker="a", ids=[d.id for d in held], lease_until=clock()
                             + 10 * LEASE) == 2  # fmt: skip
    assert [d.id for d in await claim(store, "b", clock())] == [held[0].id]
    clock.advance(seconds=61)
    # "b" let its lease lapse; "a" renewed its two rows well past a minute.
    assert [d.id for d in await claim(store, "c", clock())] == [held[0].id]
    async with store.write() as tx:
        assert await q.release(tx, worker="a") == 2
    assert len(await claim(store, "c", clock())) == 2


async def test_next_due_covers_embargoes_and_leases_but_not_blocked_followups(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 1)
    now = clock()
    async with store.read() as tx:
        assert await q.next_due(tx, platforms=[DISCORD], now=now) is None
    update = await admin.post(
        ADMIN,
        Draft(Status.STRIKE_ON, {"en": UpdateText("Embargoed")}, Urgency.URGENT),
        publish_at=now + timedelta(hours=2),
    )
    async with store.read() as tx:
        assert await q.next_due(tx, platforms=[DISCORD], now=now) == now + timedelta(hours=2)
        assert await q.next_due(tx, platforms=["slack"], now=now) is None
    clock.advance(hours=2)
    await admin.edit(ADMIN, update.id, Changes(texts={"en": UpdateText("E2")}), reason="typo")
    await claim(store, "a", clock())  # the POST, leased for a minute; the EDIT is blocked
    async with store.read() as tx:
        due = await q.next_due(tx, platforms=[DISCORD], now=clock())
        counts = await q.pending_counts(tx)
    assert due == clock() + LEASE  # the POST's lease end, not the blocked EDIT's due time
    assert counts == {DISCORD: 2}


async def test_requeue_dead_puts_rows_back_due_now_with_fresh_attempts(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 2)
    update = await post(admin)
    first, second = await claim(store, "a", clock())
    async with store.write() as tx:
        for d in (first, second):
            await q.settle(tx, worker="a", delivery_id=d.id, state=DeliveryState.DEAD,
                           reason="Unknown Channel (404)", count_attempt=True)  # fmt: skip
    clock.advance(hours=1)
    async with store.write() as tx:
        requeued = await q.requeue_dead(tx, now=clock(), ids=[first.id])
        summary = await q.update_summary(tx, update.id, clock())
    assert [d.id for d in requeued] == [first.id]
    assert requeued[0].last_error == "Unknown Channel (404)"  # as it was, for the audit log
    assert store.outbox_written.is_set()
    again = await row(store, first.id)
    assert (again.state, again.attempts, again.last_error) == (DeliveryState.PENDING, 0, None)
    assert again.not_before == clock()
    assert summary[DISCORD].to_json() == {
        "platform": DISCORD, "total": 2, "pending": 1, "scheduled": 0, "sent": 0,
        "dead": 1, "cancelled": 0, "retried": 0,
    }  # fmt: skip


async def test_concurrent_claimers_share_the_rows_without_overlap(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    await subscribe(admin, 12)
    await post(admin)

    a, b = await asyncio.gather(
        claim(store, "a", clock(), limit=8), claim(store, "b", clock(), limit=8)
    )

    assert not {d.id for d in a} & {d.id for d in b}
    assert len(a) + len(b) == 12


CAPACITY = 99  # rows one process holds at most; three of them are needed for 240 rows


def _claim_until_empty(url: str, worker: str, now: str, start: Any, out: Any) -> None:
    """One dispatcher process: its own Store (engine, connections, in-process write lock) on
    the shared file, claiming small batches until nothing is left or it is full."""

    async def run() -> list[str]:
        at = datetime.fromisoformat(now)
        taken: list[str] = []
        async with Store.open(url, migrate=False) as store:
            start.wait(60)  # every process, its store open, starts claiming at once
            # Like a dispatcher, each holds at most so many rows (its capacity), so none
            # can take them all even when SQLite's busy handler lets it win every race.
            while len(taken) < CAPACITY and (batch := await claim(store, worker, at, limit=3)):
                taken += [d.id for d in batch]
        return taken

    out.put((worker, asyncio.run(run())))


async def test_separate_processes_on_one_sqlite_file_never_claim_a_row_twice(
    tmp_path: Path, clock: FixedClock
) -> None:
    """In one process an asyncio lock queues every writer, so a claim test there proves
    nothing about two `strikebot` processes on one file: here three real processes, each with
    its own engine, race for the same rows, and SQLite's BEGIN IMMEDIATE must keep them apart."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    async with Store.open(url) as store:
        admin = Admin(store, CAMPAIGN, ADMINS, clock)
        (sub,) = await subscribe(admin, 1)
        rows = [
            NewDelivery(
                f"notice:{n}",
                sub.id,
                "discord",
                DeliveryAction.NOTICE,
                clock(),
                payload={"message": {"title": f"notice {n}"}},
            )
            for n in range(240)
        ]
        async with store.write() as tx:
            assert await tx.enqueue(rows, clock()) == 240

    context = multiprocessing.get_context("spawn")
    workers = [f"process-{n}" for n in range(3)]
    start, out = context.Barrier(len(workers)), context.Queue()
    processes = [
        context.Process(target=_claim_until_empty, args=(url, w, clock().isoformat(), start, out))
        for w in workers
    ]
    for process in processes:
        process.start()
    results = dict(await asyncio.to_thread(lambda: [out.get(timeout=120) for _ in workers]))
    for process in processes:
        await asyncio.to_thread(process.join, 30)
        assert process.exitcode == 0

    claimed = [i for taken in results.values() for i in taken]
    assert len(claimed) == 240 and len(set(claimed)) == 240  # every row once, none twice
    assert all(results.values())  # every process took part
    async with Store.open(url) as store, store.read() as tx:
        held = {d.id: d for d in await tx.list_deliveries(limit=None)}
    assert len(held) == 240


@pytest.fixture
async def pg_store() -> AsyncIterator[Store]:
    async with fresh_postgres_database() as url, Store.open(url) as opened:
        yield opened


async def test_on_postgresql_a_claimer_skips_rows_locked_by_an_open_claim(
    pg_store: Store, clock: FixedClock
) -> None:
    admin = Admin(pg_store, CAMPAIGN, ADMINS, clock)
    await subscribe(admin, 10)
    await post(admin)
    now = clock()
    args: dict[str, Any] = {"platform": DISCORD, "now": now, "lease_until": now + LEASE}

    async with asyncio.timeout(10), pg_store.write() as tx_a:
        a = await q.claim(tx_a, worker="a", limit=4, **args)
        # "a" has not committed: "b" cannot see its lease, only its row locks.
        async with pg_store.write() as tx_b:
            b = await q.claim(tx_b, worker="b", limit=10, **args)

    assert len(a) == 4 and len(b) == 6
    assert not {d.id for d in a} & {d.id for d in b}
