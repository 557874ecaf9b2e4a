"""What the slash-command latency benches share: the bulk-filled store, percentiles, the report."""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from bot.models import Status, UpdateState, Urgency
from bot.store import Store
from bot.store import schema as t

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
                        "en": {
                            "headline": f"Update {n}",
                            "body": "Picket at 6:30 AM. " * 8,
                            "next_step": "Rally at Grand Park, 10 AM",
                        },
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


def report(
    title: str,
    *,
    stored: int,
    filled: float,
    noun: str,
    latencies: list[float],
    concurrency: int,
    failures: int,
    wall: float,
    platform: str,
) -> None:
    """Print the figures every latency bench prints; `noun` names what was sent."""
    rate_unit = "req/s" if noun == "requests" else f"{noun}/s"
    print(title)
    print(f"  updates in store    {stored:,} (bulk insert {filled:.1f} s)")
    print(f"  {noun:<20}{len(latencies):,} at concurrency {concurrency}, "
          f"{failures} failed, {len(latencies) / wall:.0f} {rate_unit}")  # fmt: skip
    print(f"  p50                 {percentile(latencies, 50):7.1f} ms")
    print(f"  p90                 {percentile(latencies, 90):7.1f} ms")
    print(f"  p99                 {percentile(latencies, 99):7.1f} ms   (target < 100 ms)")
    print(f"  max                 {max(latencies):7.1f} ms   ({platform}'s limit 3000 ms)")
    print(f"  mean                {statistics.fmean(latencies):7.1f} ms")


def parse_args(description: str, noun: str) -> argparse.Namespace:
    """`--<noun> 1000 --updates 100000 --concurrency 1 --database-url URL`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(f"--{noun}", dest="count", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--database-url", help="default: a temporary SQLite file")
    return parser.parse_args()
