"""The environment through pydantic-settings: each default written once, on its field, and
docs/configuration.md listing every variable with that default."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import CoreSettings, Settings
from bot.errors import ConfigError
from bot.plugins import installed_plugins

ROOT = Path(__file__).resolve().parents[1]


def test_the_default_database_url_is_written_once() -> None:
    default = CoreSettings.model_fields["database_url"].default
    places = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "bot").rglob("*.py")) + sorted((ROOT / "adapters").rglob("*.py"))
        if default in path.read_text(encoding="utf-8")
    ]
    assert places == ["bot/store/engine.py"], places


def test_a_given_mapping_is_read_and_the_process_environment_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STRIKEBOT_HTTP_PORT", "9090")
    monkeypatch.setenv("DISCORD_TOKEN", "from-the-process")
    given = Settings.from_env({"STRIKEBOT_HTTP_HOST": "0.0.0.0", "STRIKEBOT_CONFIG": ""})
    assert (given.http_host, given.http_port, str(given.config_path)) == (
        "0.0.0.0", 8080, "config/strike.toml",
    )  # fmt: skip
    assert not given.plugin(installed_plugins()["discord"]).enabled
    process = Settings.from_env()
    assert process.http_port == 9090
    assert process.plugin(installed_plugins()["discord"]).enabled


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"STRIKEBOT_HTTP_PORT": "eighty"}, "STRIKEBOT_HTTP_PORT: eighty is not a port"),
        ({"STRIKEBOT_HTTP_PORT": "70000"}, "STRIKEBOT_HTTP_PORT: 70000 is not a port"),
        ({"DISCORD_SHARD_COUNT": "0"}, "DISCORD_SHARD_COUNT: "),
        ({"TWILIO_FROM": "555"}, "TWILIO_FROM: write the number in E.164"),
    ],
)
def test_a_bad_variable_is_named_with_what_to_write(env: dict[str, str], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env).secrets()  # a plugin's variables are read when first used
    message = str(caught.value)
    assert message.startswith(said), message
    assert "Fix the variable" in message and "Value error" not in message


def test_a_plugins_variables_are_read_when_that_plugin_is_used() -> None:
    settings = Settings.from_env({"DISCORD_SHARD_COUNT": "0", "TELEGRAM_BOT_TOKEN": "t"})
    assert settings.database_url  # the core's own are read at once
    assert settings.plugin(installed_plugins()["telegram"]).enabled
    with pytest.raises(ConfigError, match="DISCORD_SHARD_COUNT"):
        settings.plugin(installed_plugins()["discord"])


def test_run_refuses_a_bad_platform_variable_before_it_opens_the_database(
    tmp_path: Path,
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_SECRET"))},
        "STRIKEBOT_CONFIG": str(ROOT / "config" / "strike.toml"),
        "STRIKEBOT_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'run.db'}",
        "DISCORD_SHARD_COUNT": "0",
    }
    done = subprocess.run(
        [sys.executable, "-c", "from bot.cli import main; raise SystemExit(main(['run']))"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "DISCORD_SHARD_COUNT: " in done.stderr and "Fix the variable" in done.stderr
    assert not (tmp_path / "run.db").exists()


def test_docs_list_every_variable_with_its_default() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {
        name: cells.split("|")[1].strip()
        for line in text.splitlines()
        if line.startswith("| `")
        for cells in [line[1:]]
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells.split("|")[0])
    }
    for name, info in CoreSettings.model_fields.items():
        assert info.alias in rows, f"{info.alias} is not in docs/configuration.md"
        if info.default is None:
            assert rows[info.alias] == "none", (info.alias, rows[info.alias], name)
            continue
        defaults = re.findall(r"`([^`]+)`", rows[info.alias])
        assert str(info.default) in defaults, (info.alias, rows[info.alias], name)
    for plugin in installed_plugins().values():
        for info in plugin.settings.model_fields.values():
            assert info.alias in rows, f"{info.alias} ({plugin.name}) is not documented"
