"""Slash-command latency through Discord's gateway.

1,000 `/strike ...` interactions (status, timeline 5, next, demands, demand pay, help in
turn; every fifth member in Spanish) are dispatched as INTERACTION_CREATE by the fake
Discord (tests/fakes/discord.py) over its websocket to the real discord.py client of the
DiscordAdapter, with 100,000 updates bulk-inserted into a temporary SQLite store. Each
latency is measured by the fake, from sending the gateway frame to receiving the
interaction callback: what Discord's 3-second timer sees. The fake runs in the same
process (and event loop), so its own work is included: the figures are pessimistic.

    .venv/bin/python -m bench.discord_latency [--commands 1000] [--updates 100000]
                                              [--concurrency 1] [--database-url URL]

Target: p99 under 100 ms (Discord gives up at 3,000 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/discord_latency.py` works too
    sys.path.insert(0, str(ROOT))

from bot.clock import utcnow  # noqa: E402
from bot.models import Status, UpdateState, Urgency  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import schema as t  # noqa: E402
from tests.fakes.discord import (  # noqa: E402
    CHANNEL_MESSAGE,
    FakeDiscord,
    discord_bot,
    interaction_payload,
)

COMMANDS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("status", {}),
    ("timeline", {"count": 5}),
    ("next", {}),
    ("demands", {}),
    ("demand", {"key": "pay"}),
    ("help", {}),
)
STATUSES = list(Status)


async def fill(url: str, count: int) -> float:
    """Bulk-insert `count` published updates over the past year; returns seconds taken."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    batch = 5000
    async with Store.open(url) as store:
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
                            "es": {"headline": f"Actualización {n}", "body": "Piquete."},
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


async def run(commands: int, updates: int, concurrency: int, database_url: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        filled = await fill(url, updates)
        async with (
            FakeDiscord(global_per_second=None) as fake,
            discord_bot(fake, url, utcnow) as bot,
        ):
            async with bot.store.read() as tx:
                stored = await tx.count_updates()
            payloads = []
            for i in range(commands):
                name, options = COMMANDS[i % len(COMMANDS)]
                payloads.append(
                    interaction_payload(
                        name,
                        options=options,
                        user_id=str(800_000_000_000_000_000 + i % 50),
                        locale="es-ES" if i % 5 == 0 else "en-US",
                    )
                )
            for name, options in COMMANDS * 4:  # warm up: caches, the first queries
                await fake.wait_reply(
                    await fake.send_interaction(interaction_payload(name, options=options))
                )

            latencies: list[float] = []
            by_command: dict[str, list[float]] = {name: [] for name, _ in COMMANDS}
            failures = 0
            queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
            for payload in payloads:
                queue.put_nowait(payload)

            async def worker() -> None:
                nonlocal failures
                while not queue.empty():
                    payload = queue.get_nowait()
                    iid = await fake.send_interaction(payload)
                    (reply,) = await fake.wait_reply(iid, within=10)
                    ms = reply.after * 1000
                    latencies.append(ms)
                    by_command[payload["data"]["options"][0]["name"]].append(ms)
                    if reply.type != CHANNEL_MESSAGE or not reply.embeds:
                        failures += 1

            wall = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            wall = time.perf_counter() - wall

    print(f"Discord slash-command latency through the gateway ({url.split(':')[0]})")
    print(f"  updates in store    {stored:,} (bulk insert {filled:.1f} s)")
    print(f"  commands            {len(latencies):,} at concurrency {concurrency}, "
          f"{failures} failed, {len(latencies) / wall:.0f} commands/s")  # fmt: skip
    print(f"  p50                 {percentile(latencies, 50):7.1f} ms")
    print(f"  p90                 {percentile(latencies, 90):7.1f} ms")
    print(f"  p99                 {percentile(latencies, 99):7.1f} ms   (target < 100 ms)")
    print(f"  max                 {max(latencies):7.1f} ms   (Discord's limit 3000 ms)")
    print(f"  mean                {statistics.fmean(latencies):7.1f} ms")
    for name, values in by_command.items():
        print(f"    /strike {name:<10} p50 {percentile(values, 50):6.1f} ms   "
              f"p99 {percentile(values, 99):6.1f} ms")  # fmt: skip
    print(
        f"discord_latency p50_ms={percentile(latencies, 50):.1f} "
        f"p99_ms={percentile(latencies, 99):.1f} commands={len(latencies)} failed={failures}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--database-url", help="default: a temporary SQLite file")
    args = parser.parse_args()
    asyncio.run(run(args.commands, args.updates, args.concurrency, args.database_url))


if __name__ == "__main__":
    main()
