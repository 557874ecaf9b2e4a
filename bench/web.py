"""The public page under load, served by `strikebot run` itself, against a bare aiohttp handler.

    .venv/bin/python -m bench.web                       # 100,000 updates, SQLite, 10 s each
    .venv/bin/python -m bench.web --updates 1000000 --seconds 15
    .venv/bin/python -m bench.web --database-url postgresql+asyncpg://postgres@127.0.0.1/empty

A store is filled through the store API (`--updates` published updates over the past year,
plus the shipped campaign), then `strikebot run` serves it in its own process on 127.0.0.1,
with `STRIKEBOT_ADMIN_TOKEN` set and no platform tokens. In the same run a trivial aiohttp
server answering a constant is the baseline. The load generator is `wrk` (Debian's package)
when installed, which outruns one Python process; otherwise several aiohttp client
processes. Measured, each for `--seconds`, with the same driver settings:

- baseline: GET / of the bare handler (no access log, as `strikebot run`), before the first
  target and again after each; a target's ratio is to the mean of the runs just before and
  after it, so load from elsewhere on the machine moves both alike;
- page: GET / of strikebot, nothing changing;
- conditional: GET / with the page's current `If-None-Match` (304s; a turning minute's
  countdown gives a few 200s);
- page while publishing: GET / while the driver posts an update through the admin API every
  second (each post invalidates the page); afterwards the page must show the last post;
- stale on database down (needs PostgreSQL: `--postgres-admin-url`, default
  $STRIKEBOT_TEST_POSTGRES_URL): `strikebot run` on a database of its own, which is then
  dropped under it; `/` must still answer 200, marked as possibly out of date.

Last line: `web page_rps=<x> conditional_rps=<y> baseline_rps=<z> stale_on_db_down=<yes|no>`,
where page_rps is the rate while publishing (cache invalidation under load) and baseline_rps
the mean of the baseline runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import secrets
import shutil
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
TOKEN = secrets.token_hex(16)


# -- the servers --------------------------------------------------------------------------


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


async def fill_store(database_url: str, config: str, updates: int) -> float:
    """The shipped campaign plus `updates` published updates, through the store."""
    sys.path.insert(0, str(ROOT))
    from bench._latency import fill
    from bot.clock import utcnow
    from bot.config import load_config
    from bot.runtime.seed import apply_seed
    from bot.store import Store

    async with Store.open(database_url) as store:
        await apply_seed(store, load_config(config), utcnow)
        seconds = await fill(store, updates)
        async with store.write() as tx:
            tx.touch_public()
    return seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def baseline_server(port: int) -> Iterator[None]:
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "bench.web", "--baseline", str(port)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            raise SystemExit("the baseline server did not start")
        yield
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextlib.contextmanager
def strikebot_run(port: int, database_url: str, config: str) -> Iterator[str]:
    """`strikebot run` in its own process; yields its base URL once /healthz answers."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "SLACK_"))},
        "STRIKEBOT_DATABASE_URL": database_url,
        "STRIKEBOT_CONFIG": config,
        "STRIKEBOT_ADMIN_TOKEN": TOKEN,
        "STRIKEBOT_HTTP_PORT": str(port),
    }
    strikebot = str(Path(sys.executable).parent / "strikebot")
    process = subprocess.Popen(  # noqa: S603 - the installed console script
        [strikebot, "run"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while not _answers(f"{base}/healthz"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"strikebot run did not start (exit {process.poll()})")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - 127.0.0.1
            return bool(response.status == 200)
    except OSError:
        return False


# -- the load -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rate:
    name: str
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    tool: str


def wrk(name: str, url: str, seconds: float, connections: int, headers: list[str]) -> Rate:
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds:.0f}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    out = subprocess.run(  # noqa: S603 - wrk from PATH
        [*command, url], capture_output=True, text=True, check=True, timeout=seconds + 60
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    errors = 0
    for pattern in (r"Non-2xx or 3xx responses: (\d+)", r"Socket errors: .*?timeout (\d+)"):
        found = re.search(pattern, out)
        errors += int(found.group(1)) if found else 0
    return Rate(name, rps, _ms(out, "50%"), _ms(out, "99%"), errors, "wrk")


def _ms(out: str, label: str) -> float:
    found = re.search(rf"{re.escape(label)}\s+([\d.]+)(us|ms|s)\b", out)
    if found is None:
        return 0.0
    value, unit = float(found.group(1)), found.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def aiohttp_load(name: str, url: str, seconds: float, connections: int, headers: list[str]) -> Rate:
    """The fallback driver: one aiohttp client process per core, summed."""
    processes = max(2, os.cpu_count() or 2)
    per = max(1, connections // processes)
    command = [sys.executable, "-m", "bench.web", "--drive", url, str(seconds), str(per)]
    for header in headers:
        command += ["--header", header]
    children = [
        subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=ROOT)  # noqa: S603
        for _ in range(processes)
    ]
    done = errors = 0
    latencies: list[float] = []
    for child in children:
        out, _ = child.communicate(timeout=seconds + 60)
        count, failed, p50, p99 = out.split()
        done, errors = done + int(count), errors + int(failed)
        latencies += [float(p50), float(p99)]
    return Rate(name, done / seconds, min(latencies), max(latencies), errors, "aiohttp")


async def drive(url: str, seconds: float, connections: int, headers: list[str]) -> None:
    sent = {k.strip(): v.strip() for k, v in (h.split(":", 1) for h in headers)}
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=connections), headers=sent
    ) as session:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                try:
                    async with session.get(url) as response:
                        await response.read()
                        errors += response.status not in (200, 304)
                except aiohttp.ClientError:
                    errors += 1
                latencies.append((time.perf_counter() - began) * 1000)

        await asyncio.gather(*(worker() for _ in range(connections)))
    latencies.sort()
    p50 = latencies[len(latencies) // 2] if latencies else 0.0
    p99 = latencies[int(len(latencies) * 0.99)] if latencies else 0.0
    print(len(latencies), errors, f"{p50:.2f}", f"{p99:.2f}")


def load(name: str, url: str, args: argparse.Namespace, headers: list[str] | None = None) -> Rate:
    run = wrk if args.driver == "wrk" else aiohttp_load
    return run(name, url, args.seconds, args.connections, headers or [])


async def publishing(base: str, stop: asyncio.Event) -> tuple[int, str]:
    """Post an update through the admin API every second until `stop`; (count, last)."""
    posted, last = 0, ""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession(headers=auth) as session:
        while not stop.is_set():
            last = f"Bench update {posted + 1} at {time.strftime('%H:%M:%S')}"
            body = {"status": "strike_on", "texts": {"en": {"headline": last}}}
            async with session.post(f"{base}/api/v1/admin/updates", json=body) as response:
                if response.status != 201:
                    raise SystemExit(f"posting failed: {response.status} {await response.text()}")
            posted += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
    return posted, last


async def under_publishing(base: str, args: argparse.Namespace) -> tuple[Rate, int, bool]:
    stop = asyncio.Event()
    poster = asyncio.create_task(publishing(base, stop))
    rate = await asyncio.to_thread(load, "/ while publishing 1/s", f"{base}/", args)
    stop.set()
    posted, last = await poster
    async with aiohttp.ClientSession() as session, session.get(f"{base}/") as response:
        fresh = last in await response.text()
    return rate, posted, fresh


async def stale_when_database_drops(args: argparse.Namespace, config: str) -> tuple[bool, str]:
    """`strikebot run` on its own PostgreSQL database, dropped under it: is / still served?"""
    admin_url = args.postgres_admin_url
    if not admin_url:
        return False, "not measured: no PostgreSQL (set STRIKEBOT_TEST_POSTGRES_URL)"
    import asyncpg
    from sqlalchemy.engine import make_url

    name = f"sbbench_{secrets.token_hex(4)}"
    base_url = make_url(admin_url)
    admin_dsn = base_url.set(drivername="postgresql").render_as_string(hide_password=False)
    url = base_url.set(database=name).render_as_string(hide_password=False)

    async def execute(statement: str) -> None:
        connection = await asyncpg.connect(admin_dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    await execute(f'CREATE DATABASE "{name}"')
    try:
        await fill_store(url, config, 1000)
        with strikebot_run(free_port(), url, config) as base:
            async with aiohttp.ClientSession() as session:
                async with session.get(f"{base}/") as good:
                    assert good.status == 200
                await execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                async with session.get(f"{base}/") as stale:
                    text = await stale.text()
                    served = stale.status == 200 and stale.headers.get("Strikebot-Stale") == "1"
                    marked = 'class="stale"' in text
                async with session.get(f"{base}/healthz") as health:
                    truthful = health.status == 503
        detail = f"/ {stale.status}, marked {marked}; /healthz {health.status}"
        return served and marked and truthful, detail
    finally:
        await execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def bench(args: argparse.Namespace) -> int:
    if args.driver == "wrk" and shutil.which("wrk") is None:
        args.driver = "aiohttp"
    config = args.config
    results: list[Rate] = []
    bares: list[Rate] = []  # the baseline before the first target and after each
    with tempfile.TemporaryDirectory() as tmp:
        database_url = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
        seeding = await fill_store(database_url, config, args.updates)
        baseline_port = free_port()
        with (
            baseline_server(baseline_port),
            strikebot_run(free_port(), database_url, config) as base,
        ):
            bare = f"http://127.0.0.1:{baseline_port}/"
            bares.append(load("baseline (constant)", bare, args))
            async with aiohttp.ClientSession() as session, session.get(f"{base}/") as first:
                etag = first.headers["ETag"]
                size = len(await first.read())
            for name, path, headers in (
                ("/ (nothing changing)", "/", []),
                ("/ If-None-Match", "/", [f"If-None-Match: {etag}"]),
                ("/api/v1/status", "/api/v1/status", []),
            ):
                results.append(load(name, f"{base}{path}", args, headers))
                bares.append(load("baseline (constant)", bare, args))
            publish_rate, posted, fresh = await under_publishing(base, args)
            results.append(publish_rate)
            bares.append(load("baseline (constant)", bare, args))
    stale, stale_detail = await stale_when_database_drops(args, config)

    baseline = sum(b.rps for b in bares) / len(bares)
    print(
        f"web bench: strikebot run with {args.updates:,} updates ({seeding:.1f} s to fill), "
        f"{database_url.split(':', 1)[0]}; load by {bares[0].tool}, {args.connections} "
        f"connections, {args.seconds:.0f} s each; machine cpus = {os.cpu_count()}; / is "
        f"{size:,} bytes; load average {os.getloadavg()[0]:.1f}"
    )
    print("baseline (each target is compared with the runs just before and after it): "
          + ", ".join(f"{b.rps:.0f}" for b in bares) + " req/s")  # fmt: skip
    print(f"{'target':<26}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'vs baseline':>13}")
    for i, r in enumerate(results):
        beside = (bares[i].rps + bares[i + 1].rps) / 2
        ratio = r.rps / beside if beside else 0.0
        print(f"{r.name:<26}{r.rps:>9.0f}{r.p50_ms:>9.1f}{r.p99_ms:>9.1f}{r.errors:>8}"
              f"{ratio:>12.0%}")  # fmt: skip
    print(f"published while loaded: {posted} updates; the page showed the last one: "
          f"{'yes' if fresh else 'NO'}")  # fmt: skip
    print(f"database dropped under a running strikebot: {stale_detail}")
    page = results[3].rps
    conditional = results[1].rps
    print(
        f"web page_rps={page:.0f} conditional_rps={conditional:.0f} baseline_rps={baseline:.0f} "
        f"stale_on_db_down={'yes' if stale else 'no'}"
    )
    return 0 if fresh and all(r.errors == 0 for r in [*results, *bares]) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=100_000, help="stored updates")
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    parser.add_argument("--connections", type=int, default=64, help="kept open by the driver")
    parser.add_argument("--driver", choices=["wrk", "aiohttp"], default="wrk")
    parser.add_argument("--database-url", help="default: SQLite in a temporary directory")
    parser.add_argument(
        "--postgres-admin-url",
        default=os.environ.get("STRIKEBOT_TEST_POSTGRES_URL"),
        help="PostgreSQL to create (and drop) a database on, for the stale check",
    )
    parser.add_argument(
        "--config",
        type=lambda p: str(Path(p).resolve()),
        default=str(ROOT / "config" / "strike.toml"),
    )
    parser.add_argument("--baseline", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--drive", nargs=3, metavar=("URL", "S", "C"), help=argparse.SUPPRESS)
    parser.add_argument("--header", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        asyncio.run(serve_baseline(args.baseline))
        return 0
    if args.drive:
        url, seconds, connections = args.drive
        asyncio.run(drive(url, float(seconds), int(connections), args.header))
        return 0
    return asyncio.run(bench(args))


if __name__ == "__main__":
    raise SystemExit(main())
