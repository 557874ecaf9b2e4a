"""Exactly once across crashes and across dispatchers.

- A real dispatcher process (tests/fakes/dispatch_worker.py) is SIGKILLed in the middle of
  a fan-out, with sends on the wire that the platform has already accepted, and restarted
  as production restarts it: a new process with a new `default_worker_id()`, which takes
  the dead one's rows over once their leases lapse. The rest arrive, nothing arrives twice.
- The same crash, then a retraction before the restart: the copy the platform accepted but
  the store never recorded is retracted too, instead of staying up forever.
- Two dispatchers on one PostgreSQL database drain the same fan-out: every channel gets its
  copy once, and no copy is even attempted by both.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from bot.clock import FixedClock, utcnow
from bot.config import DeliverySection
from bot.delivery.dispatcher import Dispatcher
from bot.editorial.admin import Admin, Draft
from bot.models import DeliveryState, Status, Subscription, UpdateText, Urgency
from bot.ports import Pacing
from bot.store import Store
from tests.fakes.platform import FakePlatform, FakePlatformAdapter, Fault
from tests.support import ADMIN, ADMINS, CAMPAIGN, FRIDAY, fresh_postgres_database

ROOT = Path(__file__).resolve().parent.parent
WS = "g1"


async def fan_out(admin: Admin, channels: list[str]) -> int:
    for channel in channels:
        await admin.subscribe(ADMIN, Subscription(0, "discord", WS, channel, "en", timezone="UTC"))
    update = await admin.post(
        ADMIN, Draft(Status.STRIKE_ON, {"en": UpdateText("The strike is on")}, Urgency.URGENT)
    )
    return update.id


async def start_worker(url: str, api: str, *, lease: float = 60.0) -> asyncio.subprocess.Process:
    """A dispatcher process with its own default worker id, as `strikebot run` has. A short
    `lease` makes a killed one's claims lapse soon (the restart then takes them over)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.dispatch_worker",
        "--database-url",
        url,
        "--api",
        api,
        "--lease",
        str(lease),
        "--rate",
        "50",
        cwd=ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_a_killed_dispatcher_restarts_and_delivers_the_rest_without_a_duplicate(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'crash.db'}"
    channels = [f"c{i:02}" for i in range(40)]
    async with Store.open(url) as store:
        await fan_out(Admin(store, CAMPAIGN, ADMINS, utcnow), channels)

    async with FakePlatform() as fake:
        # Five channels take the message and then never answer. The worker sends four at a
        # time, so once four of them hang it is stuck with four sends the platform has
        # accepted but the store has not recorded: the window a crash can fall into.
        hanging = ["c03", "c11", "c19", "c27", "c35"]
        for channel in hanging:
            fake.script(WS, channel, Fault.HANG_AFTER_POSTING)

        def hung() -> list[str]:
            return [r.channel for r in fake.requests if r.fault is Fault.HANG_AFTER_POSTING]

        first = await start_worker(url, fake.url, lease=2.0)
        try:
            await fake.wait_until(lambda: len(hung()) == 4, within=60)
        finally:
            first.kill()
            await first.wait()
        assert first.returncode == -signal.SIGKILL

        async with Store.open(url) as store, store.read() as tx:
            rows = {
                (await tx.get_subscription(d.subscription_id)).channel: d  # type: ignore[union-attr]
                for d in await tx.list_deliveries(limit=None)
            }
        # The crash window: copies the platform holds that the store has not recorded. The
        # four hung sends, and any send whose mark was still gathering with others for one
        # commit when the kill came.
        in_the_window = [
            c
            for c in channels
            if fake.messages_in(WS, c) and rows[c].state is not DeliveryState.SENT
        ]
        assert set(hung()) <= set(in_the_window)
        for channel in in_the_window:
            (message,) = fake.messages_in(WS, channel)
            assert message.nonce == rows[channel].id
            assert rows[channel].state is DeliveryState.PENDING  # sent, but not recorded
        unsent = [c for c in channels if not fake.messages_in(WS, c)]
        assert unsent  # killed mid-fan-out: at least the fifth hanging channel is waiting

        fake.clear_faults()
        second = await start_worker(url, fake.url)
        try:
            await fake.wait_until(
                lambda: (
                    len(fake.messages_per_channel()) == len(channels)
                    and all(fake.posts_per_nonce()[rows[c].id] == 2 for c in in_the_window)
                ),
                within=60,
            )
        finally:
            second.send_signal(signal.SIGTERM)  # a clean stop records the sends on the wire
            _, stderr = await second.communicate()
        assert second.returncode == 0, stderr.decode()

    assert fake.messages_per_channel() == {(WS, c): 1 for c in channels}
    assert all(n == 1 for n in _messages_per_nonce(fake).values())
    async with Store.open(url) as store, store.read() as tx:
        final = await tx.list_deliveries(limit=None)
        subs = {s.id: s.channel for s in await tx.list_subscriptions()}
    assert {d.state for d in final} == {DeliveryState.SENT}
    for d in final:
        (message,) = fake.messages_in(WS, subs[d.subscription_id])
        assert d.platform_message_id == message.id
    # The four sends caught in the crash window went again with their nonce, and the
    # platform answered with the message it had already posted.
    assert sorted(c for c in channels if fake.posts_per_nonce()[rows[c].id] == 2) == sorted(
        in_the_window
    )


async def test_a_retraction_reaches_a_copy_posted_by_a_dispatcher_killed_before_recording_it(
    tmp_path: Path,
) -> None:
    """The dispatcher dies after the platform created the message but before the send was
    recorded; an admin retracts the update before the restart. The copy must not stay up,
    unretracted, while the store says it never reached that channel."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'retract.db'}"
    async with Store.open(url) as store:
        update_id = await fan_out(Admin(store, CAMPAIGN, ADMINS, utcnow), ["c00", "c01"])

    async with FakePlatform() as fake:
        fake.script(WS, "c00", Fault.HANG_AFTER_POSTING)  # posted, never answered
        fake.script(WS, "c01", Fault.HOLD)  # not posted until released: never, here
        first = await start_worker(url, fake.url, lease=2.0)
        try:
            await fake.wait_until(
                lambda: (
                    len(fake.messages_in(WS, "c00")) == 1
                    and any(r.channel == "c01" for r in fake.requests)
                ),
                within=60,
            )
        finally:
            first.kill()
            await first.wait()
        (copy,) = fake.messages_in(WS, "c00")
        assert fake.messages_in(WS, "c01") == []

        async with Store.open(url) as store:
            await Admin(store, CAMPAIGN, ADMINS, utcnow).retract(
                ADMIN, update_id, reason="Posted too early"
            )

        fake.clear_faults()
        second = await start_worker(url, fake.url)
        try:
            await fake.wait_until(
                lambda: (
                    fake.messages_in(WS, "c00")[0].current["kind"] == "retraction"
                    and [len(m.versions) for m in fake.messages_in(WS, "c01")] == [1]
                ),
                within=30,
            )
        finally:
            second.send_signal(signal.SIGTERM)
            _, stderr = await second.communicate()
        assert second.returncode == 0, stderr.decode()

    assert fake.messages_in(WS, "c00") == [copy]  # the same message, edited in place
    assert copy.current["retracted"] is True
    # c01's send was in doubt too (claimed, on the wire): it gets the retraction notice,
    # never the retracted text.
    (notice,) = fake.messages_in(WS, "c01")
    assert notice.message["kind"] == "retraction"  # posted as the retraction, then edited
    async with Store.open(url) as store, store.read() as tx:
        rows = await tx.list_deliveries(update_id=update_id, limit=None)
        subs = {s.id: s.channel for s in await tx.list_subscriptions()}
    by_channel = {(subs[d.subscription_id], str(d.action)): d for d in rows}
    assert by_channel[("c00", "post")].state is DeliveryState.SENT
    assert by_channel[("c00", "post")].platform_message_id == copy.id
    assert by_channel[("c00", "retract")].state is DeliveryState.SENT
    assert by_channel[("c01", "post")].state is DeliveryState.SENT
    assert by_channel[("c01", "retract")].state is DeliveryState.SENT


def _messages_per_nonce(fake: FakePlatform) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for message in fake.messages.values():
        counts[message.nonce] = counts.get(message.nonce, 0) + 1
    return counts


async def test_two_dispatchers_on_one_postgresql_database_never_double_send() -> None:
    clock = FixedClock(FRIDAY)
    channels = [f"c{i:02}" for i in range(60)]
    # A dispatcher holds a second of its rate: 30 a second leaves rows for the other one.
    pacing = Pacing(global_per_second=30, per_channel_per_second=50, max_in_flight=4)
    async with (
        fresh_postgres_database() as url,
        Store.open(url) as store_a,
        Store.open(url) as store_b,
        FakePlatform() as fake,
        # Patient clients: a slow answer on a loaded machine must not turn into a retry,
        # which would show up below as a second attempt of the same copy.
        FakePlatformAdapter(fake.url, pacing=pacing, timeout=10.0) as adapter_a,
        FakePlatformAdapter(fake.url, pacing=pacing, timeout=10.0) as adapter_b,
    ):
        await fan_out(Admin(store_a, CAMPAIGN, ADMINS, clock), channels)
        # Each with the worker id production gives it (host, process, random suffix).
        a, b = (
            Dispatcher(store, {"discord": adapter}, CAMPAIGN, clock, settings=DeliverySection())
            for store, adapter in ((store_a, adapter_a), (store_b, adapter_b))
        )
        assert a.worker_id != b.worker_id

        stats_a, stats_b = await asyncio.gather(a.drain(), b.drain())

        async with store_a.read() as tx:
            rows = await tx.list_deliveries(limit=None)

    assert stats_a.sent > 0 and stats_b.sent > 0  # both really took part
    assert stats_a.sent + stats_b.sent == len(channels)
    assert fake.messages_per_channel() == {(WS, c): 1 for c in channels}
    # Not one copy was even attempted twice (a nonce only saves Discord, not Slack).
    assert set(fake.posts_per_nonce().values()) == {1}
    assert {d.state for d in rows} == {DeliveryState.SENT}
