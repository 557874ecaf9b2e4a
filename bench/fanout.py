"""Fan-out: one update to 10,000 Discord channels, paced under Discord's global limit.

The fake Discord (tests/fakes/discord.py) runs as a separate process on 127.0.0.1 and
enforces a global rate (requests per sliding second, answering 429 with Discord's headers
beyond it), per-channel buckets (5 messages per 5 s) and an added latency per request. One
update is posted to N subscribed channels in a temporary SQLite store, and the REAL
dispatcher delivers it through the DiscordAdapter (discord.py's HTTP client), paced at
`--pace` of the allowed rate. Then the naive baseline: a sequential loop of discord.py
sends (`HTTPClient.send_message`, no pacing) to `--naive-count` other channels.

Printed: deliveries/s achieved ÷ the allowed rate (target ≥ 0.95), 429s received after the
first second (target 0), CPU seconds per 1,000 deliveries (this process: dispatcher, store,
discord.py; the fake's CPU is not counted), and the same for the naive loop. The last line
is machine-readable.

    .venv/bin/python -m bench.fanout [--channels 10000] [--rate 500] [--latency-ms 20]
                                     [--pace 0.97] [--naive-count 1000] [--no-gc-freeze]

Discord's real limit is 50 requests/s per token; the default 500/s keeps the run short
(about 25 s of sending) while exercising the same pacing. `--rate 50 --channels 1000` is
the production shape.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import discord
from discord.http import HTTPClient, handle_message_parameters
from sqlalchemy import insert

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/fanout.py` works too
    sys.path.insert(0, str(ROOT))

from adapters.discord import DiscordAdapter, render_embeds  # noqa: E402
from adapters.discord import plugin as discord_plugin  # noqa: E402
from adapters.discord._settings import DiscordDelivery  # noqa: E402
from bot.admin import Admin, Draft  # noqa: E402
from bot.auth import CLI_ACTOR  # noqa: E402
from bot.clock import utcnow  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.context import plugin_context  # noqa: E402
from bot.dispatcher import Dispatcher  # noqa: E402
from bot.messages import update_message  # noqa: E402
from bot.models import DeliveryState, Status, Subscription, UpdateText, Urgency  # noqa: E402
from bot.ports import Pacing  # noqa: E402
from bot.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import schema as t  # noqa: E402
from bot.store.codecs import subscription_to_values  # noqa: E402
from tests.fakes.discord import GUILD_ID, bot_config  # noqa: E402

TOKEN = "fake-bot-token"
FIRST_CHANNEL = 710_000_000_000_000_000
NAIVE_FIRST_CHANNEL = 720_000_000_000_000_000


@dataclass
class Run:
    name: str
    deliveries: int
    seconds: float
    cpu_seconds: float
    rate_limited: int
    extra_429s: int
    allowed: float

    @property
    def per_second(self) -> float:
        return self.deliveries / self.seconds if self.seconds else 0.0

    @property
    def ratio(self) -> float:
        return self.per_second / self.allowed

    @property
    def cpu_ms_per_1000(self) -> float:
        return self.cpu_seconds * 1000 / self.deliveries * 1000 if self.deliveries else 0.0


class Fake:
    """The fake Discord in its own process, so its CPU is not counted as ours."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.api_base = ""
        self.gateway_url = ""
        self.base = ""

    async def __aenter__(self) -> Fake:
        a = self.args
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.fakes.discord",
            "--token", TOKEN, "--global-rate", str(a.rate),
            "--per-channel-limit", "5", "--per-channel-window", "5",
            "--latency-ms", str(a.latency_ms),
            cwd=ROOT, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().split()
        if not line or line[0] != "READY":
            raise SystemExit(f"the fake Discord did not start: {line}")
        self.api_base, self.gateway_url = line[1], line[2]
        self.base = self.api_base.rsplit("/api/", 1)[0]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()

    async def stats(self) -> dict[str, Any]:
        async with aiohttp.ClientSession() as session, session.get(f"{self.base}/_fake/stats") as r:
            data: dict[str, Any] = json.loads(await r.text())
            return data

    async def reset(self) -> None:
        async with aiohttp.ClientSession() as session, session.post(f"{self.base}/_fake/reset"):
            pass


def count_429s(stats: dict[str, Any]) -> tuple[int, int]:
    """(all 429s, those after the first second of sending)."""
    limited = stats["rate_limited"]
    extra = [
        r for r in limited if r["after_first_post"] is not None and r["after_first_post"] > 1.0
    ]
    return len(limited), len(extra)


async def subscribe_many(store: Store, channels: int) -> None:
    now = datetime.now(UTC)
    rows = []
    for n in range(channels):
        sub = Subscription(0, "discord", GUILD_ID, str(FIRST_CHANNEL + n), "en")
        rows.append(subscription_to_values(sub) | {"active": True, "created_at": now})
    async with store.write() as tx:
        for first in range(0, len(rows), 2000):
            await tx.conn.execute(insert(t.subscriptions), rows[first : first + 2000])


async def dispatcher_run(args: argparse.Namespace, fake: Fake, db: str) -> Run:
    config = bot_config()
    settings = Settings.from_env(
        {
            "DISCORD_TOKEN": TOKEN,
            "DISCORD_API_BASE": fake.api_base,
            "DISCORD_GATEWAY_URL": fake.gateway_url,
            "STRIKEBOT_DATABASE_URL": db,
        }
    )
    async with Store.open(db) as store:
        await apply_seed(store, config, utcnow)
        await subscribe_many(store, args.channels)
        campaign = config.to_campaign()
        admin = Admin(store, campaign, config.to_admins(), utcnow)
        ctx = plugin_context(discord_plugin, settings, config, store=store, admin=admin,
                             clock=utcnow)  # fmt: skip
        pacing = Pacing(
            global_per_second=args.rate * args.pace,
            per_channel_per_second=ctx.delivery_as(DiscordDelivery).discord_per_channel_per_second,
            burst=1,
            max_in_flight=args.in_flight,
        )
        adapter = DiscordAdapter(ctx, pacing=pacing, guild_ready_timeout=0)
        await adapter.start()
        try:
            await adapter.wait_health(lambda h: bool(h["connected"]), within=30)
            update = await admin.post(
                CLI_ACTOR,
                Draft(
                    Status.STRIKE_ON,
                    {
                        "en": UpdateText(
                            "Strike continues Tuesday",
                            "Picket lines at 6:30 AM. " * 20,
                            "Rally at Grand Park, 10 AM",
                        )
                    },
                    Urgency.URGENT,
                ),
            )
            dispatcher = Dispatcher(
                store, {"discord": adapter}, campaign, utcnow, settings=config.delivery
            )
            await fake.reset()  # the gateway's own requests are not part of the fan-out
            if args.gc_freeze:
                # What a long-running server does after start-up: move everything loaded so
                # far out of the collector's reach, so a full collection no longer stalls
                # the event loop for ~70 ms (a stall bunches paced sends into 429s).
                gc.collect()
                gc.freeze()
            cpu, wall = time.process_time(), time.perf_counter()
            stats = await dispatcher.drain()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        finally:
            await adapter.stop()
        async with store.read() as tx:
            counts = await tx.delivery_counts(update.id)
    fake_stats = await fake.stats()
    limited, extra = count_429s(fake_stats)
    sent = counts.get(("discord", str(DeliveryState.SENT)), 0)
    exactly_once = (
        sent == args.channels
        and fake_stats["channels"] == args.channels
        and fake_stats["messages"] == args.channels
        and fake_stats["channels_with_duplicates"] == 0
    )
    print(f"  exactly once: {'yes' if exactly_once else 'NO'} ({sent} deliveries marked sent; "
          f"{fake_stats['messages']} messages in {fake_stats['channels']} channels at the fake, "
          f"{fake_stats['channels_with_duplicates']} with more than one; "
          f"dead: {stats.dead})")  # fmt: skip
    return Run("dispatcher", sent, wall, cpu, limited, extra, args.rate)


async def naive_run(args: argparse.Namespace, fake: Fake) -> Run:
    """What a bot without pacing does: await each discord.py send in turn."""
    http = HTTPClient(asyncio.get_running_loop())
    discord.http.Route.BASE = fake.api_base
    config = bot_config()
    campaign = config.to_campaign()
    message = update_message(_example_update(), "en", campaign)
    params = handle_message_parameters(
        embeds=render_embeds([message]), allowed_mentions=discord.AllowedMentions.none()
    )
    try:
        await http.static_login(TOKEN)
        await fake.reset()
        cpu, wall = time.process_time(), time.perf_counter()
        for n in range(args.naive_count):
            await http.send_message(NAIVE_FIRST_CHANNEL + n, params=params)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await http.close()
    fake_stats = await fake.stats()
    limited, extra = count_429s(fake_stats)
    return Run("naive loop", fake_stats["messages"], wall, cpu, limited, extra, args.rate)


def _example_update() -> Any:
    from bot.models import Update, UpdateState

    now = datetime.now(UTC)
    return Update(
        id=1,
        status=Status.STRIKE_ON,
        urgency=Urgency.URGENT,
        texts={
            "en": UpdateText(
                "Strike continues Tuesday",
                "Picket lines at 6:30 AM. " * 20,
                "Rally at Grand Park, 10 AM",
            )
        },
        author="bench",
        created_at=now,
        state=UpdateState.PUBLISHED,
        published_at=now,
    )


def report(run: Run) -> None:
    print(f"  {run.name}")
    print(f"    deliveries          {run.deliveries:,} in {run.seconds:.1f} s "
          f"= {run.per_second:.1f}/s")  # fmt: skip
    print(f"    ratio to allowed    {run.ratio:.3f}   (target ≥ 0.95)")
    print(f"    429s                {run.rate_limited} in all, {run.extra_429s} after the "
          "first second (target 0)")  # fmt: skip
    print(f"    CPU                 {run.cpu_seconds:.2f} s = "
          f"{run.cpu_ms_per_1000:.0f} ms per 1,000 deliveries")  # fmt: skip


async def run(args: argparse.Namespace) -> None:
    print(f"fan-out to {args.channels:,} Discord channels, allowed {args.rate:g} requests/s "
          f"(paced at {args.pace:.0%}), {args.latency_ms:g} ms added latency, "
          "5 messages / 5 s per channel, "
          f"gc.freeze() after start-up: {'yes' if args.gc_freeze else 'no'}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite+aiosqlite:///{Path(tmp) / 'fanout.db'}"
        async with Fake(args) as fake:
            paced = await dispatcher_run(args, fake, db)
            report(paced)
            naive = await naive_run(args, fake)
            report(naive)
    print(
        f"fanout ratio_to_allowed={paced.ratio:.3f} extra_429s={paced.extra_429s} "
        f"cpu_ms_per_1000={paced.cpu_ms_per_1000:.0f} naive_ratio_to_allowed={naive.ratio:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=10_000, help="subscribed channels")
    parser.add_argument("--rate", type=float, default=500.0, help="allowed requests/s (global)")
    parser.add_argument("--pace", type=float, default=0.97, help="fraction of --rate to pace at")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="added per request")
    parser.add_argument("--in-flight", type=int, default=64, help="requests in flight at most")
    parser.add_argument("--naive-count", type=int, default=1000, help="sends in the naive loop")
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="leave the garbage collector as it is (full collections then stall the loop)",
    )
    args = parser.parse_args()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
