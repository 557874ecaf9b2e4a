"""Commands that start fast (issue 31): `strikebot --help` lists every command without
importing one, and a command imports only what it uses.

Each check runs the command in a fresh interpreter and reads `sys.modules` afterwards; the
timings themselves are `bench/startup.py`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import bot.cli
from bot.cli import ALIASES, COMMANDS, _command_in
from bot.plugins import installed_plugins

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config" / "strike.toml"

# Libraries no help text needs, and platform libraries no command of the core needs.
PLATFORMS = ("discord", "slack_bolt", "slack_sdk", "aiosmtplib", "twilio", "nacl", "telegram")
NOT_FOR_HELP = ("sqlalchemy", "aiohttp", "alembic", "jinja2", "aiosqlite", "bot.store", *PLATFORMS)
NOT_FOR_STATUS = (
    "aiohttp",
    "alembic",  # the database is at the newest migration: one read says so
    "sqlalchemy.dialects.postgresql",  # the database is SQLite
    "rich.table",  # status prints lines, not a table
    "babel.messages",  # the catalogues are read back compiled, not parsed
    "jinja2",
    "adapters.web._app",
    "bot.editorial",  # status reads and prints: no rule for people's text, no message
    "bot.messages.compose",
    "bot.plugins.outbound",
    *PLATFORMS,
)

PROBE = """
import json, sys
from bot.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def command(probe: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`strikebot --config <shipped> ARGV` run by `probe` in its own interpreter, on a
    SQLite file in `cwd`, no platform switched on."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_SECRET"))}
    env.pop("STRIKEBOT_SMTP_URL", None)
    env["STRIKEBOT_DATABASE_URL"] = f"sqlite+aiosqlite:///{cwd / 'start.db'}"
    return subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", probe, "--config", str(CONFIG), *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def loaded_by(*argv: str, cwd: Path) -> set[str]:
    done = command(PROBE, *argv, cwd=cwd)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def top_level(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules)


def test_help_imports_no_command_no_store_and_no_platform(tmp_path: Path) -> None:
    loaded = loaded_by("--help", cwd=tmp_path)
    assert top_level(loaded, NOT_FOR_HELP) == []
    commands = {m for m in loaded if m.startswith("bot.cli.") and m != "bot.cli._shared"}
    assert commands == set(), "listing the commands imported their modules"
    assert not {m for m in loaded if m.startswith("adapters.") and m.endswith(".cli")}


def test_status_imports_only_what_it_uses(tmp_path: Path) -> None:
    loaded_by("status", cwd=tmp_path)  # the first run makes and migrates the database
    loaded = loaded_by("status", cwd=tmp_path)
    assert top_level(loaded, NOT_FOR_STATUS) == []
    assert "sqlalchemy" in loaded and "bot.cli.status" in loaded
    others = {m for m in loaded if m.startswith("bot.cli.") and m != "bot.cli._shared"}
    assert others == {"bot.cli.status"}
    # Each plugin's declaration, and nothing it names (models, adapters, previews).
    parts = {m for m in loaded if m.startswith("adapters.") and m.rsplit(".", 1)[1][0] == "_"}
    assert {m.rsplit(".", 1)[1] for m in parts} == {"_plugin"}, sorted(parts)


def test_a_plugins_command_loads_its_own_module_only_when_it_runs(tmp_path: Path) -> None:
    loaded = loaded_by("publish", "--help", cwd=tmp_path)
    assert "adapters.web.cli" in loaded
    assert "adapters.discord.cli" not in loaded and "adapters.webhooks.cli" not in loaded


def registered(where: str) -> dict[str, tuple[str | None, list[str]]]:
    """What `where`'s register adds: {name: (help, aliases)}."""
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    module, _, function = where.partition(":")
    getattr(__import__(module, fromlist=["_"]), function or "register")(sub)
    aliases: dict[str, list[str]] = {}
    for name, choice in sub.choices.items():
        aliases.setdefault(choice.prog.split()[-1], []).append(name)
    return {
        action.dest: (action.help, [a for a in aliases[action.dest] if a != action.dest])
        for action in sub._choices_actions
    }


def test_the_command_list_says_what_each_module_registers() -> None:
    modules = {
        f"bot.cli.{m.name}"
        for m in pkgutil.iter_modules(bot.cli.__path__)
        if not m.ispkg and not m.name.startswith("_")
    }
    modules = {m for m in modules if registered(m)}  # progress.py registers nothing
    listed = {name: (module, text) for name, module, text in COMMANDS}
    assert {module for module, _ in listed.values()} == modules, (
        "bot/cli/__init__.py: list every command module's commands in COMMANDS"
    )
    for module in modules:
        found = registered(module)
        mine = {n: t for n, (m, t) in listed.items() if m == module}
        assert {n: h for n, (h, _) in found.items()} == mine, module
        for name, (_, aliases) in found.items():
            assert list(ALIASES.get(name, ())) == aliases, name
    # In the order `strikebot --help` always listed them: by module, then as registered.
    order = [name for name, _, _ in COMMANDS]
    assert order == [n for m in sorted(modules) for n in registered(m)]


def test_every_plugin_command_is_declared_as_its_register_says() -> None:
    for plugin in installed_plugins().values():
        assert plugin.cli is None, f"{plugin.name}: declare its commands in `commands`"
        for command in plugin.commands:
            found = registered(command.register)
            assert found == {command.name: (command.help, list(command.aliases))}


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["status"], "status"),
        (["--config", "x.toml", "status", "--json"], "status"),
        (["--conf", "x.toml", "timeline"], "timeline"),  # argparse's abbreviations
        (["--config=x.toml", "subs", "list"], "subs"),
        (["--now", "2019-01-17T12:00-08:00", "post"], "post"),
        (["--help"], None),
        ([], None),
    ],
)
def test_the_command_is_found_before_parsing(argv: list[str], command: str | None) -> None:
    assert _command_in(argv) == command


def test_a_command_not_loaded_is_still_parsed_in_full_when_chosen() -> None:
    """Should argparse choose a command other than the one `_command_in` found, it meets
    that command's stand-in, which makes `main` read the line again with every command."""
    args = bot.cli.build_parser(["status"]).parse_args(["post", "--dry-run"])
    assert args.handler is None and args.rest == ["--dry-run"]
    assert bot.cli.build_parser().parse_args(["post", "--dry-run", "--headline", "x"]).dry_run


def test_an_unknown_command_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bot.cli.build_parser(["bogus"]).parse_args(["bogus"])
    assert "'bogus' is not a command of `strikebot`" in capsys.readouterr().err


def test_the_newest_migration_is_known_without_alembic() -> None:
    from alembic.script import ScriptDirectory

    from bot.store.engine import alembic_config, head_revision

    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_a_postgresql_database_gets_the_partial_indexes_conditions() -> None:
    """On SQLite the PostgreSQL dialect never loads; opening a PostgreSQL database gives
    the schema's partial indexes their condition there too (what the migrations create)."""
    from sqlalchemy.schema import CreateIndex

    from bot.store import schema
    from bot.store.engine import create_engine

    engine = create_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")  # no connection yet
    partial = [i for table in schema.metadata.tables.values() for i in table.indexes if i.info]
    assert len(partial) == 4
    for index in partial:
        ddl = str(CreateIndex(index).compile(dialect=engine.dialect))
        assert ddl.endswith(f" WHERE {index.info['where']}"), ddl


def test_the_compiled_catalogues_are_read_back_not_parsed_again() -> None:
    """Parsing and compiling the catalogues cost every command ~0.1 s; they are kept
    compiled, by a digest of the files, and parsed only when a translator's tool asks."""
    from bot import i18n

    try:
        i18n.reload()
        first = i18n.catalogues()  # parses, and keeps them compiled, unless kept already
        i18n.reload()
        again = i18n.catalogues()
        assert again.parsed is None  # read back compiled
        assert again.source_texts == first.source_texts and again.languages == first.languages
        for code in again.languages[1:]:
            assert again.compiled[code].gettext("x") == "x"
        assert str(again.template.locale) == again.source  # parsed on demand
    finally:
        i18n.reload()


ENTRY_PROBE = """
import atexit, gc, runpy, sys
atexit.register(lambda: sys.stderr.write(f"\\nFROZEN {gc.get_freeze_count()}\\n"))
runpy.run_module("bot.cli", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(
    ("argv", "code"),
    [(["status", "--json"], 0), (["status", "--language", "xx"], 2), (["--help"], 0)],
)
def test_the_command_exits_with_its_code_and_all_its_output_and_skips_the_last_walks(
    tmp_path: Path, argv: list[str], code: int
) -> None:
    """`strikebot` (the console script and `python -m bot.cli` both call `entry`) freezes
    the collector before exiting: the interpreter's teardown then walks none of the
    imports' objects (docs/cli.md); what the command printed is all there."""
    done = command(ENTRY_PROBE, *argv, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    frozen = next(x for x in done.stderr.splitlines() if x.startswith("FROZEN "))
    assert int(frozen.removeprefix("FROZEN ")) > 10_000  # the imports' objects
    if argv == ["--help"]:
        assert "status" in done.stdout
    elif code == 0:
        assert json.loads(done.stdout)["campaign"]
    else:
        assert "error:" in done.stderr
