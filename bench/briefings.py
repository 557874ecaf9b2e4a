"""10,000 channels due at 07:00: composed and queued by the real scheduler path.

The shipped LAUSD campaign is seeded into a temporary SQLite file (or the PostgreSQL
database given), 10,000 subscriptions are bulk-inserted (half English, half Spanish, Discord
and Slack, all at 07:00 in Los Angeles), and a `BriefingScheduler` builds its APScheduler
jobs (one per distinct schedule: here one). Then every job is made due at once and
APScheduler is woken: the figure is the time from that wake-up until all the briefings are
claimed, composed and in the outbox (with the process's CPU seconds beside it). Target:
within 5 seconds for 100,000 channels. Then a restart at 07:30 two days later: the catch-up
sends every channel's briefing late, timed the same way. Both report the event-loop steps
over 10 ms of CPU (`bench._steps`), with the task and where it stopped.

With `--sites N`, the campaign has N sites in `--groups` groups; 40% of the channels follow
everything, 40% one site, 15% one group and 5% two sites (as `bench.audiences`), and
`--targeted` updates for one site each (every fifth for a group) are posted on Thursday
evening, so each follow-set's briefing tells its own: the figures then say how many
compositions (shared payloads) the run wrote, one per language and distinct answer.

Baseline in the same run: the naive way, one `queue_briefing` call (own transactions, own
read of the store, own composition) per channel, on a sample of channels for the next day,
projected to 10,000.

    .venv/bin/python -m bench.briefings [--channels 10000] [--baseline-sample 1000]
                                        [--sites 0] [--groups 50] [--targeted 20]
                                        [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, insert, select, text

from bench._steps import install, read_steps
from bot.briefings.runs import Outcome, queue_briefing
from bot.briefings.schedule import BriefingScheduler
from bot.clock import FixedClock
from bot.config import load_config
from bot.delivery.leadership import SoleLeadership
from bot.editorial.admin import Admin, Draft
from bot.models import Audience, DeliveryAction, Status, UpdateText
from bot.plugins.admins import CLI_ACTOR
from bot.runtime.seed import apply_seed
from bot.store import Store
from bot.store import schema as t

LA = ZoneInfo("America/Los_Angeles")
STEP_MS = 10.0  # event-loop steps over this much CPU are reported
CONFIG = Path(__file__).resolve().parents[1] / "config" / "strike.toml"


async def add_channels(
    store: Store, count: int, created: datetime, sites: int = 0, groups: int = 0
) -> tuple[list[str], list[str]]:
    """`count` channels at 07:00; with `sites`, that many sites in `groups` groups and the
    channels' follows (40% everything, 40% a site, 15% a group, 5% two sites). Returns the
    site and group codes."""
    rng = random.Random(25)
    group_codes = [f"g{g:03d}" for g in range(groups if sites else 0)]
    site_codes = [f"s{s:04d}" for s in range(sites)]
    async with store.write() as tx:
        if site_codes:
            await tx.conn.execute(
                insert(t.site_groups),
                [{"code": c, "names": {"en": c}, "example": False, "updated_at": created}
                 for c in group_codes],
            )  # fmt: skip
            await tx.conn.execute(
                insert(t.sites),
                [{"code": c, "group_code": group_codes[i % len(group_codes)], "names": {"en": c},
                  "address": "", "example": False, "updated_at": created}
                 for i, c in enumerate(site_codes)],
            )  # fmt: skip
    rows: list[dict[str, Any]] = []
    follows: list[dict[str, Any]] = []
    for n in range(count):
        chosen: tuple[list[str], list[str]] = ([], [])
        roll = rng.random()
        if site_codes and 0.40 <= roll < 0.80:
            chosen = ([rng.choice(site_codes)], [])
        elif site_codes and 0.80 <= roll < 0.95:
            chosen = ([], [rng.choice(group_codes)])
        elif site_codes and roll >= 0.95:
            chosen = (sorted(set(rng.sample(site_codes, 2))), [])
        rows.append(
            {
                "id": n + 1,
                "platform": str("discord" if n % 3 else "slack"),
                "workspace": f"w{n // 100}",
                "channel": f"c{n}",
                "label": "",
                "language": "es" if n % 2 else "en",
                "urgencies": "important,routine,urgent",
                "briefing_time": "07:00",
                "timezone": "America/Los_Angeles",
                "briefing_days": "0123456",
                "active": True,
                "created_at": created,
                "follows": Audience.of(*chosen).to_json(),
            }
        )
        follows += [
            {"subscription_id": n + 1, "kind": kind, "code": code}
            for kind, codes in (("site", chosen[0]), ("group", chosen[1]))
            for code in codes
        ]
    async with store.write() as tx:
        for start in range(0, len(rows), 2000):
            await tx.conn.execute(insert(t.subscriptions), rows[start : start + 2000])
        for start in range(0, len(follows), 5000):
            await tx.conn.execute(insert(t.subscription_follows), follows[start : start + 5000])
        if store.dialect == "postgresql":
            await tx.conn.execute(
                text("SELECT setval(pg_get_serial_sequence('subscriptions', 'id'), :n)"),
                {"n": count + 1},
            )
    return site_codes, group_codes


async def post_targeted(
    store: Store,
    campaign: Any,
    config: Any,
    clock: FixedClock,
    sites: list[str],
    groups: list[str],
    count: int,
) -> None:
    """`count` updates for one site each (every fifth for a group), fanned out as posted."""
    admin = Admin(store, campaign, config.to_admins(), clock)
    rng = random.Random(7)
    for n in range(count):
        audience = (
            Audience.of([], [rng.choice(groups)])
            if n % 5 == 4
            else Audience.of([rng.choice(sites)])
        )
        text_ = UpdateText(f"Site news {n}: picket moves to the north gate")
        await admin.post(CLI_ACTOR, Draft(Status.STRIKE_ON, {"en": text_}, audience=audience))
        clock.now += timedelta(minutes=1)


async def count_payloads(store: Store) -> int:
    async with store.read() as tx:
        return int(await tx.conn.scalar(select(func.count()).select_from(t.shared_payloads)) or 0)


async def count_briefings(store: Store) -> int:
    async with store.read() as tx:
        value = await tx.conn.scalar(
            select(func.count())
            .select_from(t.deliveries)
            .where(t.deliveries.c.action == str(DeliveryAction.BRIEFING))
        )
    return int(value or 0)


async def run(
    channels: int,
    sample: int,
    database_url: str | None,
    sites: int = 0,
    groups: int = 50,
    targeted: int = 20,
) -> None:
    config = load_config(CONFIG)
    steps_dir = tempfile.TemporaryDirectory()
    steps_file = Path(steps_dir.name) / "steps.txt"
    install(steps_file, STEP_MS)
    campaign = config.to_campaign()
    # Friday, January 18, 2019 at 07:00 in Los Angeles: a busy morning.
    friday_7am = datetime(2019, 1, 18, 7, 0, tzinfo=LA).astimezone(UTC)
    clock = FixedClock(friday_7am - timedelta(days=1))
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with Store.open(url) as store:
            await apply_seed(store, config, clock)
            # Subscribed this morning, before 07:00: no earlier briefing was due.
            site_codes, group_codes = await add_channels(
                store, channels, friday_7am - timedelta(hours=1), sites, groups
            )
            if site_codes:
                clock.now = friday_7am - timedelta(hours=12)
                await post_targeted(
                    store, campaign, config, clock, site_codes, group_codes, targeted
                )
            clock.now = friday_7am - timedelta(minutes=1)

            def new_scheduler() -> BriefingScheduler:
                return BriefingScheduler(
                    store,
                    campaign,
                    clock,
                    grace=timedelta(minutes=config.briefings.grace_minutes),
                    leadership=SoleLeadership(),
                )

            scheduler = new_scheduler()
            started = time.perf_counter()
            await scheduler.start()
            built = time.perf_counter() - started
            aps = scheduler.apscheduler
            assert aps is not None
            jobs = aps.get_jobs()

            # As `strikebot run` does once started: what start-up made stays out of the
            # collector's full passes (here the 10,000 rows inserted, the modules).
            gc.freeze()
            # 07:00: every job is due at once.
            clock.now = friday_7am + timedelta(seconds=1)
            due = datetime.now(UTC)
            aps.pause()  # so that making the jobs due is one wake-up
            for job in jobs:
                job.modify(next_run_time=due)
            store.outbox_written.clear()
            payloads_before = await count_payloads(store)
            wall_started = time.time()
            cpu_started = time.process_time()
            started = time.perf_counter()
            aps.resume()  # one wake-up, as at 07:00
            await store.outbox_written.wait()  # the first batch is in
            await scheduler.drain()  # and the rest
            batched = time.perf_counter() - started
            batched_cpu = time.process_time() - cpu_started
            batch_steps = read_steps(steps_file, wall_started)
            await scheduler.stop()
            queued = await count_briefings(store)
            compositions = await count_payloads(store) - payloads_before

            # Down from Sunday 06:50, back at 07:30: the catch-up sends Sunday's late.
            sunday_7am = friday_7am + timedelta(days=2)
            clock.now = sunday_7am + timedelta(minutes=30)
            restarted = new_scheduler()
            before = await count_briefings(store)
            wall_started = time.time()
            cpu_started = time.process_time()
            started = time.perf_counter()
            await restarted.start()
            caught_up = time.perf_counter() - started
            caught_up_cpu = time.process_time() - cpu_started
            catch_up_steps = read_steps(steps_file, wall_started)
            await restarted.stop()
            late = await count_briefings(store) - before

            # Baseline: one call per channel for Saturday's briefing, on a sample.
            saturday_7am = friday_7am + timedelta(days=1)
            async with store.read() as tx:
                ids = list(
                    await tx.conn.scalars(
                        select(t.subscriptions.c.id).order_by(t.subscriptions.c.id).limit(sample)
                    )
                )
            started = time.perf_counter()
            outcomes = [
                await queue_briefing(store, campaign, sub_id, saturday_7am, saturday_7am)
                for sub_id in ids
            ]
            naive = time.perf_counter() - started
            assert all(o is Outcome.QUEUED for o in outcomes)
            projected = naive * channels / len(ids)

    backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
    print(f"briefings: {channels:,} channels due at 07:00 on {backend}")
    if site_codes:
        print(
            f"  audiences: {len(site_codes):,} sites in {len(group_codes)} groups, "
            f"{targeted} updates for some sites in the window"
        )
    print(f"  scheduler start (catch-up, jobs): {built:6.2f} s ({len(jobs):,} CronTrigger job(s))")
    print(
        f"  scheduler path (batched):       {batched:6.2f} s for {queued:,} queued "
        f"({queued / batched:,.0f}/s; {batched_cpu:.2f} s CPU)   target: within 5 s"
    )
    print(f"  compositions at 07:00 (shared payloads written): {compositions:,}")
    print(
        f"  catch-up after downtime:        {caught_up:6.2f} s for {late:,} sent late "
        f"({late / caught_up:,.0f}/s; {caught_up_cpu:.2f} s CPU)"
    )
    for label, steps in (("07:00", batch_steps), ("catch-up", catch_up_steps)):
        longest = steps[0] if steps else None
        print(
            f"  event-loop steps over {STEP_MS:g} ms of CPU ({label}): {len(steps)}"
            + (f", longest {longest.cpu_ms:.0f} ms ({longest.what[:120]})" if longest else "")
        )
    print(
        f"  baseline (one call per channel): {naive:6.2f} s for {len(ids):,} "
        f"-> {projected:6.1f} s projected for {channels:,}"
    )
    print(f"  ratio: the batched path is {projected / batched:.0f}x faster")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=10_000)
    parser.add_argument("--baseline-sample", type=int, default=1_000)
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: SQLite)")
    parser.add_argument("--sites", type=int, default=0, help="sites the channels follow")
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--targeted", type=int, default=20, help="updates for some sites")
    args = parser.parse_args()
    asyncio.run(
        run(
            args.channels,
            args.baseline_sample,
            args.database_url,
            args.sites,
            args.groups,
            args.targeted,
        )
    )


if __name__ == "__main__":
    main()
