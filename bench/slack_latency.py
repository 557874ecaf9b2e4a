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

import asyncio
import tempfile
import time
from pathlib import Path

from bench._latency import fill, parse_args, report
from bot.clock import utcnow
from bot.store import Store
from tests.fakes.slack import FakeSlack, SlackBot, form_body, slash_command

COMMANDS = ("status", "timeline 5", "next", "demands", "help")


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

    report(
        f"slash-command latency through HTTP mode ({url.split(':')[0]})",
        stored=stored,
        filled=filled,
        noun="requests",
        latencies=latencies,
        concurrency=concurrency,
        failures=failures,
        wall=wall,
        platform="Slack",
    )


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], "requests")
    asyncio.run(run(args.count, args.updates, args.concurrency, args.database_url))


if __name__ == "__main__":
    main()
