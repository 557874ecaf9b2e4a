"""Slash-command latency through Slack's HTTP mode.

1,000 signed `/strike ...` requests (status, timeline, next, demands, help in turn, from 50
different users) go to the real slack-bolt app mounted on a real aiohttp server on
127.0.0.1, with 100,000 updates in a temporary SQLite store. The Web API (auth.test,
users.info) is the fake Slack from tests/fakes. Each latency is measured at the client,
from sending the request to reading the whole answer: what Slack's 3-second timer sees.

    .venv/bin/python -m bench.slack_latency [--requests 1000] [--updates 100000]
                                            [--concurrency 1] [--database-url URL]

Target: p99 under 100 ms (Slack gives up at 3,000 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from bot.clock import utcnow
from bot.models import Status, UpdateState, Urgency
from bot.store import Store
from bot.store import schema as t
from tests.fakes.slack import FakeSlack, SlackBot, form_body, slash_command

COMMANDS = ("status", "timeline 5", "next", "demands", "help")
STATUSES = list(Status)


async def fill(store: Store, count: int) -> float:
    """Bulk-insert `count` published updates over the past year; returns seconds taken."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    batch = 5000
    for first in range(0, count, batch):
        rows = []
        for n in range(first, min(first + batch, count)):
            at = now - timedelta(minutes=5 * (count - n))
            rows.append(
                {
                    "status": str(STATUSES[n % len(STATUSES)]),
                    "urgency": str(Urgency.ROUTINE),
                    "state": str(UpdateState.PUBLISHED),
                    "texts": {
                        "en": {"headline": f"Update {n}", "body": "Picket at 6:30 AM. " * 8},
                        "es": {"headline": f"Actualización {n}", "body": "Piquete a las 6:30."},
                    },
                    "author": "bench",
                    "created_at": at,
                    "published_at": at,
                    "revision": 1,
                }
            )
        async with store.write() as tx:
            await tx.conn.execute(insert(t.updates), rows)
    return time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


async def run(requests: int, updates: int, concurrency: int, database_url: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with Store.open(url) as store, FakeSlack() as slack:
            filled = await fill(store, updates)
            async with store.read() as tx:
                stored = await tx.count_updates()
            for n in range(50):
                slack.add_user(f"U{n:07d}", f"member{n}", locale="es-ES" if n % 5 == 0 else "en-US")
            async with SlackBot(store, utcnow, slack) as bot:
                bodies = [
                    form_body(
                        slash_command(slack, COMMANDS[i % len(COMMANDS)], user=f"U{i % 50:07d}")
                    )
                    for i in range(requests)
                ]
                for _ in range(20):  # warm up: connections, caches, the first auth.test
                    await bot.post_signed(form_body(slash_command(slack, "help")))
                latencies: list[float] = []
                failures = 0
                queue = asyncio.Queue[str]()
                for body in bodies:
                    queue.put_nowait(body)

                async def worker() -> None:
                    nonlocal failures
                    while not queue.empty():
                        body = queue.get_nowait()
                        started = time.perf_counter()
                        response = await bot.post_signed(body)
                        latencies.append((time.perf_counter() - started) * 1000)
                        if response.status != 200 or not response.text.startswith("{"):
                            failures += 1

                wall = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(concurrency)))
                wall = time.perf_counter() - wall

    print(f"slash-command latency through HTTP mode ({url.split(':')[0]})")
    print(f"  updates in store    {stored:,} (bulk insert {filled:.1f} s)")
    print(f"  requests            {len(latencies):,} at concurrency {concurrency}, "
          f"{failures} failed, {len(latencies) / wall:.0f} req/s")  # fmt: skip
    print(f"  p50                 {percentile(latencies, 50):7.1f} ms")
    print(f"  p90                 {percentile(latencies, 90):7.1f} ms")
    print(f"  p99                 {percentile(latencies, 99):7.1f} ms   (target < 100 ms)")
    print(f"  max                 {max(latencies):7.1f} ms   (Slack's limit 3000 ms)")
    print(f"  mean                {statistics.fmean(latencies):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--database-url", help="default: a temporary SQLite file")
    args = parser.parse_args()
    asyncio.run(run(args.requests, args.updates, args.concurrency, args.database_url))


if __name__ == "__main__":
    main()
