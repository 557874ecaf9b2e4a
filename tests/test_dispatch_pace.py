"""The dispatcher reaches a platform's configured pace whatever its places in flight, with a
platform that answers at once and SENT marks slow to commit; and says when a setting caps
another."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from sqlalchemy import select

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Admin
from bot.models import DeliveryState, Subscription
from bot.ports import ChannelRef, OutboundMessage, Pacing
from bot.store import Store
from bot.store import outbox_queries as q
from bot.store import schema as t
from tests.support import ADMIN, CAMPAIGN
from tests.test_dispatcher import deliveries, post

RATE = 200.0


class InstantAdapter:
    """A platform that answers every send at once, timing each."""

    platform = "discord"

    def __init__(self, pacing: Pacing, expect: int = 0) -> None:
        self._pacing = pacing
        self.sent: Counter[str] = Counter()
        self.times: list[float] = []
        self.expect = expect
        self.all_sent = asyncio.Event()

    @property
    def pacing(self) -> Pacing:
        return self._pacing

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    def health(self) -> Mapping[str, object]:
        return {}

    async def send(
        self, channel: ChannelRef, message: OutboundMessage, *, idempotency_key: str
    ) -> str:
        self.sent[idempotency_key] += 1
        self.times.append(time.monotonic())
        if len(self.sent) >= self.expect:
            self.all_sent.set()
        return f"m-{idempotency_key}"

    async def edit(self, channel: ChannelRef, message_id: str, message: OutboundMessage) -> None:
        pass

    async def delete(self, channel: ChannelRef, message_id: str) -> None:
        pass


async def claimed(store: Store) -> set[str]:
    """Ids of the rows some dispatcher holds."""
    async with store.read() as tx:
        rows = await tx.conn.execute(
            select(t.deliveries.c.id).where(t.deliveries.c.claimed_by.is_not(None))
        )
        return {row[0] for row in rows}


def dispatcher(store: Store, adapter: InstantAdapter, clock: FixedClock, **options: Any) -> Any:
    return Dispatcher(
        store,
        {"discord": adapter},
        CAMPAIGN,
        clock,
        settings=DeliverySection(),
        worker_id="pace-worker",
        timings=Timings(**options),
    )


async def test_sends_reach_the_rate_while_marks_commit_slowly(
    store: Store, admin: Admin, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 places in flight, 200 a second, marks taking half a second to gather and a quarter
    more to commit: a sent row no longer holds its platform's room until its mark commits,
    so the sends keep the pace (held back by the marks, they went at 2 x 4 per 0.75 s)."""
    n = 300
    for i in range(n):
        await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", f"c{i}", "en"))
    await post(admin)
    real_mark_sent = q.mark_sent

    async def slow_mark_sent(tx: Any, **kwargs: Any) -> int:
        await asyncio.sleep(0.25)
        return await real_mark_sent(tx, **kwargs)

    monkeypatch.setattr(q, "mark_sent", slow_mark_sent)
    adapter = InstantAdapter(
        Pacing(global_per_second=RATE, per_channel_per_second=10.0, max_in_flight=4), n
    )
    running_dispatcher = dispatcher(store, adapter, clock, mark_window=0.5, idle_recheck=0.2)
    running = asyncio.create_task(running_dispatcher.run())
    try:
        async with asyncio.timeout(60):
            await adapter.all_sent.wait()
    finally:
        await running_dispatcher.stop()
        await running
    rate = (n - 1) / (adapter.times[-1] - adapter.times[0])
    assert rate >= 0.6 * RATE, f"{rate:.1f} a second against {RATE:g} configured"
    assert set(adapter.sent.values()) == {1}  # each copy once
    rows = await deliveries(store)
    assert len(rows) == n and {d.state for d in rows} == {DeliveryState.SENT}


async def test_the_rows_held_follow_the_rate_not_only_the_places_in_flight(
    store: Store, clock: FixedClock
) -> None:
    fast = InstantAdapter(Pacing(global_per_second=1000, per_channel_per_second=1, max_in_flight=4))
    assert dispatcher(store, fast, clock)._capacity("discord") >= 1000
    slow = InstantAdapter(Pacing(global_per_second=1, per_channel_per_second=1, max_in_flight=4))
    assert dispatcher(store, slow, clock)._capacity("discord") == 8


async def test_a_setting_that_caps_another_is_said_at_start_and_once_measured(
    store: Store, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    pacing = Pacing(
        global_per_second=1000,
        per_channel_per_second=1,
        max_in_flight=4,
        in_flight_setting="[delivery] email_connections",
    )
    d = dispatcher(store, InstantAdapter(pacing), clock)
    (line,) = d.say_caps()
    assert "4 sends in flight ([delivery] email_connections)" in line
    assert "within 4 ms" in line
    with caplog.at_level(logging.WARNING, logger="strikebot.dispatcher"):
        for _ in range(300):
            d.meter.timed("discord", 0.25)  # 4 in flight at 250 ms: 16 a second
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "at most 16 a second, below its configured 1000" in warning
    easy = Pacing(global_per_second=10, per_channel_per_second=1, max_in_flight=4)
    assert dispatcher(store, InstantAdapter(easy), clock).say_caps() == []


async def test_stopping_with_marks_still_to_commit_records_every_sent_row_once(
    store: Store, admin: Admin, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows given back their room at the answer still have their marks committed: a stop
    while marks are gathering records every row that was sent, gives back the rest, and the
    next run sends only those, each once."""
    n = 200
    for i in range(n):
        await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", f"c{i}", "en"))
    await post(admin)
    real_mark_sent = q.mark_sent

    async def slow_mark_sent(tx: Any, **kwargs: Any) -> int:
        await asyncio.sleep(0.2)
        return await real_mark_sent(tx, **kwargs)

    monkeypatch.setattr(q, "mark_sent", slow_mark_sent)
    pacing = Pacing(global_per_second=RATE, per_channel_per_second=10.0, max_in_flight=4)
    adapter = InstantAdapter(pacing, n // 4)
    first = dispatcher(store, adapter, clock, mark_window=0.5)
    running = asyncio.create_task(first.run())
    async with asyncio.timeout(30):
        await adapter.all_sent.wait()
    await first.stop()
    await running
    sent_first = set(adapter.sent)
    rows = {d.id: d for d in await deliveries(store)}
    assert n // 4 <= len(sent_first) < n
    assert {rows[i].state for i in sent_first} == {DeliveryState.SENT}
    rest = {i for i, d in rows.items() if i not in sent_first}
    assert {rows[i].state for i in rest} == {DeliveryState.PENDING}
    assert await claimed(store) == set()

    adapter.expect = n
    second = dispatcher(store, adapter, clock, mark_window=0.05)
    await second.drain()
    assert len(adapter.sent) == n and set(adapter.sent.values()) == {1}
    assert {d.state for d in await deliveries(store)} == {DeliveryState.SENT}


async def test_a_mark_that_fails_to_commit_leaves_the_row_to_be_sent_again_with_its_key(
    store: Store, admin: Admin, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The room a sent row gave back does not forget it: when its mark cannot be committed,
    the row is given back in doubt at the end (an attempt counted), and goes again with the
    same idempotency key, looked for first where the platform can."""
    await admin.subscribe(ADMIN, Subscription(0, "discord", "g1", "c1", "en"))
    await post(admin)
    real_mark_sent = q.mark_sent
    failures = iter([True])

    async def failing_mark_sent(tx: Any, **kwargs: Any) -> int:
        if next(failures, False):
            raise RuntimeError("the database went away")
        return await real_mark_sent(tx, **kwargs)

    monkeypatch.setattr(q, "mark_sent", failing_mark_sent)
    adapter = InstantAdapter(Pacing(global_per_second=RATE, per_channel_per_second=10.0), 1)
    d = dispatcher(store, adapter, clock, mark_window=0.0, lease=60.0)
    await d.drain()
    (row,) = await deliveries(store)
    assert row.state is DeliveryState.PENDING and await claimed(store) == set()
    assert row.in_doubt_since is not None and row.attempts == 1
    await d.drain()
    (row,) = await deliveries(store)
    assert row.state is DeliveryState.SENT
    assert adapter.sent == Counter({row.id: 2})  # the same key twice: the platform's dedupe
