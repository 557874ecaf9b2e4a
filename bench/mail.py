"""E-mail: CPU per message through `strikebot run`, beside a bare aiosmtplib loop sending the
same bytes to the same local sink in the same run (issue 31: at most 2×).

A temporary SQLite file holds the shipped campaign and `--people` confirmed e-mail sign-ups
(half English, half Spanish). **`strikebot run` itself** delivers one urgent update to all
of them through its e-mail plugin (aiosmtplib) to a sink (aiosmtpd, `bench/_smtp_sink.py`)
in a third process, paced at `--rate` e-mails a second with `--connections` SMTP
connections (`[delivery] email_per_second`, `email_connections` in a copy of the shipped
campaign file). Its CPU is read from /proc from the post to the last message's arrival.
The update is written by this process, as `strikebot post` from a shell would.

The peer: one aiosmtplib connection in this process sending the first message the sink
received, byte for byte, `--naive-count` times, one after another (`SMTP.sendmail`), its
CPU read by `time.process_time()`; then `--paced-count` times at the bot's pace (`--rate`),
sleeping until each one's slot, since a process woken for each message pays for waking.
Printed: e-mails, rate, CPU per e-mail for each and the ratios, and whether every message
arrived once (distinct Message-IDs). The last line is machine-readable.

    .venv/bin/python -m bench.mail [--people 3000] [--rate 100] [--connections 25]
                                   [--naive-count 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import secrets
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

import aiohttp
import aiosmtplib
from sqlalchemy import insert, select

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.clock import utcnow  # noqa: E402
from bot.config import load_config  # noqa: E402
from bot.editorial.admin import Admin, Draft  # noqa: E402
from bot.models import Status, UpdateText, Urgency  # noqa: E402
from bot.plugins.admins import CLI_ACTOR  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from bot.store import schema as t  # noqa: E402

SENDER = "UTLA Strike Desk <news@utla.example.org>"


class Fake:
    """A fake provider in its own process (`bench._smtp_sink`, `bench._twilio_sink`)."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.proc: asyncio.subprocess.Process | None = None
        self.where = ""

    async def __aenter__(self) -> Self:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", self.module, cwd=ROOT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        line = await self._line()
        if not line.startswith("READY "):
            raise SystemExit(f"{self.module} did not start: {line!r}")
        self.where = line.split()[1]
        return self

    async def _line(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        return (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()

    async def ask(self, command: str) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        answer: dict[str, Any] = json.loads(await self._line())
        return answer

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


class Sink(Fake):
    """The SMTP sink in its own process, at 127.0.0.1:`port`."""

    def __init__(self) -> None:
        super().__init__("bench._smtp_sink")

    @property
    def port(self) -> int:
        return int(self.where)


async def add_people(store: Store, count: int, platform: str = "email") -> None:
    """`count` confirmed sign-ups of `platform` for urgent updates, half in Spanish."""
    now = utcnow()
    for first in range(0, count, 5000):
        batch = range(first, min(first + 5000, count))
        async with store.write() as tx:
            subs = [
                {
                    "platform": platform,
                    "workspace": "people",
                    "channel": f"p{n:016x}",
                    "label": "",
                    "language": "es" if n % 2 else "en",
                    "urgencies": "urgent",
                    "timezone": "America/Los_Angeles",
                    "briefing_days": "",
                    "active": True,
                    "created_at": now,
                }
                for n in batch
            ]
            await tx.conn.execute(insert(t.subscriptions), subs)
            ids = dict(
                (
                    await tx.conn.execute(
                        select(t.subscriptions.c.channel, t.subscriptions.c.id).where(
                            t.subscriptions.c.channel.in_([s["channel"] for s in subs])
                        )
                    )
                ).all()
            )
            await tx.conn.execute(
                insert(t.subscribers),
                [
                    {
                        "key": s["channel"],
                        "kind": "email" if platform == "email" else "phone",
                        "address": f"parent{n}@families.example.org"
                        if platform == "email"
                        else f"+1213{n:07d}",
                        "language": s["language"],
                        "choice": "urgent",
                        "state": "confirmed",
                        "subscription_id": ids[s["channel"]],
                        "manage_token": secrets.token_urlsafe(24),
                        "signed_up_at": now,
                        "signed_up_via": "bench",
                        "confirmed_at": now,
                        "confirmed_via": "bench",
                        "confirmations_today": 0,
                    }
                    for n, s in zip(batch, subs, strict=True)
                ],
            )


def campaign_file(tmp: Path, rate: float, connections: int) -> Path:
    """The shipped campaign file with the e-mail pace asked for."""
    lines = []
    for line in (ROOT / "config" / "strike.toml").read_text().splitlines():
        if line.startswith("email_per_second"):
            line = f"email_per_second = {rate:g}\nemail_connections = {connections}"
        lines.append(line)
    path = tmp / "strike.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def draft() -> Draft:
    body = (
        "Picket lines at every school from 6:30 AM. Bring water and a sign; captains hand "
        "out the day's schedule. Parents are welcome on the line from 7:30.\n\n"
        "Schools stay open with substitutes; meals are served as usual."
    )
    return Draft(
        Status.STRIKE_ON,
        {
            "en": UpdateText("No deal: the strike continues Monday", body, "Rally at City Hall"),
            "es": UpdateText(
                "Sin acuerdo: la huelga continúa el lunes",
                "Piquetes en todas las escuelas desde las 6:30. Lleven agua y un cartel.",
                "Mitin en el Ayuntamiento",
            ),
        },
        Urgency.URGENT,
    )


async def start_run(env: dict[str, str], tmp: Path, port: int) -> asyncio.subprocess.Process:
    """`strikebot run` in `tmp` with `env`, its log in `tmp/run.log`, once /healthz answers."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run",
        cwd=tmp, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=(tmp / "run.log").open("wb"),
    )  # fmt: skip
    async with aiohttp.ClientSession() as session:
        for _ in range(1200):
            if proc.returncode is not None:
                raise SystemExit(f"strikebot run exited with {proc.returncode}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                    if response.status == 200:
                        return proc
            await asyncio.sleep(0.05)
    proc.terminate()
    raise SystemExit("strikebot run did not answer /healthz")


async def stop_run(proc: asyncio.subprocess.Process, wait: float = 30.0) -> None:
    """Stop `strikebot run` as an operator does (SIGTERM), killing it after `wait` seconds."""
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), wait)
        except TimeoutError:
            proc.kill()


async def through_run(args: argparse.Namespace, sink: Sink, tmp: Path) -> dict[str, Any]:
    db = f"sqlite+aiosqlite:///{tmp / 'run.db'}"
    config_path = campaign_file(tmp, args.rate, args.connections)
    config = load_config(config_path)
    async with Store.open(db) as store:
        await apply_seed(store, config, utcnow)
        await add_people(store, args.people)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "DISCORD_"))}
    env = {k: v for k, v in env.items() if not k.startswith(("SLACK_", "TELEGRAM_", "TWILIO_"))}
    env |= {
        "STRIKEBOT_DATABASE_URL": db,
        "STRIKEBOT_CONFIG": str(config_path),
        "STRIKEBOT_HTTP_PORT": str(port),
        "STRIKEBOT_CONSOLE": "off",
        "STRIKEBOT_SMTP_URL": f"smtp://127.0.0.1:{sink.port}?tls=off",
        "STRIKEBOT_MAIL_FROM": SENDER,
    }
    counts_path = tmp / "counts.json"
    probed = bool(args.profile or args.counts)
    if probed:  # cProfile of the event loop's thread from the post to the last e-mail
        env |= {
            "STRIKEBOT_BENCH_COUNTS": str(counts_path),
            "STRIKEBOT_BENCH_PROFILE": args.profile or "",
            "STRIKEBOT_BENCH_LOOP": "1" if args.counts else "",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "bench" / "_probe"), str(ROOT)]),
        }
    proc = await start_run(env, tmp, port)
    try:
        await asyncio.sleep(args.settle)  # start-up done (gc.freeze, scheduler, first polls)
        await sink.ask("reset")
        before: dict[str, int] = {}
        if probed:
            proc.send_signal(signal.SIGUSR1)
            await asyncio.sleep(0.5)
            before = json.loads(counts_path.read_text())
        cpu = cpu_seconds(proc.pid)
        async with Store.open(db, migrate=False) as store:
            admin = Admin(store, config.to_campaign(), config.to_admins(), utcnow)
            began = time.perf_counter()
            await admin.post(CLI_ACTOR, draft())
        first_at, delivered, last, still_since = None, 0, -1, time.perf_counter()
        while delivered < args.people:
            await asyncio.sleep(0.2)
            delivered = (await sink.ask("stats"))["messages"]
            if delivered and first_at is None:
                first_at = time.perf_counter()
            if delivered != last:
                last, still_since = delivered, time.perf_counter()
            elif time.perf_counter() - still_since > 30:
                print(f"  stopped: nothing arrived for 30 s ({delivered} of {args.people})")
                break
        seconds = time.perf_counter() - (first_at or began)
        cpu = cpu_seconds(proc.pid) - cpu
        if probed:
            proc.send_signal(signal.SIGUSR1)
            await asyncio.sleep(1)
            after = json.loads(counts_path.read_text())
            per = {k: (after[k] - before.get(k, 0)) / max(args.people, 1) for k in after}
            print("  per e-mail: " + ", ".join(f"{k} {v:.2f}" for k, v in per.items()))
    except BaseException:
        print((tmp / "run.log").read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        await stop_run(proc)
    stats = await sink.ask("stats")
    return {
        "messages": stats["messages"],
        "distinct": stats["distinct_ids"],
        "seconds": seconds,
        "cpu": cpu,
        "sample": stats["sample"],
    }


async def bare_loop(
    sink: Sink, sample: dict[str, Any], count: int, rate: float | None = None
) -> dict[str, float]:
    """aiosmtplib alone: the same bytes, one message after another on one connection; with
    `rate`, each started at its slot of that pace (sleeping between), as the bot sends."""
    raw = base64.b64decode(sample["raw"])
    await sink.ask("reset")
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=sink.port, start_tls=False)
    await client.connect()
    loop = asyncio.get_running_loop()
    try:
        cpu, began = time.process_time(), time.perf_counter()
        start = loop.time()
        for n in range(count):
            if rate:
                await asyncio.sleep(max(0.0, start + n / rate - loop.time()))
            await client.sendmail(sample["from"], sample["to"], raw)
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    finally:
        await client.quit()
    stats = await sink.ask("stats")
    return {"messages": stats["messages"], "seconds": seconds, "cpu": cpu}


async def run(args: argparse.Namespace) -> None:
    print(
        f"{args.people:,} e-mails through strikebot run at {args.rate:g}/s with "
        f"{args.connections} connections, beside a bare aiosmtplib loop of "
        f"{args.naive_count:,}; load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory(prefix="strikebot-mail-") as name:
        async with Sink() as sink:
            ours = await through_run(args, sink, Path(name))
            if ours["sample"] is None:
                raise SystemExit("no e-mail arrived")
            bare = await bare_loop(sink, ours["sample"], args.naive_count)
            paced = await bare_loop(sink, ours["sample"], args.paced_count, args.rate)
    ours_ms = ours["cpu"] * 1000 / max(ours["messages"], 1)
    bare_ms = bare["cpu"] * 1000 / max(bare["messages"], 1)
    paced_ms = paced["cpu"] * 1000 / max(paced["messages"], 1)
    once = ours["messages"] == ours["distinct"] == args.people
    print(
        f"  strikebot run   {ours['messages']:,} e-mails in {ours['seconds']:.1f} s "
        f"({ours['messages'] / ours['seconds']:.1f}/s), {ours_ms:.2f} ms CPU each; "
        f"exactly once: {'yes' if once else 'NO'} ({ours['distinct']:,} distinct Message-IDs)"
    )
    print(
        f"  aiosmtplib loop {bare['messages']:,} e-mails in {bare['seconds']:.1f} s "
        f"({bare['messages'] / bare['seconds']:.0f}/s), {bare_ms:.2f} ms CPU each"
    )
    print(
        f"  the loop paced  {paced['messages']:,} e-mails at {args.rate:g}/s in "
        f"{paced['seconds']:.1f} s, {paced_ms:.2f} ms CPU each"
    )
    print(
        f"  ratio           {ours_ms / bare_ms:.2f} to the loop, {ours_ms / paced_ms:.2f} to the "
        "loop at the same pace   (target ≤ 2)"
    )
    print(
        f"mail people={args.people} rate={args.rate:g} per_second="
        f"{ours['messages'] / ours['seconds']:.1f} cpu_ms={ours_ms:.2f} bare_cpu_ms={bare_ms:.2f} "
        f"paced_cpu_ms={paced_ms:.2f} ratio={ours_ms / bare_ms:.2f} "
        f"paced_ratio={ours_ms / paced_ms:.2f} exactly_once={'yes' if once else 'no'} "
        f"load={os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=100.0, help="email_per_second")
    parser.add_argument("--connections", type=int, default=25, help="email_connections")
    parser.add_argument("--naive-count", type=int, default=2000)
    parser.add_argument(
        "--paced-count", type=int, default=1000, help="e-mails the paced loop sends"
    )
    parser.add_argument("--profile", help="write cProfile stats of strikebot run here")
    parser.add_argument(
        "--counts",
        action="store_true",
        help="print strikebot run's statements, transactions, loop wake-ups, tasks, timers "
        "and trips to aiosqlite's thread per e-mail (bench/_probe; costs a little CPU)",
    )
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after start-up")
    args = parser.parse_args()
    if args.profile:
        args.profile = str(Path(args.profile).absolute())
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
