"""The dispatcher end to end: the real store, a fake platform on 127.0.0.1 that injects
429s, 5xx, timeouts and refusals, and a fixed clock (time moves only when a test says)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import time as clock_time
from datetime import timedelta
from typing import Any

import pytest

from bot.clock import FixedClock
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher, Timings
from bot.delivery.notices import dead_delivery_notices
from bot.delivery.pacing import Bucket, Pacer, backoff_delay
from bot.editorial.admin import Admin, Changes, Draft
from bot.metrics import Metrics
from bot.models import (
    Delivery,
    DeliveryAction,
    DeliveryState,
    QuietHours,
    Status,
    Subscription,
    Update,
    UpdateText,
    Urgency,
)
from bot.plugins.addresses import Address, find_address
from bot.ports import ChannelRef, OutboundMessage, Pacing
from bot.store import NewDelivery, Store
from tests.fakes.platform import FakePlatform, FakePlatformAdapter, Fault
from tests.support import ADMIN, CAMPAIGN, FRIDAY, recording
from tests.support import ADMINS as ADMIN_LIST
from tests.virtual_time import VirtualTime

WS = "g1"


@pytest.fixture
async def fake() -> AsyncIterator[FakePlatform]:
    async with FakePlatform(global_per_second=400, per_channel_per_second=40) as platform:
        yield platform


# A request to the fake on 127.0.0.1 answers in milliseconds, but a loaded CI machine can
# stall the event loop for a while: a generous client timeout keeps a slow answer from
# turning into a retry that changes the counts the tests assert. Only the test that scripts
# HANG faults needs a short one (HANG_TIMEOUT), and it waits that long once per hang.
PATIENT_TIMEOUT = 10.0
HANG_TIMEOUT = 0.5


@pytest.fixture
async def adapter(fake: FakePlatform) -> AsyncIterator[FakePlatformAdapter]:
    async with FakePlatformAdapter(fake.url, timeout=PATIENT_TIMEOUT) as opened:
        yield opened


def dispatcher_for(
    store: Store,
    adapter: FakePlatformAdapter,
    clock: FixedClock,
    *,
    metrics: Metrics | None = None,
    vt: VirtualTime | None = None,
    **options: Any,
) -> Dispatcher:
    """A dispatcher for these tests. With `vt`, its pacing and retry waits run on that
    virtual time, with production's backoff (1 s doubling to 8 s here, all virtual);
    without, on real time with a backoff of a few milliseconds."""
    settings = DeliverySection(
        max_attempts=options.pop("max_attempts", 12),
        admin_channels=options.pop("admin_channels", []),
    )
    if vt is not None:
        options.update(monotonic=vt, sleep=vt.sleep)
    return Dispatcher(
        store,
        {"discord": adapter},
        CAMPAIGN,
        clock,
        settings=settings,
        metrics=metrics,
        worker_id="test-worker",
        rng=random.Random(7),
        timings=Timings(
            **{
                "retry_base": 1.0 if vt else 0.01,
                "retry_cap": 8.0 if vt else 0.05,
                "send_timeout": PATIENT_TIMEOUT + 5,
                **{k: options.pop(k) for k in list(options) if k in Timings.__dataclass_fields__},
            }
        ),
        **options,
    )


async def subscribe(admin: Admin, *channels: str, **fields: Any) -> list[Subscription]:
    subs = []
    for channel in channels:
        sub = Subscription(0, "discord", WS, channel, "en", timezone="UTC")
        subs.append(await admin.subscribe(ADMIN, Subscription(**{**_fields(sub), **fields})))
    return subs


def _fields(sub: Subscription) -> dict[str, Any]:
    return {name: getattr(sub, name) for name in sub.__dataclass_fields__}


async def post(
    admin: Admin,
    headline: str = "The strike continues Monday",
    urgency: Urgency = Urgency.URGENT,
    **options: Any,
) -> Update:
    draft = Draft(
        Status.STRIKE_ON, {"en": UpdateText(headline, "Picket lines at 6:30 AM.")}, urgency
    )
    return await admin.post(ADMIN, draft, **options)


async def deliveries(store: Store, **filters: Any) -> list[Delivery]:
    async with store.read() as tx:
        return await tx.list_deliveries(limit=None, **filters)


def titles(fake: FakePlatform, channel: str) -> list[str]:
    return [m.current["title"] for m in fake.messages_in(WS, channel)]


# ---------------------------------------------------------------------------- exactly once


async def test_post_reaches_every_channel_exactly_once_through_429s_5xx_and_timeouts(
    store: Store, admin: Admin, clock: FixedClock, fake: FakePlatform
) -> None:
    channels = [f"c{i:02}" for i in range(12)]
    subs = await subscribe(admin, *channels)
    fake.script(WS, "c00", Fault.RATE_LIMITED)
    fake.script(WS, "c01", Fault.SERVER_ERROR, Fault.BAD_GATEWAY)
    fake.script(WS, "c02", Fault.HANG)
    fake.script(WS, "c03", Fault.HANG_AFTER_POSTING)
    fake.script(WS, "c04", Fault.GLOBAL_RATE_LIMITED)
    fake.script(WS, "c05", Fault.RESET)
    fake.script(WS, "c06", Fault.RATE_LIMITED, Fault.SERVER_ERROR, Fault.HANG_AFTER_POSTING)
    metrics = Metrics()
    update = await post(admin)

    async with FakePlatformAdapter(fake.url, timeout=HANG_TIMEOUT) as adapter:
        stats = await dispatcher_for(store, adapter, clock, metrics=metrics).drain()

    assert fake.messages_per_channel() == {(WS, c): 1 for c in channels}
    rows = {d.subscription_id: d for d in await deliveries(store, update_id=update.id)}
    for sub in subs:
        row = rows[sub.id]
        (message,) = fake.messages_in(WS, sub.channel)
        assert row.state is DeliveryState.SENT
        assert row.platform_message_id == message.id
        assert message.nonce == row.id
        assert message.current["title"] == "The strike continues Monday"
    by_channel = {sub.channel: rows[sub.id] for sub in subs}
    # The posts that timed out after the platform created them were sent again with the same
    # nonce, and the platform answered with the message it already had.
    assert fake.posts_per_nonce()[by_channel["c03"].id] == 2
    assert fake.posts_per_nonce()[by_channel["c06"].id] == 4
    assert by_channel["c01"].attempts == 3
    assert by_channel["c11"].attempts == 1
    assert (stats.sent, stats.retried, stats.dead) == (12, 10, 0)
    sample = metrics.registry.get_sample_value
    assert sample("strikebot_deliveries_total", {"platform": "discord", "outcome": "sent"}) == 12
    assert sample("strikebot_deliveries_total", {"platform": "discord", "outcome": "retried"}) == 10
    assert sample("strikebot_outbox_pending", {"platform": "discord"}) == 0


async def test_retry_after_pauses_the_channel_for_as_long_as_the_platform_asked(
    sqlite_store: Store, clock: FixedClock
) -> None:
    vt = VirtualTime()
    async with FakePlatform(retry_after=8.0, monotonic=vt) as fake:
        admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
        await subscribe(admin, "busy", "quiet")
        fake.script(WS, "busy", Fault.RATE_LIMITED)
        await post(admin)
        async with FakePlatformAdapter(fake.url, timeout=PATIENT_TIMEOUT) as adapter:
            dispatcher = dispatcher_for(sqlite_store, adapter, clock, retry_base=60.0, vt=vt)
            await dispatcher.drain()

    first, second = [r for r in fake.requests if r.channel == "busy"]
    assert first.status == 429 and second.status == 200
    assert second.at - first.at >= 8.0  # virtual seconds: the test waits for none of them
    # The platform's hint replaced the backoff (retry_base=60 s would have sent it to the
    # queue), and paused that channel only.
    (quiet,) = [r for r in fake.requests if r.channel == "quiet"]
    assert quiet.at < first.at + 8.0
    assert len(fake.messages_in(WS, "busy")) == 1


async def test_a_fan_out_never_goes_faster_than_the_platform_rate(
    sqlite_store: Store, clock: FixedClock
) -> None:
    vt = VirtualTime()
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    channels = [f"c{i:02}" for i in range(30)]
    await subscribe(admin, *channels)
    await post(admin)
    pacing = Pacing(global_per_second=10, per_channel_per_second=100, max_in_flight=8)
    async with (
        FakePlatform(monotonic=vt) as fake,
        FakePlatformAdapter(fake.url, pacing=pacing, timeout=PATIENT_TIMEOUT) as adapter,
    ):
        dispatcher = dispatcher_for(sqlite_store, adapter, clock, vt=vt)
        stats = await dispatcher.drain()

    assert stats.sent == 30 and fake.messages_per_channel() == {(WS, c): 1 for c in channels}
    # The k-th request cannot start before the k-th slot of a 10/s bucket, k/10 s in.
    # (Virtual time may jump while a request is on the wire, which only makes gaps longer.)
    arrivals = sorted(r.at for r in fake.requests)
    assert all(at >= k / 10 - 1e-9 for k, at in enumerate(arrivals))


async def test_a_global_429_pauses_every_channel_of_the_platform(
    sqlite_store: Store, clock: FixedClock
) -> None:
    vt = VirtualTime()
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "a", "b", "c")
    await post(admin)
    pacing = Pacing(global_per_second=100, per_channel_per_second=100, max_in_flight=1)
    async with (
        FakePlatform(retry_after=6.0, monotonic=vt) as fake,
        FakePlatformAdapter(fake.url, pacing=pacing, timeout=PATIENT_TIMEOUT) as adapter,
    ):
        fake.script(WS, "a", Fault.GLOBAL_RATE_LIMITED)
        fake.script(WS, "b", Fault.GLOBAL_RATE_LIMITED)
        fake.script(WS, "c", Fault.GLOBAL_RATE_LIMITED)
        dispatcher = dispatcher_for(sqlite_store, adapter, clock, vt=vt)
        stats = await dispatcher.drain()

    (limited, *after) = fake.requests
    assert limited.status == 429
    # Whichever channel met it, nothing of the platform's went for Retry-After seconds.
    assert all(r.at >= limited.at + 6.0 for r in after)
    assert stats.sent == 3 and fake.messages_per_channel() == {(WS, c): 1 for c in "abc"}


async def test_a_refusing_channel_is_parked_dead_marked_broken_and_admins_are_told(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    _, bad, admins = await subscribe(admin, "ok", "gone", "admins")
    fake.refuse(WS, "gone", 403)
    later = NewDelivery(
        dedupe_key=f"briefing:s{bad.id}:2019-01-19",
        subscription_id=bad.id,
        platform="discord",
        action=DeliveryAction.BRIEFING,
        not_before=clock() + timedelta(hours=12),
        payload={"message": OutboundMessage("Saturday briefing").to_json()},
    )
    async with sqlite_store.write() as tx:
        await tx.enqueue([later], clock())
    metrics = Metrics()
    update = await post(admin)

    dispatcher = dispatcher_for(
        sqlite_store, adapter, clock, metrics=metrics, admin_channels=["discord:g1/admins"]
    )
    stats = await dispatcher.drain()

    (dead,) = await deliveries(sqlite_store, state=DeliveryState.DEAD)
    assert (dead.subscription_id, dead.update_id) == (bad.id, update.id)
    assert dead.last_error == "Missing Access (403)"
    async with sqlite_store.read() as tx:
        broken = await tx.get_subscription(bad.id)
        (audit,) = await tx.list_audit(target=f"subscription:{bad.id}", limit=1)
        rows = await tx.list_deliveries(subscription_id=bad.id, limit=None)
    (briefing,) = [d for d in rows if d.dedupe_key == later.dedupe_key]
    assert broken is not None and broken.broken_reason == "Missing Access (403)"
    assert audit.action == "subscription.broken" and audit.actor == "strikebot:dispatcher"
    # Nothing more goes to the broken channel: its queued briefing is cancelled.
    assert briefing.state is DeliveryState.CANCELLED
    # Exactly one request reached the refusing channel: permanent means no retry.
    assert [r.status for r in fake.requests if r.channel == "gone"] == [403]
    assert len(fake.messages_in(WS, "ok")) == 1
    # The admin channel received the update and then the notice about the broken channel.
    notice = fake.messages_in(WS, "admins")[-1].current
    assert notice["kind"] == "notice"
    assert notice["title"] == "Channel paused: discord:g1/gone"
    assert "Missing Access (403)" in notice["body"]
    assert f"strikebot deliveries retry {dead.id}" in notice["body"]
    (notice_row,) = [
        d
        for d in await deliveries(sqlite_store, subscription_id=admins.id)
        if d.action is DeliveryAction.NOTICE
    ]
    assert notice_row.dedupe_key == f"notice:dead:{dead.id}:s{admins.id}"
    assert notice_row.state is DeliveryState.SENT
    assert stats.dead == 1
    sample = metrics.registry.get_sample_value
    assert sample("strikebot_deliveries_total", {"platform": "discord", "outcome": "dead"}) == 1


async def test_gives_up_after_max_attempts_without_breaking_the_channel(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    flaky, _ = await subscribe(admin, "flaky", "admins")
    fake.script(WS, "flaky", Fault.SERVER_ERROR, Fault.BAD_GATEWAY, Fault.SERVER_ERROR)
    await post(admin)

    vt = VirtualTime()  # production's backoff, 1 s then up to 2 s, in virtual seconds
    dispatcher = dispatcher_for(
        sqlite_store, adapter, clock, vt=vt, max_attempts=3, admin_channels=["discord:g1/admins"]
    )
    await dispatcher.drain()

    assert 0 < vt.slept <= 3.0  # it waited out the backoffs (in memory), and no more
    (dead,) = await deliveries(sqlite_store, state=DeliveryState.DEAD)
    assert dead.attempts == 3
    assert dead.last_error == "gave up after 3 attempts; last error: server error (500)"
    async with sqlite_store.read() as tx:
        sub = await tx.get_subscription(flaky.id)
    assert sub is not None and sub.broken_reason is None
    assert (
        fake.messages_in(WS, "admins")[-1].current["title"] == "Delivery failed: discord:g1/flaky"
    )


async def test_a_long_backoff_returns_the_row_to_the_queue_until_it_is_due(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "c1")
    fake.script(WS, "c1", Fault.SERVER_ERROR)
    await post(admin)
    dispatcher = dispatcher_for(sqlite_store, adapter, clock, inline_retry_limit=0.0)

    first = await dispatcher.drain()

    (row,) = await deliveries(sqlite_store)
    assert (first.retried, first.postponed, first.sent) == (1, 1, 0)
    assert row.state is DeliveryState.PENDING and row.attempts == 1
    assert row.last_error == "server error (500)"
    # Full jitter: somewhere in [now, now + retry_base].
    assert clock() <= row.not_before <= clock() + timedelta(seconds=0.01)
    assert fake.messages_in(WS, "c1") == []

    clock.advance(seconds=1)
    second = await dispatcher.drain()

    assert second.sent == 1
    assert len(fake.messages_in(WS, "c1")) == 1


# ---------------------------------------------------------------------------- follow-ups


async def test_a_fan_out_of_follow_ups_reads_the_update_and_its_posts_once_per_round(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    """An edit to 120 channels costs a handful of reads of the update and of its posts (one
    per claim round), as the post did; not three per channel."""
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    channels = [f"c{n}" for n in range(120)]
    await subscribe(admin, *channels)
    update = await post(admin)
    await dispatcher_for(sqlite_store, adapter, clock).drain()
    await admin.edit(
        ADMIN, update.id, Changes(texts={"en": UpdateText("Strike continues Tuesday")}),
        reason="wrong day", correction=True,
    )  # fmt: skip
    with recording(sqlite_store) as recorded:
        stats = await dispatcher_for(sqlite_store, adapter, clock).drain()
    statements = [statement for statement, _ in recorded]

    assert stats.sent == 240  # an edit and a correction note for each channel
    assert all(titles(fake, c)[0] == "Strike continues Tuesday" for c in channels)
    rounds = sum(1 for s in statements if s.startswith("WITH chosen AS"))
    reads_of_update = [s for s in statements if s.startswith("SELECT updates.id,")]
    reads_of_posts = [
        s for s in statements if s.startswith("SELECT deliveries.id,") and "action = ?" in s
    ]
    assert 1 <= rounds < len(channels)  # rounds of up to 128 rows; each round reads once
    assert len(reads_of_update) <= rounds
    assert len(reads_of_posts) <= rounds


async def test_edits_corrections_and_retractions_reach_every_sent_copy(
    store: Store, admin: Admin, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    channels = ["a", "b", "c", "d"]
    await subscribe(admin, *channels)
    update = await post(admin, "Strike resumes Monday")
    dispatcher = dispatcher_for(store, adapter, clock)
    await dispatcher.drain()
    originals = {c: fake.messages_in(WS, c)[0] for c in channels}

    await admin.edit(
        ADMIN,
        update.id,
        Changes(texts={"en": UpdateText("Strike resumes Tuesday", "Talks continue Monday.")}),
        reason="The date was wrong",
        correction=True,
    )
    await dispatcher.drain()

    for channel in channels:
        original, note = fake.messages_in(WS, channel)
        assert original is originals[channel]
        assert original.current["title"] == "Strike resumes Tuesday"
        assert original.current["body"] == "Talks continue Monday."
        assert note.message["kind"] == "correction"
        assert note.message["title"] == "Correction: Strike resumes Tuesday"
        assert "The date was wrong" in note.message["body"]

    await admin.retract(ADMIN, update.id, reason="Posted by mistake")
    await dispatcher.drain()

    for channel in channels:
        original, note = fake.messages_in(WS, channel)
        assert original.current["retracted"] is True
        assert original.current["title"] == "RETRACTED: Strike resumes Tuesday"
        assert "Posted by mistake" in original.current["body"]
        assert len(original.versions) == 2  # the edit, then the retraction
        assert note.versions == []  # the correction note itself is left alone
    states = {(d.action, d.state) for d in await deliveries(store, update_id=update.id)}
    assert states == {
        (DeliveryAction.POST, DeliveryState.SENT),
        (DeliveryAction.EDIT, DeliveryState.SENT),
        (DeliveryAction.CORRECTION, DeliveryState.SENT),
        (DeliveryAction.RETRACT, DeliveryState.SENT),
    }


async def test_a_retraction_reaches_a_copy_whose_channel_unsubscribed_since(
    store: Store, admin: Admin, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    (gone,) = await subscribe(admin, "gone")
    update = await post(admin, "Strike resumes Monday")
    dispatcher = dispatcher_for(store, adapter, clock)
    await dispatcher.drain()
    await admin.unsubscribe(ADMIN, gone.id)

    await admin.edit(
        ADMIN,
        update.id,
        Changes(texts={"en": UpdateText("Strike resumes Tuesday")}),
        reason="The date was wrong",
        correction=True,
    )
    await dispatcher.drain()
    await admin.retract(ADMIN, update.id, reason="Posted by mistake")
    await dispatcher.drain()

    (copy,) = fake.messages_in(WS, "gone")  # no correction note posted into a left channel
    assert copy.current["retracted"] is True
    assert copy.current["title"] == "RETRACTED: Strike resumes Tuesday"
    states = {(d.action, d.state) for d in await deliveries(store, update_id=update.id)}
    assert (DeliveryAction.EDIT, DeliveryState.SENT) in states
    assert (DeliveryAction.RETRACT, DeliveryState.SENT) in states
    assert (DeliveryAction.CORRECTION, DeliveryState.SENT) not in states


async def test_a_followup_waits_for_its_post_and_is_cancelled_when_the_post_never_went(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    _, second = await subscribe(admin, "first", "second")
    update = await post(admin, "Strike resumes Monday")
    # Edited before anything went out: the EDIT rows are queued beside pending POSTs.
    await admin.edit(
        ADMIN, update.id, Changes(texts={"en": UpdateText("Strike resumes Tuesday")}), reason="Date"
    )
    async with sqlite_store.write() as tx:
        await tx.cancel_pending(
            update_id=update.id, subscription_id=second.id, actions=[DeliveryAction.POST]
        )

    await dispatcher_for(sqlite_store, adapter, clock).drain()

    methods = [r.method for r in fake.requests if r.channel == "first"]
    assert methods == ["POST", "PATCH"]
    (message,) = fake.messages_in(WS, "first")
    assert message.current["title"] == "Strike resumes Tuesday"
    assert [r for r in fake.requests if r.channel == "second"] == []
    post_row, edit = sorted(
        await deliveries(sqlite_store, subscription_id=second.id), key=lambda d: d.action != "post"
    )
    assert (post_row.action, post_row.state) == (DeliveryAction.POST, DeliveryState.CANCELLED)
    assert (edit.action, edit.state) == (DeliveryAction.EDIT, DeliveryState.CANCELLED)
    assert edit.last_error == "nothing to edit: the update never reached this channel"


async def test_a_retraction_during_the_fan_out_stops_unsent_copies_and_retracts_the_sent(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "a", "b")
    update = await post(admin, "Wrong campaign's news")
    for channel in ("a", "b"):
        fake.script(WS, channel, Fault.HOLD)
    # One send at a time: whichever copy goes first is held on the wire; the other waits.
    pacing = Pacing(global_per_second=100, per_channel_per_second=100, max_in_flight=1)
    async with FakePlatformAdapter(fake.url, pacing=pacing, timeout=5.0) as one_at_a_time:
        dispatcher = dispatcher_for(sqlite_store, one_at_a_time, clock, update_state_ttl=0.0)
        draining = asyncio.create_task(dispatcher.drain())
        await fake.wait_until(lambda: any(r.fault is Fault.HOLD for r in fake.requests))
        await admin.retract(ADMIN, update.id, reason="Posted to the wrong campaign")
        fake.release()
        stats = await draining

    (sent,) = fake.messages.values()  # the held copy went out; the waiting one never did
    assert sent.current["retracted"] is True
    assert sent.current["title"] == "RETRACTED: Wrong campaign's news"
    assert stats.sent == 2  # the held POST and its RETRACT edit
    rows = await deliveries(sqlite_store, update_id=update.id)
    outcome = sorted((d.action, d.state, d.last_error) for d in rows)
    assert outcome == [
        (DeliveryAction.POST, DeliveryState.CANCELLED,
         "the update was withdrawn before it reached this channel"),
        (DeliveryAction.POST, DeliveryState.SENT, None),
        (DeliveryAction.RETRACT, DeliveryState.CANCELLED,
         "nothing to retract: the update never reached this channel"),
        (DeliveryAction.RETRACT, DeliveryState.SENT, None),
    ]  # fmt: skip


async def test_briefings_and_notices_are_sent_as_rendered(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    (sub,) = await subscribe(admin, "c1")
    message = OutboundMessage("Good morning: day 5 of the strike", "Pickets at 6:30 AM.")
    rows = [
        NewDelivery("briefing:s1:2019-01-18", sub.id, "discord", DeliveryAction.BRIEFING,
                    clock(), payload={"message": message.to_json()}),
        NewDelivery("notice:broken-payload", sub.id, "discord", DeliveryAction.NOTICE,
                    clock(), payload={}),
    ]  # fmt: skip
    async with sqlite_store.write() as tx:
        await tx.enqueue(rows, clock())

    await dispatcher_for(sqlite_store, adapter, clock).drain()

    (sent,) = fake.messages_in(WS, "c1")
    assert OutboundMessage.from_json(sent.message) == message
    (dead,) = await deliveries(sqlite_store, state=DeliveryState.DEAD)
    assert dead.last_error == "the delivery carries no message to send (payload['message'])"


# ---------------------------------------------------------------------------- time


async def test_embargo_urgency_and_quiet_hours_decide_when_copies_go(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "awake")
    # It is 10:00 in Los Angeles: inside this channel's quiet hours until 11:00.
    quiet = QuietHours(clock_time(9, 0), clock_time(11, 0))
    await subscribe(admin, "asleep", quiet_hours=quiet, timezone="America/Los_Angeles")
    dispatcher = dispatcher_for(sqlite_store, adapter, clock)

    await post(admin, "Routine: picket schedule", Urgency.ROUTINE)
    await dispatcher.drain()
    assert titles(fake, "awake") == ["Routine: picket schedule"]
    assert titles(fake, "asleep") == []

    await post(admin, "Urgent: march moved", Urgency.URGENT)
    await post(admin, "Embargoed: tentative agreement", Urgency.ROUTINE,
               publish_at=clock() + timedelta(hours=2))  # fmt: skip
    await dispatcher.drain()
    assert titles(fake, "awake") == ["Routine: picket schedule", "Urgent: march moved"]
    assert titles(fake, "asleep") == ["Urgent: march moved"]

    clock.advance(hours=1)  # 11:00: quiet hours are over, the embargo is not
    await dispatcher.drain()
    assert titles(fake, "asleep") == ["Urgent: march moved", "Routine: picket schedule"]
    assert len(titles(fake, "awake")) == 2

    clock.advance(hours=1)
    await dispatcher.drain()
    assert titles(fake, "awake")[-1] == "Embargoed: tentative agreement"
    assert titles(fake, "asleep")[-1] == "Embargoed: tentative agreement"


# ---------------------------------------------------------------------------- run / stop


async def test_run_wakes_on_a_commit_without_waiting_for_its_recheck(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform, adapter: FakePlatformAdapter
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "c1")
    dispatcher = dispatcher_for(sqlite_store, adapter, clock, idle_recheck=600.0)
    running = asyncio.create_task(dispatcher.run())
    try:
        await post(admin, "First")
        await fake.wait_until(lambda: titles(fake, "c1") == ["First"])
        await post(admin, "Second")
        await fake.wait_until(lambda: titles(fake, "c1") == ["First", "Second"], within=5)
    finally:
        await dispatcher.stop()
        await running
    assert {d.state for d in await deliveries(sqlite_store)} == {DeliveryState.SENT}


async def test_a_wake_up_that_looks_nowhere_still_sleeps_only_until_the_next_row_falls_due(
    store: Store, admin: Admin, clock: FixedClock, adapter: FakePlatformAdapter
) -> None:
    """A wake-up that has no platform to look at (nothing changed there) keeps the time the
    last look asked for: an embargoed row goes out when it falls due, not an idle recheck
    later."""
    await subscribe(admin, "c1")
    await post(admin, "Embargoed", Urgency.ROUTINE, publish_at=clock() + timedelta(seconds=30))
    dispatcher = dispatcher_for(store, adapter, clock, idle_recheck=600.0)
    dispatcher._dirty.update(dispatcher.adapters)

    assert await dispatcher._round() == pytest.approx(30.0, abs=1.0)  # looked: due in 30 s
    clock.advance(seconds=10)
    assert not dispatcher._dirty  # nothing changed since: this round looks nowhere
    assert await dispatcher._round() == pytest.approx(20.0, abs=1.0)


async def test_idle_rounds_read_two_index_entries_and_write_nothing(
    store: Store, admin: Admin, clock: FixedClock, adapter: FakePlatformAdapter
) -> None:
    await subscribe(admin, "c1")
    await post(admin, "Delivered before the idle rounds")
    metrics = Metrics()
    dispatcher = dispatcher_for(
        store, adapter, clock, metrics=metrics, idle_recheck=0.01, depth_every=3600.0
    )
    await dispatcher.drain()
    with recording(store) as recorded:
        running = asyncio.create_task(dispatcher.run())
        try:
            await asyncio.sleep(0.5)  # dozens of idle rounds
        finally:
            await dispatcher.stop()
            await running
    statements = [" ".join(statement.split()).upper() for statement, _ in recorded]
    # One statement a round: the first due row and the first lease to lapse, both read as
    # scalar subqueries.
    rounds = [s for s in statements if s.startswith("SELECT (SELECT DELIVERIES.NOT_BEFORE")]
    assert len(rounds) >= 10
    # Start-up and shutdown release this worker's leases; nothing between them writes.
    between = statements[statements.index(rounds[0]) : statements.index(rounds[-1])]
    writes = [s for s in between if s.startswith(("UPDATE", "INSERT", "DELETE", "BEGIN IMM"))]
    assert writes == []
    # The queue depth was counted once (the first round), not every round.
    assert len([s for s in statements if "COUNT(*)" in s]) == 1


async def test_sent_marks_returning_together_share_one_commit(
    store: Store, admin: Admin, clock: FixedClock, adapter: FakePlatformAdapter
) -> None:
    await subscribe(admin, *[f"c{i}" for i in range(40)])
    await post(admin)
    dispatcher = dispatcher_for(store, adapter, clock, mark_window=0.2)
    marks = "UPDATE DELIVERIES SET STATE"
    with recording(store, lambda s: s.lstrip().upper().startswith(marks)) as statements:
        stats = await dispatcher.drain()
    assert stats.sent == 40
    assert 1 <= len(statements) <= 5
    assert {d.state for d in await deliveries(store)} == {DeliveryState.SENT}


async def test_stop_finishes_the_send_on_the_wire_and_releases_the_rest(
    sqlite_store: Store, clock: FixedClock, fake: FakePlatform
) -> None:
    admin = Admin(sqlite_store, CAMPAIGN, ADMIN_LIST, clock)
    await subscribe(admin, "slow")
    await post(admin, "One")
    await post(admin, "Two")
    fake.script(WS, "slow", Fault.HOLD)
    # One message per 10 s in this channel: the second post waits for its slot.
    pacing = Pacing(global_per_second=100, per_channel_per_second=0.1)
    async with FakePlatformAdapter(fake.url, pacing=pacing, timeout=5.0) as slow_adapter:
        dispatcher = dispatcher_for(sqlite_store, slow_adapter, clock)
        running = asyncio.create_task(dispatcher.run())
        await fake.wait_until(lambda: any(r.fault is Fault.HOLD for r in fake.requests))
        stopping = asyncio.create_task(dispatcher.stop())
        for _ in range(20):
            await asyncio.sleep(0)
        assert not stopping.done()  # waiting for the send on the wire
        fake.release()
        await stopping
        await running

    rows = sorted(await deliveries(sqlite_store), key=lambda d: d.state)
    assert [d.state for d in rows] == [DeliveryState.PENDING, DeliveryState.SENT]
    (message,) = fake.messages_in(WS, "slow")
    assert rows[1].platform_message_id == message.id
    async with sqlite_store.read() as tx:
        claimed = await tx.conn.exec_driver_sql("SELECT count(*) FROM deliveries "
                                                "WHERE claimed_by IS NOT NULL")  # fmt: skip
        assert claimed.scalar_one() == 0


async def test_a_dispatcher_stopped_before_it_ran_does_not_start(
    sqlite_store: Store, clock: FixedClock, adapter: FakePlatformAdapter
) -> None:
    dispatcher = dispatcher_for(sqlite_store, adapter, clock)
    await dispatcher.stop()  # e.g. shutdown raced start-up

    async with asyncio.timeout(5):
        await dispatcher.run()

    assert dispatcher.stats.claimed == 0


# ---------------------------------------------------------------------------- pacing maths


async def test_the_global_bucket_spaces_sends_across_channels() -> None:
    clock = VirtualTime()
    pacer = Pacer(Pacing(10, 100), monotonic=clock, sleep=clock.sleep)
    times = []
    for i in range(5):
        await pacer.acquire(ChannelRef("g", f"c{i}"))
        times.append(round(clock.now, 6))
    assert times == [0.0, 0.1, 0.2, 0.3, 0.4]


async def test_a_channel_bucket_limits_one_channel_only() -> None:
    clock = VirtualTime()
    pacer = Pacer(Pacing(100, 1), monotonic=clock, sleep=clock.sleep)
    await pacer.acquire(ChannelRef("g", "busy"))
    await pacer.acquire(ChannelRef("g", "busy"))
    assert clock.now == pytest.approx(1.0)
    start = clock.now
    await pacer.acquire(ChannelRef("g", "other"))
    assert clock.now - start == pytest.approx(0.01)  # only the global spacing (100/s)


async def test_pauses_hold_back_a_channel_or_the_whole_platform() -> None:
    clock = VirtualTime()
    pacer = Pacer(Pacing(1000, 1000), monotonic=clock, sleep=clock.sleep)
    pacer.pause_channel(ChannelRef("g", "limited"), 0.5)
    await pacer.acquire(ChannelRef("g", "free"))
    assert clock.now < 0.01
    await pacer.acquire(ChannelRef("g", "limited"))
    assert clock.now == pytest.approx(0.5)
    pacer.pause_global(2.0)
    await pacer.acquire(ChannelRef("g", "free"))
    assert clock.now == pytest.approx(2.5)


async def test_a_burst_starts_together_then_the_rate_applies() -> None:
    clock = VirtualTime()
    pacer = Pacer(Pacing(1, 1000, burst=3), monotonic=clock, sleep=clock.sleep)
    for i in range(4):
        await pacer.acquire(ChannelRef("g", f"c{i}"))
    assert clock.now == pytest.approx(1.0)


async def test_requests_queued_for_a_place_in_flight_do_not_start_in_a_burst() -> None:
    # One place in flight, held while the platform answers slowly: the requests queued
    # behind it must still start 1/rate apart once it is free, not all at once.
    clock = VirtualTime()
    pacer = Pacer(Pacing(10, 100, max_in_flight=1), monotonic=clock, sleep=clock.sleep)
    answered = asyncio.Event()
    starts: list[float] = []

    async def send(channel: str, slow: bool = False) -> None:
        async with pacer.slot(ChannelRef("g", channel)):
            starts.append(round(clock.now, 6))
            if slow:
                await answered.wait()

    tasks = [asyncio.create_task(send("c0", slow=True))]
    tasks += [asyncio.create_task(send(f"c{i}")) for i in (1, 2, 3)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert starts == [0.0]
    clock.advance(5.0)  # the slow answer
    answered.set()
    await asyncio.gather(*tasks)
    assert starts == [0.0, 5.0, 5.1, 5.2]


def test_a_queue_wakes_in_groups_within_the_burst_and_keeps_the_rate() -> None:
    # 100/s with a burst of 10: waiting requests leave 5 at a time every 50 ms (one wake-up
    # each), and no window holds more than its share of the rate plus the burst.
    bucket = Bucket(100, burst=10)
    assert bucket.group == 5 and bucket.period == pytest.approx(0.05)
    leaves = sorted(bucket.reserve(0.0) for _ in range(200))
    assert len(set(leaves)) <= 200 // 5 + 2
    assert all(abs(t / 0.05 - round(t / 0.05)) < 1e-6 for t in leaves)
    for window in (0.01, 0.05, 0.2, 1.0):
        most = max(sum(1 for t in leaves if a <= t < a + window - 1e-9) for a in leaves)
        assert most <= window * 100 + 10
    assert leaves[-1] == pytest.approx(1.9, abs=0.051)  # the rate over the whole queue
    assert Bucket(48.5).group == 1  # a burst of 1: spaced one by one
    pairs = Bucket(48.5, burst=2)  # Discord's: a pair every 2 / 48.5 s
    assert pairs.group == 2 and pairs.tolerance == 0.0
    leaves = sorted(pairs.reserve(0.0) for _ in range(100))
    assert len(set(leaves)) <= 100 // 2 + 2  # a timer for two
    assert max(leaves.count(t) for t in leaves) == 2
    assert leaves[-1] == pytest.approx(99 / 48.5, abs=2 / 48.5)


def test_a_slot_reserved_before_a_pause_waits_for_the_pause() -> None:
    bucket = Bucket(10)
    assert bucket.reserve(0.0) == 0.0
    bucket.pause(1.0)
    assert bucket.reserve(0.0) == pytest.approx(1.0)
    assert bucket.paused(0.5) and not bucket.paused(1.0)


def test_backoff_is_exponential_with_full_jitter() -> None:
    rng = random.Random(1)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 30.0), (40, 30.0)]:
        samples = [backoff_delay(attempt, rng, base=1.0, cap=30.0) for _ in range(200)]
        assert all(0.0 <= s <= ceiling for s in samples)
        assert max(samples) > ceiling * 0.8  # spread over the whole range, not clustered
        assert min(samples) < ceiling * 0.2


def test_admin_channel_addresses_parse_like_subscription_addresses() -> None:
    assert find_address("discord:123/456") == Address("discord", "123", "456")
    assert find_address("slack:T1/C2") == Address("slack", "T1", "C2")
    assert find_address("irc:x/y") is None
    assert find_address("discord:no-channel") is None


def test_a_notice_that_gave_up_queues_no_notices_about_itself() -> None:
    # Three admin channels on a failing platform: were each dead notice reported to the
    # other two, the notices would double with every round of give-ups during an outage.
    admins = [Subscription(i, "discord", WS, f"admins{i}", "en", timezone="UTC") for i in (1, 2, 3)]
    notice = Delivery(
        "d" * 20, "notice:dead:x:s1", 1, "discord", DeliveryAction.NOTICE,
        DeliveryState.PENDING, FRIDAY, FRIDAY,
    )  # fmt: skip
    assert dead_delivery_notices(admins, notice, admins[0], "gave up", False, FRIDAY) == []
    # A broken admin channel is still worth telling the others about (broken ones get none).
    broken = dead_delivery_notices(admins, notice, admins[0], "Missing Access (403)", True, FRIDAY)
    assert [row.subscription_id for row in broken] == [2, 3]
    post = Delivery(
        "e" * 20, "post:u1:s1", 1, "discord", DeliveryAction.POST,
        DeliveryState.PENDING, FRIDAY, FRIDAY, update_id=1,
    )  # fmt: skip
    rows = dead_delivery_notices(admins, post, admins[0], "gave up", False, FRIDAY)
    assert [row.subscription_id for row in rows] == [2, 3]
