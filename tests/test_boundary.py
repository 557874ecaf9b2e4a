"""The core names no platform, and a platform is a package pip installs.

The import rules themselves (the core never imports an adapter; adapters use only
`bot.ports` and never each other; no cycles) are import-linter contracts in pyproject.toml,
run by `make test`. These tests check what import-linter cannot see, and the plugin registry.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bot.config import parse_config
from bot.errors import ConfigError, InvalidInput
from bot.plugins import Plugin, installed_plugins
from bot.plugins.addresses import parse_address
from tests.support import ROOT, campaign_config


def test_the_boundary_contract_forbids_every_core_module_but_ports() -> None:
    """import-linter cannot say "bot.* except bot.ports" without ignoring imports, so the
    contract names the core's modules one by one: a module added to the core must be added
    there too, or adapters could import it unseen."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "Adapters use only the core's public boundary, bot.ports"
    )
    core = ROOT / "bot"
    modules = {
        f"bot.{path.stem}"
        for path in core.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__")
        or (path.is_dir() and (path / "__init__.py").exists())
    }
    assert "ignore_imports" not in contract
    assert set(contract["forbidden_modules"]) == modules - {"bot.ports"}, (
        "pyproject.toml: list every core module but bot.ports in the boundary contract"
    )


PLATFORM_NAMES = re.compile(r"discord|slack|telegram|twilio|smtp", re.IGNORECASE)


def _code_words(path: Path) -> list[tuple[int, str]]:
    """Identifiers and string constants of `path`, docstrings and comments excluded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.alias | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, node.name))
    return found


# What a plugin implements or is handed rather than imports today: kept in the boundary
# for plugins from elsewhere (docs/adapters.md walks through each).
VOCABULARY = {
    "Adapter", "EventSink", "FindsSent", "HealthBoard", "Mountable",
    "Reads", "Reporting", "Service", "lazy_exports",
}  # fmt: skip


def _names_imported_from_ports(paths: list[Path]) -> set[str]:
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "bot.ports":
                names |= {alias.name for alias in node.names}
    return names


def test_the_boundary_exports_only_what_plugins_use() -> None:
    """Every name `bot.ports` exports is imported by a shipped plugin (or the test's
    installed one), or is vocabulary a plugin implements: the store, the dispatcher and
    the CLI's wiring stay inside."""
    import bot.ports

    plugins = sorted((ROOT / "adapters").rglob("*.py"))
    used = _names_imported_from_ports([*plugins, ROOT / "tests/test_plugin_install.py"])
    unused = set(bot.ports.__all__) - used - VOCABULARY
    assert unused == set(), f"exported by bot.ports but used by no plugin: {sorted(unused)}"
    for inside in ("Store", "Tx", "Dispatcher", "CliContext", "installed_plugins"):
        assert inside not in bot.ports.__all__
    # 164 before the store left the boundary, 135 when the desk was asked for, 125 now.
    assert len(bot.ports.__all__) <= 125


def test_no_plugin_reaches_the_store_itself() -> None:
    """A plugin reads through `PluginContext.reads()` and changes things through the core's
    use cases; `ctx.store` is the core's."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / "adapters").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "store"
    ]
    assert found == []


def test_no_code_in_the_core_names_a_platform() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {word!r}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        for line, word in _code_words(path)
        if PLATFORM_NAMES.search(word)
    ]
    assert offenders == []


def test_the_shipped_platforms_are_found_through_entry_points() -> None:
    plugins = installed_plugins()
    assert {"console", "discord", "slack", "web"} <= set(plugins)
    assert "web" not in plugins.delivering and "console" in plugins.delivering
    for name, plugin in plugins.items():
        assert isinstance(plugin, Plugin) and plugin.name == name


def test_mentions_of_every_platform_are_neutralised() -> None:
    text = installed_plugins().neutralize("@everyone @here <@123> <@&7> <!channel> <!subteam^S1>")
    assert "@everyone" not in text and "@here" not in text
    assert "<@" not in text and "<!" not in text
    assert installed_plugins().neutralize(text) == text  # idempotent


def test_a_section_or_key_no_plugin_owns_is_refused_with_where_and_what() -> None:
    base = campaign_config().model_dump(mode="json", exclude_none=True)
    with pytest.raises(ConfigError, match=r"discrod: unknown section"):
        parse_config({**base, "discrod": {"guild_ids": []}})
    with pytest.raises(ConfigError, match=r"admins\.matrix: no platform called 'matrix'"):
        parse_config({**base, "admins": {"matrix": {"user_ids": ["@a:b"]}}})
    with pytest.raises(ConfigError, match=r"delivery\.discord_per_second: unknown key"):
        parse_config({**base, "delivery": {"discord_per_second": 5}})
    with pytest.raises(
        ConfigError, match=r"over Discord's global limit for one bot token \(50/s\)"
    ):
        parse_config({**base, "delivery": {"discord_global_per_second": 500}})
    # A bot Discord has granted more may pace up to its grant, not past it.
    granted = {"discord_global_limit": 500, "discord_global_per_second": 485}
    delivery = parse_config({**base, "delivery": granted}).plugin_config("discord").delivery
    assert delivery is not None and delivery.model_dump()["discord_global_limit"] == 500
    with pytest.raises(ConfigError, match=r"over Discord's global limit .* \(500/s\)"):
        parse_config({**base, "delivery": {**granted, "discord_global_per_second": 600}})
    with pytest.raises(ConfigError, match=r"slack\.mode"):
        parse_config({**base, "slack": {"mode": "carrier-pigeon"}})


def test_addresses_name_installed_platforms_only() -> None:
    assert str(parse_address(" slack:T1/C2 ")) == "slack:T1/C2"
    with pytest.raises(InvalidInput, match="Unknown platform 'irc'; use one of: console"):
        parse_address("irc:libera/strike")
    with pytest.raises(InvalidInput, match="write platform:workspace/channel"):
        parse_address("general")
    with pytest.raises(InvalidInput, match="at most 64 characters"):
        parse_address("console:" + "w" * 65 + "/c")


def test_finding_the_plugins_loads_no_platform_library() -> None:
    """Every plugin's declaration is read at start-up (`strikebot --help` included): the
    platform libraries load only when a platform is used, through the packages' lazy
    exports, which still hand out what they name."""
    script = (
        "import sys\n"
        "from bot.plugins import installed_plugins\n"
        "installed_plugins()\n"
        "libraries = ('discord', 'slack_bolt', 'slack_sdk', 'telegram', 'twilio', 'aiosmtplib')\n"
        "print(sorted(name for name in libraries if name in sys.modules))\n"
        "import adapters.discord\n"
        "print(adapters.discord.DiscordAdapter.__name__, 'discord' in sys.modules)\n"
    )
    ran = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert ran.stdout.splitlines() == ["[]", "DiscordAdapter True"]


def test_every_part_a_plugin_names_by_address_loads_as_what_it_is_for() -> None:
    """A declaration names its models, adapter, doctor and renderers by address, loaded on
    first use: each shipped one loads, and is the kind of thing its field says."""
    from bot.plugins import AdminRule, PluginSettings, Section
    from bot.plugins.outbound import Limits

    for name, plugin in installed_plugins().items():
        assert issubclass(plugin.settings, PluginSettings), name
        assert issubclass(plugin.admins, AdminRule), name
        for model in (plugin.section, plugin.delivery):
            assert model is None or issubclass(model, Section), name
        assert plugin.limits is None or isinstance(plugin.limits, Limits), name
        for function in (plugin.create, plugin.doctor, plugin.preview, plugin.pacing):
            assert function is None or callable(function), name
        assert plugin.cost is None or callable(plugin.cost.measure), name
        assert all(key.startswith(f"{name}_") for key in plugin.delivery_keys()), name


def test_a_part_that_cannot_be_loaded_names_the_plugin_and_the_address() -> None:
    broken = Plugin(name="matrix", title="Matrix", section="adapters.matrix._settings:Nope")
    assert broken.declares("section") and not broken.declares("delivery")
    with pytest.raises(ConfigError, match=r"'matrix' names 'adapters\.matrix\._settings:Nope'"):
        _ = broken.section
    missing = Plugin(name="matrix", title="Matrix", section="bot.plugins:NoSuchModel")
    with pytest.raises(ConfigError, match=r"as its section, which cannot be loaded"):
        _ = missing.section


def test_a_command_that_uses_no_platform_reads_a_platforms_table_only_when_used() -> None:
    """`strikebot status` checks the core's tables and which plugin owns each other one;
    a mistake inside `[slack]` is refused by every command that uses Slack (`run` first)."""
    base = campaign_config().model_dump(mode="json", exclude_none=True)
    raw = {**base, "slack": {"mode": "carrier-pigeon"}}
    lazy = parse_config(raw, platforms=False)
    assert lazy.plugin_config("discord").section is not None
    with pytest.raises(ConfigError, match=r"slack\.mode"):
        lazy.plugin_config("slack")
    with pytest.raises(ConfigError, match=r"slack\.mode"):
        lazy.check()
    with pytest.raises(ConfigError, match=r"discrod: unknown section"):
        parse_config({**raw, "discrod": {}}, platforms=False)


def test_the_architecture_map_names_every_room_of_the_house() -> None:
    """docs/architecture.md is a newcomer's map: each package and module of the core, and
    each shipped plugin, is on it (a room added to the tree is added to the map). A plugin
    is a package with a `_plugin.py`, in `adapters/` or in a provider's package there
    (`adapters/twilio/sms/`), and the provider's package is on the map too."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    rooms = [
        f"bot/{p.name}/" if p.is_dir() else f"bot/{p.name}"
        for p in (ROOT / "bot").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.stem != "__init__")
    ]
    plugins = [p.parent for p in (ROOT / "adapters").glob("**/_plugin.py")]
    rooms += [f"{p.relative_to(ROOT).as_posix()}/" for p in plugins]
    rooms += [f"adapters/{p.parent.name}/" for p in plugins if p.parent.name != "adapters"]
    assert {"adapters/twilio/sms/", "adapters/twilio/whatsapp/", "adapters/twilio/"} <= set(rooms)
    missing = [room for room in sorted(rooms) if f"`{room}" not in text and f" {room}" not in text]
    assert missing == []
