"""The static site: `strikebot publish` at a store of `--updates` published updates, then
again after each of `--posts` new posts (`strikebot post`), each command timed as its own
process, as an operator or `[web] publish_dir` runs it.

A temporary SQLite file holds the shipped campaign and the updates, bulk-inserted over the
past year (`bench._latency.fill`). Printed for each publish: wall time, CPU of the process
(user + system, from `wait4`), files written and the site's size; the last line is
machine-readable: the first (full) publish and the median re-publish after one post.

    .venv/bin/python -m bench.publish [--updates 1000] [--posts 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._latency import fill  # noqa: E402
from bot.clock import utcnow  # noqa: E402
from bot.config import load_config  # noqa: E402
from bot.runtime.seed import apply_seed  # noqa: E402
from bot.store import Store  # noqa: E402

STRIKEBOT = str(Path(sys.executable).parent / "strikebot")


def run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own console script
        [STRIKEBOT, *args], env=env, cwd=cwd, capture_output=True, text=True
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"strikebot {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def site_size(directory: Path) -> tuple[int, int]:
    files = size = 0
    for path in directory.resolve().rglob("*"):
        if path.is_file():
            files += 1
            size += path.stat().st_size
    return files, size


async def prepare(database_url: str, updates: int) -> float:
    config = load_config(ROOT / "config" / "strike.toml")
    async with Store.open(database_url) as store:
        await apply_seed(store, config, utcnow)
        return await fill(store, updates)


def publish(env: dict[str, str], cwd: Path) -> dict[str, float]:
    wall, cpu, out = run(["publish", "site", "--json"], env, cwd)
    result = json.loads(out)
    return {
        "wall": wall,
        "cpu": cpu,
        "written": float(result.get("written", result["files"])),
        "files": float(result["files"]),
        "full": float(bool(result.get("full", True))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--posts", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="copy the site here at the end")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="strikebot-publish-") as name:
        tmp = Path(name)
        database_url = f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
        filled = asyncio.run(prepare(database_url, args.updates))
        env = {k: v for k, v in os.environ.items() if not k.startswith("STRIKEBOT_")}
        env |= {
            "STRIKEBOT_DATABASE_URL": database_url,
            "STRIKEBOT_CONFIG": str(ROOT / "config" / "strike.toml"),
        }
        print(
            f"{args.updates:,} published updates (filled in {filled:.1f} s); load average "
            f"{os.getloadavg()[0]:.1f}"
        )
        first = publish(env, tmp)
        files, size = site_size(tmp / "site")
        print(
            f"  publish           {first['wall']:7.2f} s  CPU {first['cpu']:7.2f} s  "
            f"{first['written']:9,.0f} files written  (site: {files:,} files, "
            f"{size / 1e6:,.1f} MB)"
        )
        again: list[dict[str, float]] = []
        for n in range(args.posts):
            run(["post", "--headline", f"Talks resume, day {n + 1}", "--urgency", "important"],
                env, tmp)  # fmt: skip
            again.append(publish(env, tmp))
            a = again[-1]
            print(
                f"  after post {n + 1}      {a['wall']:7.2f} s  CPU {a['cpu']:7.2f} s  "
                f"{a['written']:9,.0f} files written"
                f"{'  (everything again)' if a['full'] else ''}"
            )
        if args.keep:
            shutil.copytree(tmp / "site", args.keep, symlinks=False, dirs_exist_ok=True)
    repub = statistics.median(a["wall"] for a in again) if again else 0.0
    print(
        f"publish updates={args.updates} full_s={first['wall']:.2f} "
        f"full_files={first['written']:.0f} republish_s={repub:.2f} republish_files="
        f"{statistics.median(a['written'] for a in again) if again else 0:.0f} "
        f"load={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
