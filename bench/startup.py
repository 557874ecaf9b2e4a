"""How long commands take to start: `strikebot --help` and `strikebot status` against the
import floor, `python -c "import sqlalchemy, aiohttp"`, in the same run.

Each command runs as its own process (the console script in the venv, as a person types
it), `--rounds` times, the commands interleaved round by round so that the machine's load
from other work falls on all of them alike. `status` reads a temporary SQLite file made
(and migrated, and seeded with the shipped campaign) by one `strikebot status` before the
rounds. Printed per command: the median wall time, its spread (lowest–highest) and the
median's ratio to the floor's median (issue 31: at most 1.5). `python -c pass` and the
libraries `status` needs (`LIBRARIES`), a minimal `status` on them alone
(`MINIMAL_STATUS`) and the floor exiting as `strikebot` does (`FROZEN_FLOOR`) are printed
too, for scale. The last line is
machine-readable.

    .venv/bin/python -m bench.startup [--rounds 15]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# What `strikebot status` cannot start without, none of it ours: the store's asyncio
# engine (which brings SQLAlchemy's ORM) and SQLite's dialect (the database is SQLite:
# PostgreSQL's never loads), pydantic-settings, rich's console (status prints no table),
# and Babel with its CLDR data for one date. A peer for scale: what is left above it is
# ours (tests/test_cli_start.py checks that status loads none of what this leaves out).
LIBRARIES = (
    "import sqlalchemy.ext.asyncio, sqlalchemy.dialects.sqlite.aiosqlite, aiosqlite,"
    " pydantic_settings, rich.console, babel.dates, babel.support;"
    " babel.Locale.parse('en').datetime_formats"
)

# A peer of `status` written against those libraries alone, in the fewest lines: read the
# environment (pydantic-settings) and the campaign file, open the SQLite file, one count,
# one date by Babel, one line by rich. What any `status` on these libraries costs at least.
MINIMAL_STATUS = """
import asyncio, tomllib
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine
from pydantic_settings import BaseSettings, SettingsConfigDict
from rich.console import Console
import babel.dates
class S(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="STRIKEBOT_")
    database_url: str
    config: str
s = S()
with open(s.config, "rb") as f:
    campaign = tomllib.load(f)["campaign"]
async def main():
    engine = create_async_engine(s.database_url)
    async with engine.connect() as conn:
        n = await conn.scalar(sa.text("SELECT count(*) FROM updates"))
    await engine.dispose()
    when = babel.dates.format_datetime(locale="en")
    Console().print(f"[bold]{campaign['union']}[/]: {n} updates, {when}")
asyncio.run(main())
"""


# The floor exiting as `strikebot` does (`bot.cli.entry`): the collector frozen, so that the
# interpreter's teardown walks none of the imports' objects. For scale: how much of a
# command's lead over the floor is that exit (the target is against the plain floor).
FROZEN_FLOOR = "import sqlalchemy, aiohttp, gc; gc.freeze()"


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True)  # noqa: S603 - ours
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    strikebot = str(BIN / "strikebot")
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="strikebot-startup-") as where:
        cwd = Path(where)
        env = {
            **os.environ,
            "STRIKEBOT_CONFIG": str(ROOT / "config" / "strike.toml"),
            "STRIKEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{cwd / 'bench.db'}",
        }
        for name in list(env):
            if name.endswith(("_TOKEN", "_SECRET")) or name.startswith("STRIKEBOT_SMTP"):
                del env[name]  # no platform switched on
        commands = {
            "python -c pass": [python, "-c", "pass"],
            "import floor": [python, "-c", "import sqlalchemy, aiohttp"],
            "floor, frozen at exit": [python, "-c", FROZEN_FLOOR],
            "status's libraries": [python, "-c", LIBRARIES],
            "a minimal status": [python, "-c", MINIMAL_STATUS],
            "strikebot --help": [strikebot, "--help"],
            "strikebot status": [strikebot, "status"],
        }
        # Cached bytecode, as an ordinary install has after its first run: this machine (and
        # some CI machines) set PYTHONDONTWRITEBYTECODE, which would have every command
        # compile the project's modules from source (0.2-0.4 s), as `make test` notes too.
        for package in ("bot", "adapters"):
            compileall.compile_dir(ROOT / package, quiet=1)
        timed(commands["strikebot status"], env, cwd)  # makes, migrates and seeds the file
        for command in commands.values():
            timed(command, env, cwd)  # warm the file cache and the bytecode
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, command in commands.items():
                times[name].append(timed(command, env, cwd))
    floor = statistics.median(times["import floor"])
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}")
    ratios = {}
    for name, values in times.items():
        median = statistics.median(values)
        ratios[name] = median / floor
        print(
            f"  {name:22} median {median * 1000:6.0f} ms  "
            f"({min(values) * 1000:.0f}–{max(values) * 1000:.0f})  ÷ floor {ratios[name]:.2f}"
        )
    print(
        f"startup help_ms={statistics.median(times['strikebot --help']) * 1000:.0f} "
        f"status_ms={statistics.median(times['strikebot status']) * 1000:.0f} "
        f"floor_ms={floor * 1000:.0f} help_ratio={ratios['strikebot --help']:.2f} "
        f"status_ratio={ratios['strikebot status']:.2f} "
        f"minimal_ratio={ratios['a minimal status']:.2f} "
        f"frozen_floor_ratio={ratios['floor, frozen at exit']:.2f} load={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
