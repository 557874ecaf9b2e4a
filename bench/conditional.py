"""What a conditional request costs `strikebot run` against a full answer (issue 31: a
304's CPU at most 0.3 of a 200's), measured from /proc around each batch of requests.

A temporary SQLite file holds the shipped campaign and `--updates` published updates;
**`strikebot run` itself** serves it. The requests are what a CDN in front of it sends for
the long tail: `--pages` different update pages (more than the 256 bodies the server keeps,
so most 200s render), first fetched once to learn their ETags, then asked for again in the
same random order `--rounds` times, once without validators (200s) and once with
`If-None-Match` (304s), alternately. The same for the hot status page `/` (in memory: a
200 and a 304 cost almost the same there). Every request asks for brotli, as browsers and
CDNs do. Printed: CPU per request of each, their ratio, and the load; the last line is
machine-readable.

    .venv/bin/python -m bench.conditional [--updates 10000] [--pages 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.mail import cpu_seconds, free_port  # noqa: E402
from bench.web import fill_store  # noqa: E402

HEADERS = {"Accept-Encoding": "gzip, deflate, br"}


async def batch(
    session: aiohttp.ClientSession, base: str, paths: list[str], tags: dict[str, str] | None
) -> int:
    """Ask for every path (with its ETag when `tags` is given), 8 at a time; the statuses."""
    statuses: list[int] = []
    queue = list(paths)

    async def worker() -> None:
        while queue:
            path = queue.pop()
            headers = dict(HEADERS)
            if tags is not None:
                headers["If-None-Match"] = tags[path]
            async with session.get(base + path, headers=headers) as response:
                await response.read()
                statuses.append(response.status)

    await asyncio.gather(*(worker() for _ in range(8)))
    wanted = 304 if tags is not None else 200
    return sum(s == wanted for s in statuses)


async def measure(args: argparse.Namespace, pid: int, base: str) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"200": [], "304": [], "hot 200": [], "hot 304": []}
    async with aiohttp.ClientSession() as session:
        async with session.get(base + "/api/v1/updates?limit=1", headers=HEADERS) as r:
            newest = (await r.json())["items"][0]["id"]
        pages = [
            f"/updates/{i}"
            for i in random.sample(range(max(1, newest - args.updates), newest + 1), args.pages)
        ]
        tags = {}
        for path in pages:
            async with session.get(base + path, headers=HEADERS) as response:
                await response.read()
                tags[path] = response.headers["ETag"]
        hot = ["/"] * args.pages
        async with session.get(base + "/", headers=HEADERS) as response:
            tags["/"] = response.headers["ETag"]
        for _ in range(args.rounds):
            for name, paths, given in [
                ("200", pages, None),
                ("304", pages, tags),
                ("hot 200", hot, None),
                ("hot 304", hot, tags),
            ]:
                random.shuffle(paths)
                cpu = cpu_seconds(pid)
                right = await batch(session, base, paths, given)
                spent = cpu_seconds(pid) - cpu
                if right != len(paths):
                    raise SystemExit(f"{name}: {len(paths) - right} answers were not {name[-3:]}")
                figures[name].append(spent * 1e6 / len(paths))
    return figures


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="strikebot-conditional-") as name:
        tmp = Path(name)
        db = f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
        config = str(ROOT / "config" / "strike.toml")
        await fill_store(db, config, args.updates)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STRIKEBOT_", "DISCORD_"))}
        env |= {
            "STRIKEBOT_DATABASE_URL": db,
            "STRIKEBOT_CONFIG": config,
            "STRIKEBOT_HTTP_PORT": str(port),
            "STRIKEBOT_CONSOLE": "off",
        }
        proc = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "strikebot"), "run",
            cwd=tmp, env=env, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(1200):
                    try:
                        async with session.get(base + "/healthz") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientError:
                        pass
                    await asyncio.sleep(0.05)
            await asyncio.sleep(args.settle)
            figures = await measure(args, proc.pid, base)
        finally:
            proc.terminate()
            await proc.wait()
    print(
        f"{args.updates:,} updates, {args.pages:,} different update pages asked for "
        f"{args.rounds} times each way; load average {os.getloadavg()[0]:.1f}"
    )
    medians = {k: statistics.median(v) for k, v in figures.items()}
    for key, values in figures.items():
        shown = ", ".join(f"{v:.0f}" for v in values)
        print(f"  {key:8} {medians[key]:7.0f} µs CPU a request   ({shown})")
    tail = medians["304"] / medians["200"]
    hot = medians["hot 304"] / medians["hot 200"]
    print(f"  a 304 ÷ a 200: {tail:.2f} for the long tail (target ≤ 0.3), {hot:.2f} for `/`")
    print(
        f"conditional updates={args.updates} cpu_200_us={medians['200']:.0f} "
        f"cpu_304_us={medians['304']:.0f} ratio={tail:.2f} hot_ratio={hot:.2f} "
        f"load={os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5.0)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
