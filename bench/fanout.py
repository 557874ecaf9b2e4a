"""Fan-out: one update to many Discord channels, paced under Discord's global limit.

Two ways to run the bot, beside two naive peers in the same run:
- `--mode run` (the default): **`strikebot run` itself**, as its own process, connected to
  the fake Discord with `DISCORD_TOKEN` / `DISCORD_API_BASE` / `DISCORD_GATEWAY_URL` and a
  copy of the shipped campaign file whose `discord_global_per_second` is `--pace` of
  `--rate` (above 50/s, with `discord_global_limit` set to `--rate`, as for a bot Discord
  has granted a higher global limit: `--rate 500` is the high-rate figure). Its CPU is read
  from /proc and its database work counted by `bench/_probe` (statements, BEGINs, commits,
  rollbacks and checkouts per delivery). The update is written by this process; the bot
  hears of it as it hears of a `strikebot post` from a shell.
- `--mode drain`: the dispatcher in this process (`Dispatcher.drain()`), without the web
  server, scheduler and watchers: the dispatcher's own cost.
The naive peers: a sequential loop of discord.py sends, and `asyncio.gather` over
discord.py sends (what most bots do), which meets 429s and loses messages.

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
import contextlib
import gc
import json
import math
import os
import signal
import socket
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
from sqlalchemy import insert, select

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python bench/fanout.py` works too
    sys.path.insert(0, str(ROOT))

from adapters.discord import DiscordAdapter, render_embeds  # noqa: E402
from adapters.discord import plugin as discord_plugin  # noqa: E402
from adapters.discord._settings import DiscordDelivery  # noqa: E402
from bot.clock import utcnow  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.delivery.dispatcher import Dispatcher  # noqa: E402
from bot.editorial.admin import Admin, Draft  # noqa: E402
from bot.messages.compose import update_message  # noqa: E402
from bot.models import (  # noqa: E402
    EVERYONE,
    Audience,
    DeliveryState,
    Site,
    SiteGroup,
    Status,
    Subscription,
    UpdateText,
    Urgency,
)
from bot.plugins.admins import CLI_ACTOR  # noqa: E402
from bot.ports import Pacing  # noqa: E402
from bot.runtime.context import plugin_context  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import schema as t  # noqa: E402
from bot.store.codecs import subscription_to_values  # noqa: E402
from tests.fakes.discord import GUILD_ID, bot_config  # noqa: E402

TOKEN = "fake-bot-token"
FIRST_CHANNEL = 710_000_000_000_000_000
TARGET, OTHER = "bench-target", "bench-other"  # --targeted: the post's site, and another
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

    async def stalls(self, since: float) -> list[tuple[float, float]]:
        """The fake's own stalls over 20 ms from `since` (its clock): (start, seconds)."""
        url = f"{self.base}/_fake/sessions"
        async with aiohttp.ClientSession() as session, session.get(url) as r:
            data: dict[str, Any] = json.loads(await r.text())
        return [(at - since, late) for at, late in data["stalls"] if at >= since]


def count_429s(stats: dict[str, Any]) -> tuple[int, int]:
    """(all 429s, those after the first second of sending)."""
    limited = stats["rate_limited"]
    extra = [
        r for r in limited if r["after_first_post"] is not None and r["after_first_post"] > 1.0
    ]
    return len(limited), len(extra)


async def subscribe_many(store: Store, channels: int, *, targeted: bool = False) -> None:
    """`channels` channels that get the post; with `targeted`, as many again that follow
    another site (the post is for one site: `TARGET`), so choosing them is the query's."""
    now = datetime.now(UTC)
    rows, followed = [], {}
    for n in range(channels * (2 if targeted else 1)):
        audience = Audience.of([TARGET if n < channels else OTHER]) if targeted else EVERYONE
        sub = Subscription(0, "discord", GUILD_ID, str(FIRST_CHANNEL + n), "en", follows=audience)
        rows.append(subscription_to_values(sub) | {"active": True, "created_at": now})
        followed.update(dict.fromkeys([sub.channel], audience.sites[0]) if targeted else {})
    async with store.write() as tx:
        if targeted:
            await tx.save_group(SiteGroup("bench", {"en": "Bench district"}), now)
            for code in (TARGET, OTHER):
                await tx.save_site(Site(code, {"en": code}, "bench"), now)
        for first in range(0, len(rows), 2000):
            await tx.conn.execute(insert(t.subscriptions), rows[first : first + 2000])
        s = t.subscriptions.c
        follows = [
            {"subscription_id": sub_id, "kind": "site", "code": followed[channel]}
            for sub_id, channel in await tx.conn.execute(select(s.id, s.channel))
            if channel in followed
        ]
        for first in range(0, len(follows), 2000):
            await tx.conn.execute(insert(t.subscription_follows), follows[first : first + 2000])


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
        shipped = ctx.delivery_as(DiscordDelivery).pacing()
        pacing = Pacing(
            global_per_second=args.rate * args.pace,
            per_channel_per_second=shipped.per_channel_per_second,
            burst=shipped.burst,
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
        switches = _switches(os.getpid())
        system = os.times().system
        cpu, wall = time.process_time(), time.perf_counter()
        for n in range(args.naive_count):
            await http.send_message(NAIVE_FIRST_CHANNEL + n, params=params)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = _switches(os.getpid())
        system = os.times().system - system
    finally:
        await http.close()
    fake_stats = await fake.stats()
    limited, extra = count_429s(fake_stats)
    n = max(fake_stats["messages"], 1)
    print(f"  naive loop: {(after[0] - switches[0]) / n:.2f} voluntary, "
          f"{(after[1] - switches[1]) / n:.2f} involuntary context switches per message; "
          f"{system * 1000 / n:.2f} ms of the CPU in the kernel")  # fmt: skip
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


def _cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc."""
    return _cpu_seconds_of(Path(f"/proc/{pid}/stat"))


def _threads_cpu(pid: int) -> dict[int, float]:
    """utime + stime of each thread of a process, from /proc (thread id: seconds)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out[int(task.name)] = _cpu_seconds_of(task / "stat")
    return out


def _cpu_seconds_of(stat: Path, *, system: bool | None = None) -> float:
    """utime + stime from a /proc stat file (stime alone with `system`, utime with False)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    user, kernel = int(fields[11]), int(fields[12])
    ticks = user + kernel if system is None else kernel if system else user
    return ticks / os.sysconf("SC_CLK_TCK")


def _switches(pid: int, *, main_only: bool = False) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of every thread of a process so far (of
    its main thread only, with `main_only`)."""
    voluntary = involuntary = 0
    tasks = [Path(f"/proc/{pid}/task/{pid}")] if main_only else Path(f"/proc/{pid}/task").iterdir()
    for task in tasks:
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches:"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches:"):
                    involuntary += int(line.split()[1])
    return voluntary, involuntary


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _campaign_file(tmp: Path, per_second: float, limit: float) -> Path:
    """The shipped campaign file with the fake's guild and the pace asked for; above 50/s,
    as for a bot Discord has granted a higher global limit (`discord_global_limit`)."""
    text = (ROOT / "config" / "strike.toml").read_text()
    lines = []
    for line in text.splitlines():
        if line.startswith("discord_global_per_second"):
            line = f"discord_global_per_second = {per_second:.2f}"
            if limit > 50:
                line += f"\ndiscord_global_limit = {math.ceil(limit)}"
        if line.startswith("guild_ids"):
            line = f'guild_ids = ["{GUILD_ID}"]'
        lines.append(line)
    path = tmp / "strike.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _read_counts(path: Path, *, forget: bool = False) -> dict[str, int] | None:
    if forget:
        path.unlink(missing_ok=True)
        return None
    if not path.exists():
        return None
    data: dict[str, int] = json.loads(path.read_text())
    return data


async def _counts(proc: asyncio.subprocess.Process, path: Path) -> dict[str, int]:
    _read_counts(path, forget=True)
    proc.send_signal(signal.SIGUSR1)
    for _ in range(200):
        data = _read_counts(path)
        if data is not None:
            return data
        await asyncio.sleep(0.01)
    raise RuntimeError("strikebot run did not report its database counts")


@dataclass
class ProcessFigures:
    run: Run
    idle_cpu_ms_per_s: float
    per_delivery: dict[str, float]
    threads_ms_per_delivery: list[float]  # the event loop's thread first, then the busiest
    system_ms_per_delivery: float  # of the CPU, in the kernel (stime)
    switches_per_delivery: tuple[float, float, float]  # voluntary (all, the loop's), involuntary


async def process_run(args: argparse.Namespace, fake: Fake, tmp: Path) -> ProcessFigures:
    """The fan-out through `strikebot run` in its own process."""
    db = f"sqlite+aiosqlite:///{tmp / 'run.db'}"
    config_path = _campaign_file(tmp, args.rate * args.pace, args.rate)
    config = bot_config()
    async with Store.open(db) as store:
        await apply_seed(store, config, utcnow)
        await subscribe_many(store, args.channels, targeted=args.targeted)
    port, counts_path = _free_port(), tmp / "counts.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "DISCORD_"))}
    env |= {
        "STRIKEBOT_DATABASE_URL": db,
        "STRIKEBOT_CONFIG": str(config_path),
        "STRIKEBOT_HTTP_PORT": str(port),
        "STRIKEBOT_CONSOLE": "off",
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_API_BASE": fake.api_base,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "STRIKEBOT_BENCH_COUNTS": str(counts_path),
        "STRIKEBOT_BENCH_PROFILE": os.environ.get("STRIKEBOT_BENCH_PROFILE", ""),
        "STRIKEBOT_BENCH_SAMPLE": os.environ.get("STRIKEBOT_BENCH_SAMPLE", ""),
        "STRIKEBOT_BENCH_LOOP": "1" if args.loop_stats else "",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "bench" / "_probe"), str(ROOT), env.get("PYTHONPATH", "")]
        ),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run",
        cwd=tmp, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=(tmp / "run.log").open("wb"),
    )  # fmt: skip
    try:
        health = f"http://127.0.0.1:{port}/healthz"
        async with aiohttp.ClientSession() as session:
            for _ in range(6000):
                if proc.returncode is not None:
                    raise SystemExit(f"strikebot run exited with {proc.returncode}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with session.get(health) as response:
                        body = await response.text()
                        if response.status == 200 and '"connected":true' in body.replace(" ", ""):
                            break
                await asyncio.sleep(0.05)
            else:
                raise SystemExit("strikebot run did not connect to the fake Discord")
        await asyncio.sleep(args.settle)  # start-up done (gc.freeze, scheduler, first polls)
        cpu0, idle0 = _cpu_seconds(proc.pid), time.perf_counter()
        await asyncio.sleep(5)
        idle_cpu = (_cpu_seconds(proc.pid) - cpu0) / (time.perf_counter() - idle0)
        await fake.reset()  # the gateway's own requests are not part of the fan-out
        before = await _counts(proc, counts_path)
        spy = await _py_spy(args.py_spy, proc.pid)
        threads0, switches0 = _threads_cpu(proc.pid), _switches(proc.pid)
        loop0 = _switches(proc.pid, main_only=True)
        cpu0 = _cpu_seconds(proc.pid)
        system0 = _cpu_seconds_of(Path(f"/proc/{proc.pid}/stat"), system=True)
        async with Store.open(db, migrate=False) as store:
            admin = Admin(store, config.to_campaign(), config.to_admins(), utcnow)
            wall = time.perf_counter()
            await admin.post(CLI_ACTOR, _draft(targeted=args.targeted))
        delivered, stalled_since, last, first_at = 0, time.perf_counter(), -1, None
        rss_idle = peak = _rss_mb(proc.pid)
        while delivered < args.channels:
            await asyncio.sleep(0.1)
            peak = max(peak, _rss_mb(proc.pid))
            if args.limit_seconds and time.perf_counter() - wall > args.limit_seconds:
                print(f"  stopped after {args.limit_seconds:g} s (--limit-seconds)")
                break
            delivered = (await fake.stats())["messages"]
            if delivered and first_at is None:
                first_at = time.perf_counter()
                print(f"  first message {first_at - wall:.2f} s after the post was committed")
            if delivered != last:
                stalled_since, last = time.perf_counter(), delivered
            elif time.perf_counter() - stalled_since > 60:
                break
        # The rate from the first message on: the bot hears of a post written by another
        # process within half a second on SQLite (PRAGMA data_version).
        wall = time.perf_counter() - (first_at or wall)
        cpu = _cpu_seconds(proc.pid) - cpu0
        system = _cpu_seconds_of(Path(f"/proc/{proc.pid}/stat"), system=True) - system0
        threads1, switches1 = _threads_cpu(proc.pid), _switches(proc.pid)
        loop1 = _switches(proc.pid, main_only=True)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            await spy.wait()
        after = await _counts(proc, counts_path)
    except BaseException:
        print((tmp / "run.log").read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
    async with Store.open(db, migrate=False) as store, store.read() as tx:
        marked = sum(n for (p, st), n in (await tx.delivery_counts()).items()
                     if st == str(DeliveryState.SENT))  # fmt: skip
    fake_stats = await fake.stats()
    limited, extra = count_429s(fake_stats)
    if fake_stats["rate_limited"]:
        print("  429s at (s after the first post, scope): " + ", ".join(
            f"{r['after_first_post']:.2f} {r['scope']}" for r in fake_stats["rate_limited"]
        ))  # fmt: skip
    if fake_stats["first_message_post_at"] is not None:
        stalls = await fake.stalls(fake_stats["first_message_post_at"])
        ends = [at + 0.005 + late for at, late in stalls]
        near = sum(
            1
            for r in fake_stats["rate_limited"]
            if any(0 <= r["after_first_post"] - end < 1.1 for end in ends)
        )
        print(f"  the fake's own stalls over 20 ms: {len(stalls)}, longest "
              f"{max((s for _, s in stalls), default=0) * 1000:.0f} ms; {near} of the "
              f"{len(fake_stats['rate_limited'])} 429s within 1.1 s after one")  # fmt: skip
    exactly_once = (
        marked == args.channels
        and fake_stats["messages"] == args.channels
        and fake_stats["channels_with_duplicates"] == 0
    )
    print(f"  exactly once: {'yes' if exactly_once else 'NO'} ({marked} deliveries marked sent; "
          f"{fake_stats['messages']} messages in {fake_stats['channels']} channels at the fake, "
          f"{fake_stats['channels_with_duplicates']} with more than one)")  # fmt: skip
    print(f"  RSS of strikebot run: {rss_idle:.0f} MB before the post, {peak:.0f} MB at most "
          f"during the fan-out (+{peak - rss_idle:.0f} MB)")  # fmt: skip
    n = max(fake_stats["messages"], 1)
    per = {key: (after[key] - before.get(key, 0)) / n for key in after}
    run = Run("strikebot run", fake_stats["messages"], wall, cpu, limited, extra, args.rate)
    spent = {tid: cpu_s - threads0.get(tid, 0.0) for tid, cpu_s in threads1.items()}
    others = sorted((v for tid, v in spent.items() if tid != proc.pid), reverse=True)
    threads = [x * 1000 / n for x in [spent.get(proc.pid, 0.0), *others] if x > 0]
    switches = (
        (switches1[0] - switches0[0]) / n,
        (loop1[0] - loop0[0]) / n,
        (switches1[1] - switches0[1]) / n,
    )
    return ProcessFigures(run, idle_cpu * 1000, per, threads, system * 1000 / n, switches)


async def _py_spy(output: str | None, pid: int) -> asyncio.subprocess.Process | None:
    """With `--py-spy FILE`: py-spy records `pid` (every thread, sampled without stopping
    it) in collapsed-stack form until the fan-out ends."""
    if not output:
        return None
    spy = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid),
        "--output", output, "--format", "raw", "--nonblocking", "--threads", "--rate", "200",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    await asyncio.sleep(1.0)  # attached
    return spy


def _draft(*, targeted: bool = False) -> Draft:
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText(
                "Strike continues Tuesday",
                "Picket lines at 6:30 AM. " * 20,
                "Rally at Grand Park, 10 AM",
            )
        },
        Urgency.URGENT,
        audience=Audience.of([TARGET]) if targeted else EVERYONE,
    )


async def gathered_run(args: argparse.Namespace, fake: Fake) -> Run:
    """What most bots do: every send at once with asyncio.gather over discord.py, which
    waits out 429s per bucket and gives up on a send after its retries."""
    http = HTTPClient(asyncio.get_running_loop())
    discord.http.Route.BASE = fake.api_base
    campaign = bot_config().to_campaign()
    message = update_message(_example_update(), "en", campaign)
    params = handle_message_parameters(
        embeds=render_embeds([message]), allowed_mentions=discord.AllowedMentions.none()
    )
    first = NAIVE_FIRST_CHANNEL + 5_000_000
    try:
        await http.static_login(TOKEN)
        await fake.reset()
        cpu, wall = time.process_time(), time.perf_counter()
        results = await asyncio.gather(
            *(http.send_message(first + n, params=params) for n in range(args.naive_count)),
            return_exceptions=True,
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await http.close()
    failed = sum(isinstance(r, BaseException) for r in results)
    fake_stats = await fake.stats()
    limited, extra = count_429s(fake_stats)
    print(f"  gathered: {failed} of {args.naive_count} sends raised "
          f"({fake_stats['messages']} messages arrived)")  # fmt: skip
    return Run("naive gather", fake_stats["messages"], wall, cpu, limited, extra, args.rate)


def report(run: Run) -> None:
    print(f"  {run.name}")
    print(f"    deliveries          {run.deliveries:,} in {run.seconds:.1f} s "
          f"= {run.per_second:.1f}/s")  # fmt: skip
    print(f"    ratio to allowed    {run.ratio:.3f}   (target ≥ 0.95)")
    print(f"    429s                {run.rate_limited} in all, {run.extra_429s} after the "
          "first second (target 0)")  # fmt: skip
    print(f"    CPU                 {run.cpu_seconds:.2f} s = "
          f"{run.cpu_ms_per_1000 / 1000:.2f} ms per delivery")  # fmt: skip


async def run(args: argparse.Namespace) -> None:
    print(f"fan-out to {args.channels:,} Discord channels through "
          f"{'strikebot run' if args.mode == 'run' else 'Dispatcher.drain()'}, allowed "
          f"{args.rate:g} requests/s (paced at {args.pace:.0%}), {args.latency_ms:g} ms added "
          "latency, 5 messages / 5 s per channel; naive peers to "
          f"{args.naive_count:,} channels each")  # fmt: skip
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        db = f"sqlite+aiosqlite:///{tmp / 'fanout.db'}"
        async with Fake(args) as fake:
            extra = ""
            if args.mode == "run":
                figures = await process_run(args, fake, tmp)
                paced = figures.run
                report(paced)
                per = figures.per_delivery
                trips = per["statements"] + per["begins"] + per["commits"] + per["rollbacks"]
                print(
                    f"    database per delivery  {trips:.2f} round trips ("
                    f"{per['statements']:.2f} statements, {per['begins']:.2f} BEGINs, "
                    f"{per['commits']:.2f} commits, {per['rollbacks']:.2f} rollbacks), "
                    f"{per['checkouts']:.2f} checkouts"
                )
                if "wakeups" in per:
                    print(
                        f"    event loop per delivery  {per['wakeups']:.2f} wake-ups, "
                        f"{per['loop_turns']:.1f} turns, {per['tasks']:.2f} tasks, "
                        f"{per['timers']:.2f} timers, {per['sqlite_trips']:.2f} trips to "
                        "aiosqlite's thread (--loop-stats)"
                    )
                    for prefix in ("wake:", "timer:", "guard:", "trip:"):
                        found = sorted(
                            ((v, k) for k, v in per.items() if k.startswith(prefix)), reverse=True
                        )
                        print(f"      {prefix[:-1]}s: " + ", ".join(
                            f"{k[len(prefix):]} {v:.3f}" for v, k in found[:14] if v >= 0.005
                        ))  # fmt: skip
                print(f"    idle before the post   {figures.idle_cpu_ms_per_s:.1f} ms CPU per s")
                print("    CPU by thread          " + ", ".join(
                    f"{ms:.2f}" for ms in figures.threads_ms_per_delivery[:4]
                ) + " ms per delivery (the event loop's first); in the kernel "
                  f"{figures.system_ms_per_delivery:.2f} ms")  # fmt: skip
                voluntary, of_loop, involuntary = figures.switches_per_delivery
                print(f"    context switches       {voluntary:.2f} voluntary ({of_loop:.2f} "
                      f"of the event loop's thread), {involuntary:.2f} involuntary per "
                      "delivery")  # fmt: skip
                extra = f" round_trips_per_delivery={trips:.2f}"
            else:
                paced = await dispatcher_run(args, fake, db)
                report(paced)
            naive = await naive_run(args, fake)
            report(naive)
            gathered = await gathered_run(args, fake)
            report(gathered)
    print(
        f"fanout mode={args.mode} rate={args.rate:g} ratio_to_allowed={paced.ratio:.3f} "
        f"extra_429s={paced.extra_429s} cpu_ms_per_delivery={paced.cpu_ms_per_1000 / 1000:.2f}"
        f"{extra} naive_ratio_to_allowed={naive.ratio:.3f} "
        f"gather_delivered={gathered.deliveries}/{args.naive_count}"
        f" targeted={'yes' if args.targeted else 'no'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["run", "drain"], default="run")
    parser.add_argument("--channels", type=int, help="subscribed channels (1,000; drain 10,000)")
    parser.add_argument("--rate", type=float, help="allowed requests/s (50; drain 500)")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds after start-up")
    parser.add_argument(
        "--limit-seconds", type=float, default=0, help="stop a long fan-out after this long"
    )
    parser.add_argument("--pace", type=float, default=0.97, help="fraction of --rate to pace at")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="added per request")
    parser.add_argument("--in-flight", type=int, default=64, help="requests in flight at most")
    parser.add_argument("--naive-count", type=int, default=1000, help="sends in the naive loop")
    parser.add_argument(
        "--targeted",
        action="store_true",
        help="the post is for one site: --channels follow it, as many again follow another "
        "(--mode run)",
    )
    parser.add_argument(
        "--loop-stats",
        action="store_true",
        help="count strikebot run's event-loop wake-ups, turns, tasks, timers and trips to "
        "aiosqlite's thread per delivery (bench/_probe; costs a little CPU itself)",
    )
    parser.add_argument(
        "--py-spy",
        metavar="FILE",
        help="record strikebot run with py-spy (in the venv) from the post to the last "
        "message, as collapsed stacks in FILE (--mode run)",
    )
    parser.add_argument(
        "--no-gc-freeze",
        dest="gc_freeze",
        action="store_false",
        help="leave the garbage collector as it is (full collections then stall the loop)",
    )
    args = parser.parse_args()
    if args.channels is None:
        args.channels = 1_000 if args.mode == "run" else 10_000
    if args.rate is None:
        args.rate = 50.0 if args.mode == "run" else 500.0
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
