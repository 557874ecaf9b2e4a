"""The `strikebot` command.

Each subcommand lives in its own module, `bot/cli/<name>.py`, defining `register(subparsers)`;
modules are discovered, so a feature adds its commands without touching this file. Platform
plugins add theirs through `Plugin.cli` (see `bot.plugins`). Every command that prints data
takes `--json`.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import pkgutil
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from bot.cli._shared import moment_type
from bot.clock import Clock
from bot.config import Settings, StrikeConfig, load_config
from bot.editorial.admin import Admin
from bot.errors import StrikebotError
from bot.plugins import installed_plugins
from bot.store import Store

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

# rich writes tables and progress to stderr-free stdout; errors go to stderr.
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass(slots=True)
class CliContext:
    """What a command handler gets: settings, config, an open store and the use cases."""

    settings: Settings
    config: StrikeConfig
    store: Store
    admin: Admin
    clock: Clock


@asynccontextmanager
async def open_context(
    args: argparse.Namespace, *, seed: bool = True, clock: Clock | None = None
) -> AsyncIterator[CliContext]:
    """Load settings and config, open (and migrate) the store, seed the campaign. The clock
    is real time, the replayed time of `strikebot --now TIME COMMAND`, or a demo campaign
    file's (`bot.runtime.demo`: its story's week, unless `--real-time`)."""
    from bot.runtime.demo import campaign_clock
    from bot.runtime.seed import apply_seed

    settings = Settings.from_env()
    config_path = args.config or settings.config_path
    config = load_config(config_path)
    database_url = args.database_url or settings.database_url
    async with Store.open(database_url) as store:
        if clock is None:
            clock, _ = await campaign_clock(
                config,
                store,
                now=getattr(args, "clock_now", None),
                real_time=getattr(args, "real_time", False),
            )
        if seed:
            await apply_seed(store, config, clock)
        admin = Admin(store, config.to_campaign(), config.to_admins(), clock)
        yield CliContext(settings, config, store, admin, clock)


def print_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="strikebot",
        description="Keep members, parents and supporters informed during a strike.",
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="campaign file (default: $STRIKEBOT_CONFIG or config/strike.toml)",
    )
    parser.add_argument(
        "--database-url", help="database URL (default: $STRIKEBOT_DATABASE_URL or SQLite in ./data)"
    )
    parser.add_argument(
        "--now",
        dest="clock_now",
        metavar="TIME",
        type=moment_type,
        help="replay: every time this command records or compares reads TIME, e.g. to "
        "subscribe a channel during `strikebot run --now` (ISO 8601 with offset, "
        "e.g. 2019-01-17T12:00-08:00)",
    )
    parser.add_argument(
        "--real-time",
        action="store_true",
        help="a demo campaign file ([demo] in it) runs on its story's clock; this keeps the "
        "real time instead",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
        module.register(sub)
    for plugin in installed_plugins().values():
        if plugin.cli is not None:
            plugin.cli(sub)
    return parser


def _command_modules() -> list[Any]:
    import bot.cli

    names = sorted(
        f"bot.cli.{m.name}"
        for m in pkgutil.iter_modules(bot.cli.__path__)
        if not m.ispkg and not m.name.startswith("_")
    )
    return [importlib.import_module(name) for name in names]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = build_parser()  # loads the installed plugins, which may refuse to load
    except StrikebotError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return exc.exit_code
    from bot.cli._shared import language_flags

    args = parser.parse_args(language_flags(sys.argv[1:] if argv is None else argv))
    handler: Handler = args.handler
    try:
        return asyncio.run(handler(args))
    except StrikebotError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
