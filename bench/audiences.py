"""Who a targeted update goes to, at 100,000 people and 1,000 sites: one query.

A store is filled through bulk inserts: `--groups` groups of sites, `--sites` sites spread
over them, `--people` subscriptions (e-mail people) of whom 40% follow everything, 40% one
site, 15% one group and 5% two sites (each with its `subscription_follows` rows), then
analysed. For an update addressed to one site, to one group and to everyone, it times
`SiteStore.recipients` (the rows the fan-out plans, `Admin._plan_posts`) and
`audience_counts` (the preview's grouped count over the same rows), the median of
`--repeat` runs each, prints each plan, and checks the two agree. The naive peer reads
every subscription and filters in Python, as planning did before audiences.

    .venv/bin/python -m bench.audiences [--people 100000] [--sites 1000] [--groups 50]
                                        [--repeat 9] [--database-url URL]

`--database-url postgresql+asyncpg://...` runs it on an empty PostgreSQL database of your
choosing (its tables are created by the migrations). The last line is machine-readable.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text

from bot.models import EVERYONE, Audience
from bot.store import Store
from bot.store import schema as t
from bot.store.codecs import subscription_from_row
from bot.store.sites import audience_clause, receives

NOW = datetime(2019, 1, 18, 18, 0, tzinfo=UTC)
CHUNK = 5_000


async def fill(store: Store, people: int, sites: int, groups: int) -> None:
    rng = random.Random(25)
    group_codes = [f"g{g:03d}" for g in range(groups)]
    site_codes = [f"s{s:04d}" for s in range(sites)]
    async with store.write() as tx:
        await tx.conn.execute(
            insert(t.site_groups),
            [
                {"code": c, "names": {"en": c}, "example": False, "updated_at": NOW}
                for c in group_codes
            ],
        )
        await tx.conn.execute(
            insert(t.sites),
            [
                {
                    "code": c,
                    "group_code": group_codes[i % groups],
                    "names": {"en": c},
                    "address": "",
                    "example": False,
                    "updated_at": NOW,
                }
                for i, c in enumerate(site_codes)
            ],
        )
    for start in range(0, people, CHUNK):
        subs: list[dict[str, Any]] = []
        follows: list[dict[str, Any]] = []
        for n in range(start, min(start + CHUNK, people)):
            roll = rng.random()
            chosen: dict[str, list[str]] = {"sites": [], "groups": []}
            if roll < 0.40:
                pass  # everything
            elif roll < 0.80:
                chosen["sites"] = [rng.choice(site_codes)]
            elif roll < 0.95:
                chosen["groups"] = [rng.choice(group_codes)]
            else:
                chosen["sites"] = sorted(set(rng.sample(site_codes, 2)))
            subs.append(
                {
                    "id": n + 1,
                    "platform": "email",
                    "workspace": "people",
                    "channel": f"p{n:08d}",
                    "label": "",
                    "language": "es" if n % 3 == 0 else "en",
                    "urgencies": "important,routine,urgent",
                    "timezone": "America/Los_Angeles",
                    "briefing_days": "0123456",
                    "active": True,
                    "created_at": NOW,
                    "change_seq": 0,
                    "follows": Audience.of(chosen["sites"], chosen["groups"]).to_json(),
                }
            )
            follows += [
                {"subscription_id": n + 1, "kind": kind, "code": code}
                for kind, key in (("site", "sites"), ("group", "groups"))
                for code in chosen[key]
            ]
        async with store.write() as tx:
            await tx.conn.execute(insert(t.subscriptions), subs)
            if follows:
                await tx.conn.execute(insert(t.subscription_follows), follows)
    async with store.write() as tx:
        await tx.conn.execute(text("ANALYZE"))
        if store.dialect == "postgresql":
            await tx.conn.execute(
                text("SELECT setval(pg_get_serial_sequence('subscriptions', 'id'), :n)"),
                {"n": people + 1},
            )


async def timed(repeat: int, work: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """The median wall time of `repeat` runs in milliseconds, and the last result."""
    times = []
    result = None
    for _ in range(repeat):
        began = time.perf_counter()
        result = await work()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times), result


async def plan(store: Store, audience: Audience) -> list[str]:
    query = select(t.subscriptions.c.id).where(*receives("routine"), audience_clause(audience))
    compiled = query.compile(store.engine, compile_kwargs={"literal_binds": True})
    explain = "EXPLAIN QUERY PLAN " if store.dialect == "sqlite" else "EXPLAIN "
    async with store.read() as tx:
        rows = await tx.conn.execute(text(explain + str(compiled)))
        return [str(row[-1]) for row in rows]


async def naive(store: Store, audience: Audience) -> int:
    """Every subscription read and matched in Python (what planning did before)."""
    async with store.read() as tx:
        subs = [subscription_from_row(r) for r in await tx.conn.execute(select(t.subscriptions))]
        site_group = dict(
            (await tx.conn.execute(select(t.sites.c.code, t.sites.c.group_code))).all()
        )
    sites = set(audience.sites) | {s for s, g in site_group.items() if g in audience.groups}
    groups = set(audience.groups) | {site_group[s] for s in audience.sites}
    return sum(
        1
        for s in subs
        if s.follows.everyone
        or audience.everyone
        or sites & set(s.follows.sites)
        or groups & set(s.follows.groups)
    )


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=1_000)
    parser.add_argument("--groups", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'audiences.db'}"
        async with Store.open(url) as store:
            began = time.perf_counter()
            await fill(store, args.people, args.sites, args.groups)
            print(
                f"{store.dialect}: {args.people:,} people, {args.sites:,} sites in "
                f"{args.groups} groups, filled in {time.perf_counter() - began:.1f} s"
            )
            figures = {}
            for name, audience in (
                ("site", Audience.of(["s0007"])),
                ("group", Audience.of([], ["g007"])),
                ("everyone", EVERYONE),
            ):

                async def rows(a: Audience = audience) -> int:
                    async with store.read() as tx:
                        return len(await tx.recipients(a, "routine"))

                async def counts(a: Audience = audience) -> int:
                    async with store.read() as tx:
                        return sum((await tx.audience_counts("routine", a)).values())

                async def python(a: Audience = audience) -> int:
                    return await naive(store, a)

                rows_ms, found = await timed(args.repeat, rows)
                count_ms, counted = await timed(args.repeat, counts)
                naive_ms, matched = await timed(max(1, args.repeat // 3), python)
                assert found == counted == matched, (found, counted, matched)
                figures[name] = (found, rows_ms, count_ms, naive_ms)
                print(
                    f"  {name:8} {found:7,} recipients: recipients {rows_ms:7.1f} ms, "
                    f"preview count {count_ms:6.1f} ms, naive Python filter {naive_ms:7.1f} ms"
                )
            print("  plan (one site):")
            for line in await plan(store, Audience.of(["s0007"])):
                print(f"    {line}")
    site = figures["site"]
    print(
        f"audiences dialect={store.dialect} people={args.people} sites={args.sites} "
        f"site_recipients={site[0]} site_ms={site[1]:.1f} site_count_ms={site[2]:.1f} "
        f"everyone_ms={figures['everyone'][1]:.1f} naive_ms={site[3]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
