"""A schedule's briefings share one payload per (run, language): queued by the scheduler's
path, sent by the real dispatcher to a fake platform, retried, exported and purged, on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import event, func, inspect, select, text, update

from bot.briefings.compose import gather_briefing_inputs
from bot.briefings.runs import Outcome, queue_schedule
from bot.briefings.times import BriefingSlot, Schedule, window_start
from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.editorial.admin import Admin
from bot.errors import ImportRefused
from bot.models import DeliveryState, Subscription
from bot.ports import OutboundMessage
from bot.runtime.transfer import dumps, export_document, import_document, parse_document
from bot.store import Store
from bot.store import outbox_queries as q
from bot.store import schema as t
from bot.store.engine import WRITE_OPTION, alembic_config
from tests.fakes.platform import FakePlatform, FakePlatformAdapter, Fault
from tests.support import ADMIN, CAMPAIGN, recording

WS = "g1"
SLOT = BriefingSlot(datetime(2019, 1, 19, 7, 0, tzinfo=UTC), date(2019, 1, 19))
NOW = SLOT.at + timedelta(seconds=1)
TITLES = {
    "en": "Morning briefing — Saturday, January 19",
    "es": "Resumen de la mañana — sábado, 19 de enero",
}


@pytest.fixture
async def empty_sqlite(tmp_path: Path) -> AsyncIterator[Store]:
    async with Store.open(f"sqlite+aiosqlite:///{tmp_path / 'imported.db'}") as opened:
        yield opened


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with FakePlatform(global_per_second=400, per_channel_per_second=40) as platform:
        yield platform


@pytest.fixture
async def adapter(fake: FakePlatform) -> AsyncIterator[FakePlatformAdapter]:
    async with FakePlatformAdapter(fake.url, timeout=10.0) as opened:
        yield opened


def dispatcher_for(
    store: Store, adapter: FakePlatformAdapter, clock: FixedClock, **settings: Any
) -> Dispatcher:
    return Dispatcher(
        store,
        {"discord": adapter},
        CAMPAIGN,
        clock,
        settings=DeliverySection(**settings),
        worker_id="test-worker",
        rng=random.Random(7),
        # inline_retry_limit=0: a failed send goes back to the queue, to be read again
        timings=Timings(retry_base=0.01, retry_cap=0.05, send_timeout=15.0, inline_retry_limit=0.0),
    )


async def subscribe(admin: Admin, languages: list[str]) -> list[Subscription]:
    return [
        await admin.subscribe(
            ADMIN,
            Subscription(
                0, "discord", WS, f"c{i}", language, timezone="UTC", briefing_time=time(7, 0)
            ),
        )
        for i, language in enumerate(languages)
    ]


async def queue(store: Store, subs: list[Subscription], clock: FixedClock) -> None:
    """The scheduler's path for the 07:00 job, two channels a page."""
    clock.now = NOW
    schedule = Schedule.of(subs[0])
    assert schedule is not None
    outcomes = await queue_schedule(store, CAMPAIGN, schedule, SLOT, NOW, grace=timedelta(hours=2),
                                    page_size=2)  # fmt: skip
    assert outcomes == {s.id: Outcome.QUEUED for s in subs}


async def shared_ids(store: Store) -> list[int]:
    async with store.read() as tx:
        return list(await tx.conn.scalars(select(t.shared_payloads.c.id).order_by("id")))


def sent_to(fake: FakePlatform, sub: Subscription) -> list[OutboundMessage]:
    return [OutboundMessage.from_json(m.message) for m in fake.messages_in(WS, sub.channel)]


async def test_briefings_reach_each_channel_in_its_language_from_one_shared_payload(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    fake: FakePlatform,
    adapter: FakePlatformAdapter,
) -> None:
    subs = await subscribe(admin, ["en", "es", "es", "en", "es"])
    await queue(store, subs, clock)

    # Three pages, one payload per language: the rows carry none of their own.
    async with store.read() as tx:
        rows = (await tx.conn.execute(select(t.deliveries))).all()
        shared = (await tx.conn.execute(select(t.shared_payloads))).all()
        inputs = await gather_briefing_inputs(tx, CAMPAIGN, NOW)
    assert len(rows) == 5 and len(shared) == 2
    assert all(r.payload is None and r.shared_payload_id is not None for r in rows)
    language_of = {s.id: s.language for s in subs}
    by_language = {language_of[r.subscription_id]: r.shared_payload_id for r in rows}
    assert sorted(by_language.values()) == sorted(p.id for p in shared)
    assert all(r.shared_payload_id == by_language[language_of[r.subscription_id]] for r in rows)

    with recording(store) as recorded:
        stats = await dispatcher_for(store, adapter, clock).drain()
    statements = [statement for statement, _ in recorded]

    assert stats.sent == 5
    for sub in subs:
        [message] = sent_to(fake, sub)
        alone = inputs.compose(CAMPAIGN, sub, NOW, since=window_start(sub, SLOT.at))
        assert message == alone
        assert message.title == TITLES[sub.language]
    rounds = sum(1 for s in statements if s.startswith("WITH chosen AS"))
    reads = [s for s in statements if "FROM shared_payloads" in s]
    assert rounds >= 1 and len(reads) <= rounds  # per round, not per row
    assert [d.state for d in await deliveries(store)] == [DeliveryState.SENT] * 5


async def deliveries(store: Store) -> list[Any]:
    async with store.read() as tx:
        return await tx.list_deliveries(limit=None)


async def test_a_retried_briefing_still_has_its_payload(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    fake: FakePlatform,
    adapter: FakePlatformAdapter,
) -> None:
    """A send that failed goes back to the queue and is claimed again; one given up on is
    brought back by `strikebot deliveries retry` (`requeue_dead`). Both are read from the
    store again, and both send the text of their channel's language."""
    en, es, es_dead = await subscribe(admin, ["en", "es", "es"])
    fake.script(WS, es.channel, Fault.SERVER_ERROR)
    fake.script(WS, es_dead.channel, Fault.SERVER_ERROR, Fault.SERVER_ERROR)
    await queue(store, [en, es, es_dead], clock)
    dispatcher = dispatcher_for(store, adapter, clock, max_attempts=2)

    await dispatcher.drain()
    assert [m.title for m in sent_to(fake, en)] == [TITLES["en"]]
    assert sent_to(fake, es) == []
    clock.advance(seconds=1)
    await dispatcher.drain()
    clock.advance(seconds=1)
    await dispatcher.drain()

    assert [m.title for m in sent_to(fake, es)] == [TITLES["es"]]
    states = {d.subscription_id: d for d in await deliveries(store)}
    dead = states[es_dead.id]
    assert dead.state is DeliveryState.DEAD
    assert dead.payload is not None and dead.shared_payload_id is not None
    async with store.write() as tx:
        [requeued] = await q.requeue_dead(tx, now=clock(), ids=[dead.id])
    assert requeued.payload == dead.payload
    await dispatcher.drain()

    [message] = sent_to(fake, es_dead)
    assert message.title == TITLES["es"]
    assert message == sent_to(fake, es)[0]
    assert {d.state for d in await deliveries(store)} == {DeliveryState.SENT}


async def test_the_purge_deletes_a_shared_payload_once_no_delivery_names_it(
    store: Store,
    admin: Admin,
    clock: FixedClock,
    fake: FakePlatform,
    adapter: FakePlatformAdapter,
) -> None:
    en, es, es_late = await subscribe(admin, ["en", "es", "es"])
    await queue(store, [en, es, es_late], clock)
    old = await shared_ids(store)
    async with store.write() as tx:
        # One Spanish briefing still waits (say, its channel's quiet hours).
        await tx.conn.execute(
            update(t.deliveries)
            .where(t.deliveries.c.subscription_id == es_late.id)
            .values(not_before=NOW + timedelta(days=365))
        )
    await dispatcher_for(store, adapter, clock).drain()
    # 91 days later, with that day's briefing queued too.
    clock.advance(days=91)
    day = BriefingSlot(SLOT.at + timedelta(days=91), SLOT.local_date + timedelta(days=91))
    schedule = Schedule.of(en)
    assert schedule is not None
    await queue_schedule(store, CAMPAIGN, schedule, day, clock(), grace=timedelta(hours=2))
    new = sorted(set(await shared_ids(store)) - set(old))
    dispatcher = dispatcher_for(store, adapter, clock, keep_history_days=90)

    assert await dispatcher.purge_history() == 2  # the old English and Spanish, sent

    english, spanish = old  # written in language order
    assert await shared_ids(store) == [spanish, *new]  # the waiting row still names it
    rows = {(d.subscription_id, d.created_at): d for d in await deliveries(store)}
    waiting = rows[(es_late.id, NOW)]
    assert waiting.state is DeliveryState.PENDING
    assert OutboundMessage.from_json(waiting.payload["message"]).title == TITLES["es"]

    async with store.write() as tx:
        await tx.cancel_pending(subscription_id=es_late.id)
    await dispatcher.purge_history()
    assert await shared_ids(store) == new
    assert english not in new


async def test_an_export_carries_the_shared_payloads_and_imports_them_back(
    store: Store, empty_sqlite: Store, admin: Admin, clock: FixedClock
) -> None:
    subs = await subscribe(admin, ["en", "es"])
    await queue(store, subs, clock)
    text = dumps(await export_document(store, CAMPAIGN.slug, deliveries=True))
    doc = parse_document(text, source="backup.json", campaign_slug=CAMPAIGN.slug)
    assert doc.shared_payloads is not None and len(doc.shared_payloads) == 2

    await import_document(empty_sqlite, doc)

    again = await export_document(empty_sqlite, CAMPAIGN.slug, deliveries=True)
    assert (again.deliveries, again.shared_payloads) == (doc.deliveries, doc.shared_payloads)
    before = {d.id: d.payload for d in await deliveries(store)}
    after = {d.id: d.payload for d in await deliveries(empty_sqlite)}
    assert after == before and all(p is not None for p in after.values())
    async with empty_sqlite.read() as tx:
        count = await tx.conn.scalar(select(func.count()).select_from(t.shared_payloads))
    assert count == 2


def test_an_export_whose_delivery_names_a_missing_shared_payload_is_refused() -> None:
    broken = {
        "format": "strikebot-export",
        "version": 1,
        "campaign": CAMPAIGN.slug,
        "schema_revision": None,
        "meta": {},
        "updates": [],
        "demands": [],
        "subscriptions": [],
        "audit": [],
        "deliveries": [
            {
                "id": "d1",
                "dedupe_key": "briefing:s1:2019-01-19",
                "subscription_id": 1,
                "platform": "discord",
                "action": "briefing",
                "update_id": None,
                "revision": 0,
                "state": "pending",
                "attempts": 0,
                "not_before": "2019-01-19T07:00:00Z",
                "claimed_by": None,
                "claimed_until": None,
                "platform_message_id": None,
                "last_error": None,
                "payload": None,
                "created_at": "2019-01-19T07:00:00Z",
                "sent_at": None,
                "shared_payload_id": 7,
            }
        ],
        "briefing_runs": [],
        "shared_payloads": [],
    }
    with pytest.raises(ImportRefused, match=r"deliveries\.0 \(its shared payload 7"):
        parse_document(json.dumps(broken), source="backup.json", campaign_slug=CAMPAIGN.slug)


async def test_downgrading_past_0013_gives_each_briefing_its_own_payload_back(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    subs = await subscribe(admin, ["en", "es"])
    await queue(store, subs, clock)
    shared = {d.id: d.payload for d in await deliveries(store)}

    await migrate(store, "downgrade", "0012")

    async with store.read() as tx:
        rows = (await tx.conn.execute(text("SELECT id, payload FROM deliveries"))).all()
        tables = await tx.conn.run_sync(lambda c: inspect(c).get_table_names())
    own = {i: payload if isinstance(payload, dict) else json.loads(payload) for i, payload in rows}
    assert own == shared and "shared_payloads" not in tables

    await migrate(store, "upgrade", "head")
    assert {d.id: d.payload for d in await deliveries(store)} == shared


async def migrate(store: Store, direction: str, revision: str) -> None:
    """Alembic's upgrade or downgrade, on a connection handed in as `strikebot` does."""

    def run(sync_conn: Any) -> None:
        cfg = alembic_config()
        cfg.attributes["connection"] = sync_conn
        getattr(command, direction)(cfg, revision)

    async with store.engine.connect() as conn:
        conn = await conn.execution_options(**{WRITE_OPTION: True})
        async with conn.begin():
            await conn.run_sync(run)


async def test_a_crash_between_pages_loses_nothing_and_leaves_no_stray_payload(
    store: Store, admin: Admin, clock: FixedClock
) -> None:
    """The second page's transaction fails (the process dies): the first page's briefings
    and their payload are committed, the second page's payload is not. The restart queues
    the rest, each channel once, each row naming a payload that exists."""
    subs = await subscribe(admin, ["en", "en", "es", "es"])
    schedule = Schedule.of(subs[0])
    assert schedule is not None
    clock.now = NOW
    inserts = 0

    def power_cut(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        nonlocal inserts
        if statement.startswith("INSERT INTO deliveries"):
            inserts += 1
            if inserts == 2:
                raise RuntimeError("power cut")

    event.listen(store.engine.sync_engine, "before_cursor_execute", power_cut)
    try:
        with pytest.raises(RuntimeError, match="power cut"):
            await queue_schedule(store, CAMPAIGN, schedule, SLOT, NOW, grace=timedelta(hours=2),
                                 page_size=2)  # fmt: skip
    finally:
        event.remove(store.engine.sync_engine, "before_cursor_execute", power_cut)

    first = await deliveries(store)
    assert sorted(d.subscription_id for d in first) == [subs[0].id, subs[1].id]
    assert {d.payload["message"]["title"] for d in first} == {TITLES["en"]}
    assert len(await shared_ids(store)) == 1  # English only: the Spanish one rolled back

    outcomes = await queue_schedule(store, CAMPAIGN, schedule, SLOT, NOW, grace=timedelta(hours=2),
                                    page_size=2)  # fmt: skip

    assert outcomes == {
        subs[0].id: Outcome.DUPLICATE, subs[1].id: Outcome.DUPLICATE,
        subs[2].id: Outcome.QUEUED, subs[3].id: Outcome.QUEUED,
    }  # fmt: skip
    rows = await deliveries(store)
    assert sorted(d.subscription_id for d in rows) == [s.id for s in subs]
    for sub in subs:
        [row] = [d for d in rows if d.subscription_id == sub.id]
        assert row.payload["message"]["title"] == TITLES[sub.language]
    assert sorted({d.shared_payload_id for d in rows}) == await shared_ids(store)
