"""Requests per second for the status page and /api/v1/status, against the real server.

    .venv/bin/python bench/web.py [--requests 5000] [--concurrency 32] [--seconds 20]

Starts `strikebot`'s web app (the seeded campaign from config/strike.toml, SQLite in a
temporary directory) in its own process on 127.0.0.1 — one process, one event loop, one
core — and, for comparison on the same machine, a trivial aiohttp server answering a
constant. Then drives each with a bounded number of requests at a bounded concurrency,
within a time bound, and prints requests/s, latency percentiles and the ratio to the
baseline. Target: at least 1,000 requests/s for `/` and `/api/v1/status`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent


# -- the servers (run as child processes) ------------------------------------------------


async def serve_strikebot(port: int, database_url: str, config_path: str) -> None:
    from aiohttp import web

    sys.path.insert(0, str(ROOT))
    from adapters.web import build_app, plugin
    from bot.admin import Admin
    from bot.clock import utcnow
    from bot.config import Settings, load_config
    from bot.context import plugin_context
    from bot.seed import apply_seed
    from bot.store import Store

    settings = Settings.from_env({"STRIKEBOT_DATABASE_URL": database_url})
    config = load_config(config_path)
    async with Store.open(database_url) as store:
        await apply_seed(store, config, utcnow)
        campaign = config.to_campaign()
        admin = Admin(store, campaign, config.to_admins(), utcnow)
        ctx = plugin_context(plugin, settings, config, store=store, admin=admin, clock=utcnow)
        runner = web.AppRunner(build_app(ctx), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        print("ready", flush=True)
        await asyncio.Event().wait()


async def serve_baseline(port: int) -> None:
    from aiohttp import web

    body = b'{"ok":true}'

    async def constant(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/", constant)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


# -- the load -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    name: str
    done: int
    errors: int
    seconds: float
    latencies_ms: list[float]
    bytes_per_response: int

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


async def drive(name: str, url: str, requests: int, concurrency: int, seconds: float) -> Result:
    """`requests` GETs of `url` by `concurrency` workers; stops early at `seconds`."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    latencies: list[float] = []
    errors = 0
    size = 0
    issued = 0
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(min(200, requests)):  # warm-up: connections, caches
            async with session.get(url) as response:
                await response.read()
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal errors, size, issued
            while issued < requests and time.perf_counter() < deadline:
                issued += 1
                began = time.perf_counter()
                try:
                    async with session.get(url) as response:
                        body = await response.read()
                        if response.status != 200:
                            errors += 1
                        size = len(body)
                except aiohttp.ClientError:
                    errors += 1
                latencies.append((time.perf_counter() - began) * 1000)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
    return Result(name, len(latencies), errors, elapsed, latencies, size)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def child(*args: str) -> Iterator[subprocess.Popen[str]]:
    """A server child process; waits for its 'ready' line, stops it on exit."""
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"server {args} did not start (exit {process.poll()})")
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


async def bench(args: argparse.Namespace) -> int:
    n, c, s = args.requests, args.concurrency, args.seconds
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        database_url = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
        strikebot_port, baseline_port = free_port(), free_port()
        with (
            child("--serve", str(strikebot_port), database_url, args.config),
            child("--baseline", str(baseline_port)),
        ):
            base = f"http://127.0.0.1:{strikebot_port}"
            results.append(
                await drive("baseline (constant)", f"http://127.0.0.1:{baseline_port}/", n, c, s)
            )
            results.append(await drive("strikebot /", f"{base}/", n, c, s))
            results.append(await drive("strikebot /es/", f"{base}/es/", n, c, s))
            results.append(
                await drive("strikebot /api/v1/status", f"{base}/api/v1/status", n, c, s)
            )
            results.append(
                await drive("strikebot /api/v1/demands", f"{base}/api/v1/demands", n, c, s)
            )
    baseline = results[0].rate
    cpus = os.cpu_count()
    print(f"web bench: {n} requests per target, concurrency {c}, time bound {s:.0f}s, "
          f"server = one process (one event loop), machine cpus = {cpus}")  # fmt: skip
    print(f"{'target':<28}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'bytes':>8}"
          f"{'vs baseline':>13}")  # fmt: skip
    ok = True
    for r in results:
        ratio = r.rate / baseline if baseline else 0.0
        print(f"{r.name:<28}{r.rate:>9.0f}{r.percentile(0.5):>9.1f}{r.percentile(0.99):>9.1f}"
              f"{r.errors:>8}{r.bytes_per_response:>8}{ratio:>12.0%}")  # fmt: skip
        if r.errors:
            ok = False
    for r in results[1:]:
        if r.name in ("strikebot /", "strikebot /api/v1/status"):
            verdict = "meets" if r.rate >= 1000 else "MISSES"
            print(f"{r.name}: {r.rate:.0f} req/s {verdict} the 1,000 req/s target")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000, help="per target (default 5000)")
    parser.add_argument("--concurrency", type=int, default=32, help="in flight (default 32)")
    parser.add_argument("--seconds", type=float, default=20.0, help="time bound per target")
    parser.add_argument("--database-url", help="default: SQLite in a temporary directory")
    parser.add_argument("--config", default=str(ROOT / "config" / "strike.toml"))
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "DATABASE_URL", "CONFIG"),
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--baseline", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        port, url, config = args.serve
        asyncio.run(serve_strikebot(int(port), url, config))
        return 0
    if args.baseline:
        asyncio.run(serve_baseline(args.baseline))
        return 0
    return asyncio.run(bench(args))


if __name__ == "__main__":
    raise SystemExit(main())
