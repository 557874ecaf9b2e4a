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

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/discord_latency.py` works too
    sys.path.insert(0, str(ROOT))

from bench._latency import fill, parse_args, percentile, report  # noqa: E402
from bot.clock import utcnow  # noqa: E402
from bot.store import Store  # noqa: E402
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


async def run(commands: int, updates: int, concurrency: int, database_url: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = database_url or f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        async with Store.open(url) as store:
            filled = await fill(store, updates)
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

    report(
        f"Discord slash-command latency through the gateway ({url.split(':')[0]})",
        stored=stored,
        filled=filled,
        noun="commands",
        latencies=latencies,
        concurrency=concurrency,
        failures=failures,
        wall=wall,
        platform="Discord",
    )
    for name, values in by_command.items():
        print(f"    /strike {name:<10} p50 {percentile(values, 50):6.1f} ms   "
              f"p99 {percentile(values, 99):6.1f} ms")  # fmt: skip
    print(
        f"discord_latency p50_ms={percentile(latencies, 50):.1f} "
        f"p99_ms={percentile(latencies, 99):.1f} commands={len(latencies)} failed={failures}"
    )


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], "commands")
    asyncio.run(run(args.count, args.updates, args.concurrency, args.database_url))


if __name__ == "__main__":
    main()
