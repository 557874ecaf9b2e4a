"""How `strikebot run` itself holds up as a campaign's history grows.

For each store size (stored updates) a fresh SQLite file (or the PostgreSQL database given)
is filled, the real `strikebot run` is started on it as a separate process with Slack in
HTTP mode against a fake Slack API served by this process, and measured from outside:

- event-loop stalls: `/healthz` probed every 10 ms from the first answer through
  `--probe-seconds` (start-up, catch-up, the scheduler's first polls); the longest answer;
  and, from inside, the server's event-loop steps over `--step-ms` of CPU (`bench._steps`),
  before its first answer and from then to the probe's end, with the task and where it
  stopped (on a loaded machine the probe's wall clock also counts waits for a core); the
  timing stops at the probe's end (it costs microseconds a step), so the rates below are
  the server's own;
- RSS of the process once idle (`/proc/<pid>/status`);
- `/` and `/api/v1/status` requests per second and median latency, with `wrk` (Debian's
  package, the same threads and connections for every target) for `--seconds` each, beside a
  bare aiohttp handler in its own process (no access log, as `strikebot run`): the bare
  handler is measured just before and just after each target, and the target's ratio is to
  the mean of those two, so load from elsewhere on the machine moves both alike;
- slash-command latency: `/strike status` and `/strike timeline 5` signed the way Slack
  signs them, POSTed to `/slack/events` one after another; p50 and p99.

The last line per size: `scale size=<n> page_rps=<x> page_ratio=<x/bare>
status_rps=<y> status_ratio=<y/bare> command_p99_ms=<z> rss_mb=<m> stall_ms=<s>
step_cpu_ms=<c> load=<1-min>` (step_cpu_ms: the longest step after the first answer, by CPU).

    .venv/bin/python -m bench.scale [--sizes 1000,100000,1000000] [--subscriptions 10000]
                                    [--seconds 10] [--step-ms 20] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
from asyncio.subprocess import Process
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
from sqlalchemy import insert

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._latency import fill, percentile  # noqa: E402
from bench._steps import PATH_VARIABLE, THRESHOLD_VARIABLE, read_steps  # noqa: E402
from bot.config import load_config  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import schema as t  # noqa: E402
from tests.fakes.slack import FakeSlack, form_body, sign, slash_command  # noqa: E402

CONFIG = ROOT / "config" / "strike.toml"
SIGNING_SECRET = "bench-signing-secret"
ZONES = ("America/Los_Angeles", "America/New_York")
TIMES = ("06:00", "06:30", "07:00", "07:30", "08:00", "18:00")
DAY_SETS = ("0123456", "01234")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def add_subscriptions(store: Store, count: int) -> None:
    """`count` channels with briefings, over 24 schedules (6 times x 2 zones x 2 day sets)."""
    created = datetime.now(UTC) - timedelta(days=30)
    rows = [
        {
            "platform": "slack",
            "workspace": "T0STRIKE",
            "channel": f"C{n:08d}",
            "label": "",
            "language": "es" if n % 2 else "en",
            "urgencies": "important,routine,urgent",
            "briefing_time": TIMES[n % len(TIMES)],
            "timezone": ZONES[(n // 7) % len(ZONES)],
            "briefing_days": DAY_SETS[(n // 11) % len(DAY_SETS)],
            "active": True,
            "created_at": created,
        }
        for n in range(count)
    ]
    for start in range(0, count, 5000):
        async with store.write() as tx:
            await tx.conn.execute(insert(t.subscriptions), rows[start : start + 5000])


async def prepare(url: str, updates: int, subscriptions: int) -> None:
    config = load_config(CONFIG)
    async with Store.open(url) as store:
        await apply_seed(store, config, lambda: datetime.now(UTC))
        await fill(store, updates)
        await add_subscriptions(store, subscriptions)


@dataclass
class Wrk:
    rps: float
    p50_ms: float


async def wrk(url: str, seconds: int) -> Wrk:
    proc = await asyncio.create_subprocess_exec(
        "wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", url,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out = (await proc.communicate())[0].decode()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    p50_ms = float(p50.group(1)) * scale[p50.group(2)] if p50 else float("nan")
    return Wrk(rps, p50_ms)


BASELINE = """
from aiohttp import web
async def ok(request): return web.Response(body=b'{"ok":true}', content_type="application/json")
app = web.Application(); app.router.add_get("/", ok)
web.run_app(app, host="127.0.0.1", port=%d, access_log=None, print=None)
"""


async def wait_serving(
    session: aiohttp.ClientSession, url: str, proc: Process, within: float = 300.0
) -> float:
    started = time.monotonic()
    while time.monotonic() - started < within:
        if proc.returncode is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        with contextlib.suppress(aiohttp.ClientError, OSError):
            async with session.get(url) as response:
                await response.read()
                return time.monotonic() - started
        await asyncio.sleep(0.01)
    raise RuntimeError(f"{url} did not answer within {within}s")


async def probe(
    session: aiohttp.ClientSession, url: str, seconds: float
) -> tuple[float, list[tuple[float, float]]]:
    """The longest `/healthz` round trip, asked every 10 ms for `seconds`, and every answer
    slower than 50 ms as (seconds since the probe began, seconds it took)."""
    worst = 0.0
    slow: list[tuple[float, float]] = []
    began = time.monotonic()
    until = began + seconds
    while time.monotonic() < until:
        started = time.monotonic()
        with contextlib.suppress(aiohttp.ClientError, OSError):
            async with session.get(url) as response:
                await response.read()
        took = time.monotonic() - started
        worst = max(worst, took)
        if took > 0.05:
            slow.append((started - began, took))
        await asyncio.sleep(0.01)
    return worst, slow


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def commands(session: aiohttp.ClientSession, slack: FakeSlack, base: str,
                   count: int) -> list[float]:  # fmt: skip
    timings = []
    for n in range(count):
        text = "status" if n % 2 else "timeline 5"
        body = form_body(slash_command(slack, text, user="U0MEMBER"))
        headers = sign(SIGNING_SECRET, body, int(time.time()))
        started = time.perf_counter()
        async with session.post(f"{base}/slack/events", data=body, headers=headers) as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"/strike {text} answered {response.status}")
        timings.append((time.perf_counter() - started) * 1000)
    return timings


async def beside_bare(bare: str, targets: list[str], seconds: int) -> list[tuple[Wrk, float]]:
    """Each target between two runs of the bare handler, and its ratio to their mean."""
    bares = [await wrk(bare, seconds)]
    rates = []
    for url in targets:
        rates.append(await wrk(url, seconds))
        bares.append(await wrk(bare, seconds))
    print("  bare handler     " + ", ".join(f"{b.rps:,.0f}" for b in bares) + " req/s")
    return [(r, r.rps / ((bares[i].rps + bares[i + 1].rps) / 2)) for i, r in enumerate(rates)]


async def measure(size: int, args: argparse.Namespace, bare: str, tmp: Path) -> str:
    url = args.database_url or f"sqlite+aiosqlite:///{tmp / f'scale-{size}.db'}"
    started = time.perf_counter()
    await prepare(url, size, args.subscriptions)
    print(f"  filled {size:,} updates and {args.subscriptions:,} channels in "
          f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    port = free_port()
    async with FakeSlack() as slack, aiohttp.ClientSession() as session:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "SLACK_"))}
        env |= {
            "STRIKEBOT_DATABASE_URL": url,
            "STRIKEBOT_HTTP_PORT": str(port),
            "STRIKEBOT_CONFIG": str(CONFIG),
            "STRIKEBOT_CONSOLE": "off",
            "SLACK_BOT_TOKEN": slack.bot_token,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": slack.api_url,
        }
        steps_file = tmp / f"steps-{size}.txt"
        steps_file.unlink(missing_ok=True)
        env |= {PATH_VARIABLE: str(steps_file), THRESHOLD_VARIABLE: str(args.step_ms),
                "PYTHONPATH": str(ROOT)}  # fmt: skip
        started_at = time.time()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import bench._steps as s; s.main()", "run",
            cwd=tmp, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            ready = await wait_serving(session, f"{base}/healthz", proc)
            served_at = time.time()
            stall, slow_answers = await probe(
                session, f"{base}{args.probe_path}", args.probe_seconds
            )
            probed_at = time.time()
            # The steps were timed for the probe; the rates below are the server's alone.
            proc.send_signal(signal.SIGUSR2)
            rss = rss_mb(proc.pid)
            (page, page_ratio), (status, status_ratio) = await beside_bare(
                bare, [f"{base}/", f"{base}/api/v1/status"], args.seconds
            )
            load = os.getloadavg()[0]
            timings = await commands(session, slack, base, args.commands)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout=30)
            except TimeoutError:
                proc.kill()
    if not args.database_url:
        await asyncio.to_thread(Path(url.removeprefix("sqlite+aiosqlite:///")).unlink, True)
    p50, p99 = percentile(timings, 50), percentile(timings, 99)
    # The server's event-loop steps over --step-ms of CPU: before its first answer (nobody
    # waits on them yet) and from then to the probe's end (what the probe may have met).
    early = read_steps(steps_file, started_at, served_at)
    slow = read_steps(steps_file, served_at, probed_at)
    worst = slow[0] if slow else None
    print(f"  serving after {ready:.1f} s; longest /healthz answer in the first "
          f"{args.probe_seconds:g} s: {stall * 1000:.0f} ms; idle RSS {rss:.0f} MB")  # fmt: skip
    if slow_answers:
        shown = ", ".join(f"{at:.1f}: {took * 1000:.0f}" for at, took in slow_answers[:10])
        print(f"  /healthz answers over 50 ms (s after the first answer: ms): {shown}")
    for label, steps in (
        ("before the first answer", early),
        ("from then to the probe's end", slow),
    ):
        print(f"  event-loop steps over {args.step_ms:g} ms of CPU {label}: {len(steps)}")
        for step in steps[:3]:
            print(f"    {step.cpu_ms:.0f} ms CPU ({step.wall_ms:.0f} ms wall): {step.what[:300]}")
    print(f"  /                {page.rps:8,.0f} req/s  p50 {page.p50_ms:6.1f} ms  "
          f"({page_ratio:.2f} of the bare handler)")  # fmt: skip
    print(f"  /api/v1/status   {status.rps:8,.0f} req/s  p50 {status.p50_ms:6.1f} ms  "
          f"({status_ratio:.2f} of the bare handler; load average {load:.1f})")  # fmt: skip
    print(f"  /strike (Slack)  p50 {p50:.1f} ms  p99 {p99:.1f} ms over {len(timings)} commands")
    return (
        f"scale size={size} page_rps={page.rps:.0f} page_ratio={page_ratio:.2f} "
        f"status_rps={status.rps:.0f} status_ratio={status_ratio:.2f} command_p99_ms={p99:.1f} "
        f"rss_mb={rss:.0f} stall_ms={stall * 1000:.0f} "
        f"step_cpu_ms={worst.cpu_ms if worst else 0:.0f} load={load:.1f}"
    )


async def run(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("bench.scale needs wrk: apt-get install wrk")
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        port = free_port()
        bare = await asyncio.create_subprocess_exec(sys.executable, "-c", BASELINE % port)
        try:
            async with aiohttp.ClientSession() as session:
                await wait_serving(session, f"http://127.0.0.1:{port}/", bare)
            lines = []
            for size in sizes:
                print(f"size {size:,}:", flush=True)
                lines.append(await measure(size, args, f"http://127.0.0.1:{port}/", tmp))
        finally:
            bare.terminate()
            await bare.wait()
        for line in lines:
            print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--subscriptions", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=10, help="wrk duration per target")
    parser.add_argument("--probe-seconds", type=float, default=60.0)
    parser.add_argument(
        "--probe-path",
        default="/healthz",
        help="what the stall probe asks: /healthz (the default; it also writes to the store) "
        "or /livez (the event loop alone)",
    )
    parser.add_argument("--commands", type=int, default=200)
    parser.add_argument("--step-ms", type=float, default=20.0,
                        help="record the server's event-loop steps over this much CPU")  # fmt: skip
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: SQLite)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
