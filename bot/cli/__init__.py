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
from typing import Any, cast

from rich.console import Console
from rich.markup import escape

from bot.cli._shared import moment_type
from bot.clock import Clock, shifted_clock
from bot.config import Settings, StrikeConfig, load_config
from bot.editorial.admin import Admin
from bot.editorial.desk import Desk
from bot.editorial.reach import cost_sections
from bot.errors import StrikebotError
from bot.plugins import installed_plugins
from bot.runtime.context import PluginContext, plugin_context
from bot.runtime.logging import configure_logging
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

    @property
    def desk(self) -> Desk:
        """The editorial desk the admin commands go through (`bot.editorial.desk`)."""
        plugins = installed_plugins()
        return Desk(
            self.store,
            self.admin,
            plugins=plugins,
            cost_sections=cost_sections(self.config, plugins),
            clock=self.clock,
        )


@asynccontextmanager
async def open_context(
    args: argparse.Namespace, *, seed: bool = True, clock: Clock | None = None
) -> AsyncIterator[CliContext]:
    """Load settings and config, open (and migrate) the store, seed the campaign. The clock
    is real time, or the replayed time of `strikebot --now TIME COMMAND`."""
    from bot.runtime.seed import apply_seed

    if clock is None:
        clock = shifted_clock(getattr(args, "clock_now", None))

    settings = Settings.from_env()
    config_path = args.config or settings.config_path
    config = load_config(config_path)
    database_url = args.database_url or settings.database_url
    async with Store.open(database_url) as store:
        if seed:
            await apply_seed(store, config, clock)
        admin = Admin(store, config.to_campaign(), config.to_admins(), clock)
        yield CliContext(settings, config, store, admin, clock)


@asynccontextmanager
async def open_plugin(
    args: argparse.Namespace,
    name: str,
    *,
    clock: Clock | None = None,
    log_level: int | None = None,
) -> AsyncIterator[PluginContext]:
    """The running core as plugin `name`'s own command sees it (`strikebot webhooks add`,
    `strikebot publish`): the store opened and seeded, and the plugin's context, built as
    `strikebot run` builds it. With `log_level`, log records (secrets redacted) go to
    stderr from that level."""
    async with open_context(args, clock=clock) as ctx:
        if log_level is not None:
            configure_logging(ctx.settings, level=log_level)
        yield plugin_context(
            installed_plugins()[name],
            ctx.settings,
            ctx.config,
            store=ctx.store,
            admin=ctx.admin,
            clock=ctx.clock,
        )


def print_json(data: Any) -> None:
    """Machine-readable output: one JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def build_parser() -> argparse.ArgumentParser:
    from bot.cli._shared import Parser

    parser = Parser(
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
    # Subcommands are `Parser`s too (argparse makes them of the parent's class).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND"),
    )
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
    from bot.cli._shared import language_flags, option_strings

    given = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(language_flags(given, option_strings(parser)))
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
