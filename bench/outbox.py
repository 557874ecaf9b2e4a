"""The outbox's cost as it grows: a claim at 1,000 vs 100,000 pending rows, and an idle
`strikebot run` with 1,000,000 rows of delivery history vs none.

Claims (in this process, through the store API the dispatcher uses): for each pending size
a fresh store holds that many due rows (posts of 100 updates to 1,000 channels, a few
leased by another worker), behind `--history` sent rows; the dispatcher's claim (128 rows,
its batch) is timed `--rounds` times, each batch given back afterwards so the queue stays
the same size. The median is printed per claim and per claimed row.

Idle (`strikebot run` itself, in its own process, SQLite, the console platform on): for
each history size a fresh store with that many sent deliveries (30 days old: within the
default retention, so none is purged); once started and settled, the process's CPU (utime +
stime from /proc) is read over `--idle-seconds`.

    .venv/bin/python -m bench.outbox [--pending 1000,100000] [--history-sizes 0,1000000]
                                     [--database-url postgresql+asyncpg://...]

The last lines: `claim pending=<n> ms=<median> us_per_row=<x>` per size, then
`idle history=<n> cpu_ms_per_min=<x>` per size.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import insert, update

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.config import load_config  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import outbox_queries as q  # noqa: E402
from bot.store import schema as t  # noqa: E402

CONFIG = ROOT / "config" / "strike.toml"
CHANNELS = 1_000
BATCH = 128


async def fill(store: Store, *, pending: int, history: int, platform: str) -> None:
    """`pending` due rows and `history` sent ones over 1,000 channels of `platform`."""
    now = datetime.now(UTC)
    async with store.write() as tx:
        subs = [
            r[0]
            for r in await tx.conn.execute(
                insert(t.subscriptions).returning(t.subscriptions.c.id),
                [
                    {
                        "platform": platform,
                        "workspace": "bench",
                        "channel": f"c{n}",
                        "label": "",
                        "language": "en",
                        "urgencies": "important,routine,urgent",
                        "timezone": "America/Los_Angeles",
                        "briefing_days": "0123456",
                        "created_at": now - timedelta(days=60),
                    }
                    for n in range(CHANNELS)
                ],
            )
        ]
        updates = max(1, (pending + history) // CHANNELS + 1)
        ups = [
            r[0]
            for r in await tx.conn.execute(
                insert(t.updates).returning(t.updates.c.id),
                [
                    {
                        "status": "strike_on",
                        "urgency": "routine",
                        "state": "published",
                        "texts": {"en": {"headline": f"U{i}", "body": "", "next_step": ""}},
                        "author": "bench",
                        "created_at": now - timedelta(days=40),
                        "published_at": now - timedelta(days=40),
                        "revision": 1,
                    }
                    for i in range(updates)
                ],
            )
        ]

    def row(n: int, state: str) -> dict[str, Any]:
        # History within the default retention (`keep_history_days` = 90): kept, not purged.
        age = timedelta(days=30) if state == "sent" else timedelta(minutes=5)
        return {
            "id": f"{state[0]}{n:020d}",
            "dedupe_key": f"{state}:{n}",
            "subscription_id": subs[n % CHANNELS],
            "platform": platform,
            "action": "post",
            "update_id": ups[n // CHANNELS],
            "revision": 1,
            "state": state,
            "attempts": 1 if state == "sent" else 0,
            "not_before": now - age,
            "created_at": now - age,
            "sent_at": now - age if state == "sent" else None,
            "platform_message_id": f"m{n}" if state == "sent" else None,
            "claimed_by": "elsewhere" if state == "pending" and n % 997 == 0 else None,
            "claimed_until": now + timedelta(minutes=1)
            if state == "pending" and n % 997 == 0
            else None,
        }

    for state, count in (("sent", history), ("pending", pending)):
        for start in range(0, count, 20_000):
            async with store.write() as tx:
                await tx.conn.execute(
                    insert(t.deliveries),
                    [row(n, state) for n in range(start, min(count, start + 20_000))],
                )
    async with store.write() as tx:
        await tx.conn.exec_driver_sql("ANALYZE")


async def claim_cost(url: str, pending: int, history: int, rounds: int) -> float:
    async with Store.open(url) as store:
        await fill(store, pending=pending, history=history, platform="discord")
        timings = []
        for _ in range(rounds):
            now = datetime.now(UTC)
            started = time.perf_counter()
            async with store.write() as tx:
                claimed = await q.claim(
                    tx,
                    worker="bench",
                    platform="discord",
                    now=now,
                    lease_until=now + timedelta(seconds=60),
                    limit=BATCH,
                )
            timings.append((time.perf_counter() - started) * 1000)
            assert len(claimed) == BATCH, len(claimed)
            async with store.write() as tx:
                await tx.conn.execute(
                    update(t.deliveries)
                    .where(t.deliveries.c.claimed_by == "bench")
                    .values(claimed_by=None, claimed_until=None)
                )
    return statistics.median(timings)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def idle_cost(tmp: Path, history: int, args: argparse.Namespace) -> float:
    """CPU ms per minute of an idle `strikebot run` over `history` rows."""
    url = f"sqlite+aiosqlite:///{tmp / f'idle-{history}.db'}"
    async with Store.open(url) as store:
        await apply_seed(store, load_config(CONFIG), lambda: datetime.now(UTC))
        await fill(store, pending=0, history=history, platform="console")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "DISCORD_"))}
    env |= {
        "STRIKEBOT_DATABASE_URL": url,
        "STRIKEBOT_CONFIG": str(CONFIG),
        "STRIKEBOT_HTTP_PORT": str(port),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run",
        cwd=tmp, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(3000):
                if proc.returncode is not None:
                    raise SystemExit(f"strikebot run exited with {proc.returncode}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                        if response.status == 200:
                            break
                await asyncio.sleep(0.1)
        await asyncio.sleep(args.settle)
        cpu, wall = cpu_seconds(proc.pid), time.perf_counter()
        await asyncio.sleep(args.idle_seconds)
        used = cpu_seconds(proc.pid) - cpu
        minutes = (time.perf_counter() - wall) / 60
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
    return used * 1000 / minutes


async def run(args: argparse.Namespace) -> None:
    lines = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for pending in [int(n) for n in args.pending.split(",") if n]:
            url = args.database_url or f"sqlite+aiosqlite:///{tmp / f'claims-{pending}.db'}"
            if args.database_url:
                async with Store.open(url) as store, store.write() as tx:
                    await tx.conn.exec_driver_sql(
                        "TRUNCATE deliveries, subscriptions, updates RESTART IDENTITY CASCADE"
                    )
            ms = await claim_cost(url, pending, args.history, args.rounds)
            print(f"claim of {BATCH} at {pending:,} pending ({args.history:,} history): "
                  f"median {ms:.2f} ms", flush=True)  # fmt: skip
            lines.append(f"claim pending={pending} ms={ms:.2f} us_per_row={ms * 1000 / BATCH:.1f}")
        for history in [int(n) for n in args.history_sizes.split(",") if n]:
            cost = await idle_cost(tmp, history, args)
            print(f"idle strikebot run, {history:,} rows of history: {cost:.0f} ms CPU per "
                  "minute", flush=True)  # fmt: skip
            lines.append(f"idle history={history} cpu_ms_per_min={cost:.0f}")
    for line in lines:
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pending", default="1000,100000")
    parser.add_argument("--history", type=int, default=0, help="sent rows behind the claims")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--history-sizes", default="0,1000000")
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--database-url", help="an empty PostgreSQL database (claims only)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
