"""The `strikebot` command.

Each subcommand lives in its own module, `bot/cli/<name>.py`, defining `register(subparsers)`,
and is listed in `COMMANDS` with its one-line help, so that `strikebot --help` lists every
command without importing any, and a command imports only its own module and what that
uses. Platform plugins add theirs through `Plugin.commands` (see `bot.plugins.Command`),
declared the same way. Every command that prints data takes `--json`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

from rich.console import Console
from rich.markup import escape

from bot.cli._shared import moment_type
from bot.clock import Clock
from bot.errors import StrikebotError
from bot.plugins import installed_plugins

if TYPE_CHECKING:
    from bot.config import Settings, StrikeConfig
    from bot.editorial.admin import Admin
    from bot.editorial.desk import Desk
    from bot.runtime.context import PluginContext
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
    built_admin: Admin | None  # made when a command first asks for `admin`
    clock: Clock

    @property
    def admin(self) -> Admin:
        """The admin use cases (loaded only by the commands that use them)."""
        if self.built_admin is None:
            from bot.editorial.admin import Admin

            self.built_admin = Admin(
                self.store, self.config.to_campaign(), self.config.to_admins(), self.clock
            )
        return self.built_admin

    @property
    def desk(self) -> Desk:
        """The editorial desk the admin commands go through (`bot.editorial.desk`)."""
        from bot.editorial.desk import Desk
        from bot.editorial.reach import cost_sections, paces

        plugins = installed_plugins()
        return Desk(
            self.store,
            self.admin,
            plugins=plugins,
            cost_sections=cost_sections(self.config, plugins),
            clock=self.clock,
            paces=paces(self.config, plugins),
        )


@asynccontextmanager
async def open_context(
    args: argparse.Namespace,
    *,
    seed: bool = True,
    clock: Clock | None = None,
    platforms: bool = True,
) -> AsyncIterator[CliContext]:
    """Load settings and config, open (and migrate) the store, seed the campaign. The clock
    is real time, the replayed time of `strikebot --now TIME COMMAND`, or a demo campaign
    file's (`bot.runtime.demo`: its story's week, unless `--real-time`). `platforms=False`
    (a command that uses none) checks a platform's campaign-file tables only if used."""
    # Imported here, not above: `strikebot --help` and commands that open no store load none
    # of the store, SQLAlchemy or the campaign file's reader.
    from bot.config import Settings, load_config
    from bot.runtime.demo import campaign_clock
    from bot.runtime.seed import apply_seed
    from bot.store import Store

    settings = Settings.from_env()
    config_path = args.config or settings.config_path
    config = load_config(config_path, platforms=platforms)
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
        yield CliContext(settings, config, store, None, clock)


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
    from bot.runtime.context import plugin_context
    from bot.runtime.logging import configure_logging

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


# Every core command: (name, module, the line `strikebot --help` shows). A module may hold
# several commands; each is registered by its module's `register`, whose help must match
# (tests/test_cli_start.py checks both ways).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("audit", "bot.cli.audit", "who did what and when (every admin action, newest first)"),
    ("briefing", "bot.cli.briefing", "morning briefings: set, clear, list, preview, send-now"),
    ("db", "bot.cli.db", "database maintenance (db upgrade)"),
    (
        "deliveries",
        "bot.cli.deliveries",
        "list deliveries (dead ones with their reasons); `deliveries retry` re-queues",
    ),
    (
        "demands",
        "bot.cli.demands",
        "what the union is asking for, and the employer's current offer",
    ),
    (
        "demand",
        "bot.cli.demands",
        "show one demand, or record a new offer or status (demand show|set)",
    ),
    (
        "doctor",
        "bot.cli.doctor",
        "check each platform's state, every subscribed channel, the campaign file against "
        "the database and the catalogues, and say how to fix each problem",
    ),
    ("init", "bot.cli.init", "start a new campaign: write a campaign file and an empty database"),
    (
        "run",
        "bot.cli.run",
        "serve the status page and API, connect the platforms switched on, deliver",
    ),
    (
        "sites",
        "bot.cli.sites",
        "the campaign's sites and their groups: import a CSV file, list them",
    ),
    (
        "status",
        "bot.cli.status",
        "the campaign at a glance: status, day of the strike, next step, what is pending",
    ),
    ("timeline", "bot.cli.status", "recent updates, newest first"),
    (
        "subscribers",
        "bot.cli.subscribers",
        "people signed up for e-mail and texts: stats, export or delete one person's data",
    ),
    (
        "subscriptions",
        "bot.cli.subscriptions",
        "channels that receive updates and briefings (list|add|remove)",
    ),
    ("export", "bot.cli.transfer", "write the whole campaign to a JSON file (a lossless backup)"),
    ("import", "bot.cli.transfer", "restore a campaign from a file written by `strikebot export`"),
    (
        "translations",
        "bot.cli.translations",
        "translators' workflow: report what is missing or stale, export, import, confirm",
    ),
    (
        "post",
        "bot.cli.updates",
        "post an update to every subscribed channel (now or at a set time)",
    ),
    ("edit", "bot.cli.updates", "edit an update in place, keeping the previous text as a revision"),
    (
        "retract",
        "bot.cli.updates",
        "retract an update: it stays visible as retracted, with your reason",
    ),
    ("approve", "bot.cli.updates", "approve an update waiting for a second admin"),
    ("show", "bot.cli.updates", "show one update: every language, its revisions and where it went"),
)

# Other names of core commands, as their modules register them.
ALIASES: dict[str, tuple[str, ...]] = {"subscriptions": ("subs",)}

# The top-level options that take a value (so the word after one is not a command).
_VALUED = ("--config", "--database-url", "--now")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `strikebot` parser. Given the command line, only the command it names is imported
    (every other is listed by name and help alone); without one, every command is."""
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
    parser.add_argument(
        "--real-time",
        action="store_true",
        help="a demo campaign file ([demo] in it) runs on its story's clock; this keeps the "
        "real time instead",
    )
    # Subcommands are `Parser`s too (argparse makes them of the parent's class).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND"),
    )
    sub.required = True
    plugins = installed_plugins().values()
    listed = [(name, module, text, ALIASES.get(name, ())) for name, module, text in COMMANDS]
    listed += [(c.name, c.register, c.help, c.aliases) for p in plugins for c in p.commands]
    wanted = None if argv is None else _command_in(argv)
    chosen = {
        where
        for name, where, _, aliases in listed
        if argv is None or wanted == name or wanted in aliases
    }
    registered: set[str] = set()
    for name, where, text, aliases in listed:
        if where not in chosen:
            _stub(sub, name, text, aliases)
        elif where not in registered:
            registered.add(where)
            _register(where, sub)
    for plugin in plugins:
        if plugin.cli is not None:  # a plugin declaring its commands the older, slower way
            plugin.cli(sub)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option or an option's value)."""
    value_next = False
    for word in argv:
        if value_next:
            value_next = False
        elif word.startswith("-"):
            value_next = "=" not in word and any(o.startswith(word) for o in _VALUED if word != "-")
        else:
            return word
    return None


def _register(where: str, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Import a command's module (`module`, or `module:function` for a plugin's) and let it
    add its commands."""
    module, _, function = where.partition(":")
    getattr(importlib.import_module(module), function or "register")(sub)


def _stub(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    text: str,
    aliases: Sequence[str],
) -> None:
    """A command listed by its name and help without importing it. Chosen only when the
    command line was not read as `build_parser` expected; then every command is loaded."""
    stub = sub.add_parser(name, help=text, aliases=list(aliases), add_help=False, prefix_chars="+")
    stub.add_argument("rest", nargs=argparse.REMAINDER)
    stub.set_defaults(handler=None)


def main(argv: Sequence[str] | None = None) -> int:
    from bot.cli._shared import language_flags, option_strings

    given = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(given)  # may load plugins, which may refuse
        args = parser.parse_args(language_flags(given, option_strings(parser)))
        if args.handler is None:  # a stub: read the line again with every command loaded
            parser = build_parser()
            args = parser.parse_args(language_flags(given, option_strings(parser)))
    except StrikebotError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return exc.exit_code
    import asyncio

    handler: Handler = args.handler
    try:
        return asyncio.run(handler(args))
    except StrikebotError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def entry() -> NoReturn:
    """The `strikebot` command: `main`, then an exit that spares the interpreter's last
    garbage collections a walk over every object the imports made (docs/cli.md)."""
    try:
        code = main()
    finally:  # also when argparse exits (`--help`, a usage error)
        gc.freeze()
    raise SystemExit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
