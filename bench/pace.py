"""E-mail and texts at the configured pace through `strikebot run` (issue 31: rate ÷
configured pace ≥ 0.95 at 10,000 and 100,000 queued).

For each platform (`--platforms`) and queue size (`--queued`): a temporary SQLite file holds
the shipped campaign and that many confirmed sign-ups of the platform (half English, half
Spanish); **`strikebot run` itself** is started on it with only that platform on (e-mail to
the aiosmtpd sink, texts to the fake Twilio, each in a process of its own), paced by a copy
of the shipped campaign file with `[delivery] email_per_second` / `sms_per_second` set to
`--email-rate` / `--sms-rate` and the in-flight setting left automatic, or set with
`--in-flight` (e.g. 4, the old default). One urgent update is written by this process, as
`strikebot post` from a shell would, and queues one delivery per person. The rate is what
arrives at the fake in `--seconds` after the first `--warmup` seconds of arrivals (or until
the queue is empty), ÷ the configured pace, beside `strikebot run`'s CPU per message over
the same window. The last line per case is machine-readable.

    .venv/bin/python -m bench.pace [--queued 10000 100000] [--platforms email sms]
                                   [--email-rate 200] [--sms-rate 100] [--in-flight N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.mail import (  # noqa: E402
    SENDER,
    Fake,
    add_people,
    cpu_seconds,
    draft,
    free_port,
    start_run,
    stop_run,
)
from bot.clock import utcnow  # noqa: E402
from bot.config import load_config  # noqa: E402
from bot.editorial.admin import Admin  # noqa: E402
from bot.plugins.admins import CLI_ACTOR  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402
from tests.fakes.twilio import ACCOUNT_SID, AUTH_TOKEN, FROM  # noqa: E402


def campaign_file(tmp: Path, platform: str, rate: float, in_flight: int | None) -> Path:
    """The shipped campaign file with the platform's pace asked for."""
    key = f"{platform}_per_second"
    setting = "email_connections" if platform == "email" else "sms_in_flight"
    lines = []
    for line in (ROOT / "config" / "strike.toml").read_text().splitlines():
        if line.startswith(key):
            line = f"{key} = {rate:g}"
            if in_flight is not None:
                line += f"\n{setting} = {in_flight}"
        lines.append(line)
    path = tmp / "strike.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


async def one(
    platform: str, queued: int, rate: float, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    db = f"sqlite+aiosqlite:///{tmp / 'run.db'}"
    config_path = campaign_file(tmp, platform, rate, args.in_flight)
    config = load_config(config_path)
    async with Store.open(db) as store:
        await apply_seed(store, config, utcnow)
        await add_people(store, queued, platform)
    module = "bench._smtp_sink" if platform == "email" else "bench._twilio_sink"
    async with Fake(module) as fake:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "DISCORD_"))}
        env = {k: v for k, v in env.items() if not k.startswith(("SLACK_", "TELEGRAM_", "TWILIO_"))}
        env |= {
            "STRIKEBOT_DATABASE_URL": db,
            "STRIKEBOT_CONFIG": str(config_path),
            "STRIKEBOT_HTTP_PORT": str(port),
            "STRIKEBOT_CONSOLE": "off",
        }
        if platform == "email":
            env |= {
                "STRIKEBOT_SMTP_URL": f"smtp://127.0.0.1:{fake.where}?tls=off",
                "STRIKEBOT_MAIL_FROM": SENDER,
            }
        else:
            env |= {
                "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
                "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
                "TWILIO_FROM": FROM,
                "TWILIO_API_BASE": fake.where,
            }
        log_path = tmp / "run.log"
        proc = await start_run(env, tmp, port)
        try:
            await asyncio.sleep(args.settle)
            await fake.ask("reset")
            async with Store.open(db, migrate=False) as store:
                admin = Admin(store, config.to_campaign(), config.to_admins(), utcnow)
                posted = time.perf_counter()
                await admin.post(CLI_ACTOR, draft())
                planned = time.perf_counter() - posted
            start_at = start_count = start_cpu = None
            delivered, last, still_since = 0, -1, time.perf_counter()
            while True:
                await asyncio.sleep(0.1)
                delivered = (await fake.ask("stats"))["messages"]
                now = time.perf_counter()
                if delivered and start_at is None:
                    # The window opens after the warm-up (a fifth of a small queue's time).
                    start_at = now + min(args.warmup, 0.2 * queued / rate)
                if start_count is None and start_at is not None and now >= start_at:
                    start_at, start_count, start_cpu = now, delivered, cpu_seconds(proc.pid)
                if delivered != last:
                    last, still_since = delivered, now
                elif now - still_since > 30:
                    print(f"  stopped: nothing arrived for 30 s ({delivered} of {queued})")
                    break
                opened = start_at is not None and start_count is not None
                if opened and (now - (start_at or now) >= args.seconds or delivered >= queued):
                    break
            end_at, end_count = time.perf_counter(), delivered
            cpu = cpu_seconds(proc.pid) - (start_cpu or 0.0)
        except BaseException:
            print(log_path.read_text()[-3000:], file=sys.stderr)
            raise
        finally:
            await stop_run(proc, 60)
        stats = await fake.ask("stats")
    said = []
    for line in log_path.read_text().splitlines():
        if "a second only while" in line or "sends at most" in line:
            with contextlib.suppress(ValueError):
                line = json.loads(line).get("message", line)
            said.append(line)
    measured = (end_count - (start_count or 0)) / max(end_at - (start_at or end_at), 1e-9)
    return {
        "platform": platform,
        "queued": queued,
        "rate": rate,
        "per_second": measured,
        "ratio": measured / rate,
        "window": end_at - (start_at or end_at),
        "window_messages": end_count - (start_count or 0),
        "cpu_ms": cpu * 1000 / max(end_count - (start_count or 0), 1),
        "messages": stats["messages"],
        "distinct": stats["distinct_ids"],
        "planned_s": planned,
        "said": said,
    }


async def run(args: argparse.Namespace) -> None:
    setting = "automatic" if args.in_flight is None else str(args.in_flight)
    print(
        f"strikebot run at the configured pace: e-mail {args.email_rate:g}/s, texts "
        f"{args.sms_rate:g}/s, in flight {setting}; load average {os.getloadavg()[0]:.1f}"
    )
    for queued in args.queued:
        for platform in args.platforms:
            rate = args.email_rate if platform == "email" else args.sms_rate
            with tempfile.TemporaryDirectory(prefix="strikebot-pace-") as name:
                r = await one(platform, queued, rate, args, Path(name))
            once = r["messages"] == r["distinct"]
            print(
                f"  {platform:5} {queued:>7,} queued: {r['per_second']:7.1f}/s of "
                f"{rate:g}/s = {r['ratio']:.3f} ({r['window_messages']:,} in {r['window']:.1f} s; "
                f"{r['cpu_ms']:.2f} ms CPU each; queued in {r['planned_s']:.1f} s; "
                f"{'each once' if once else 'DUPLICATES'})"
            )
            for line in r["said"]:
                print(f"        said: {line}")
            print(
                f"pace platform={platform} queued={queued} rate={rate:g} "
                f"per_second={r['per_second']:.1f} ratio={r['ratio']:.3f} "
                f"cpu_ms={r['cpu_ms']:.2f} in_flight={setting} "
                f"once={'yes' if once else 'no'} load={os.getloadavg()[0]:.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--platforms", nargs="+", default=["email", "sms"])
    parser.add_argument("--email-rate", type=float, default=200.0)
    parser.add_argument("--sms-rate", type=float, default=100.0)
    parser.add_argument("--in-flight", type=int, default=None, help="0 or unset: automatic")
    parser.add_argument("--seconds", type=float, default=20.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before it opens")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds after start-up")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
