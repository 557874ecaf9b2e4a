"""Structured logs: JSON lines off a terminal, and no configured secret ever in a line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot.config import Settings
from bot.runtime.logging import configure_logging

SETTINGS = Settings.from_env(
    {
        "STRIKEBOT_ADMIN_TOKEN": "admin-secret-7f3a9c",
        "DISCORD_TOKEN": "MTA.discord.secret",
        "SLACK_BOT_TOKEN": "xoxb-slack-secret",
        "SLACK_SIGNING_SECRET": "signing-secret-123",
        "STRIKEBOT_DATABASE_URL": "postgresql+asyncpg://bot:db-pass-42@db.internal/strike",
    }
)
SECRETS = [
    "admin-secret-7f3a9c",
    "MTA.discord.secret",
    "xoxb-slack-secret",
    "signing-secret-123",
    "db-pass-42",
]


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def test_json_lines_without_secrets(restore_root: None) -> None:
    stream = io.StringIO()  # not a terminal: JSON
    configure_logging(SETTINGS, stream=stream)
    log = logging.getLogger("strikebot.test")
    log.info("connecting with token %s", "xoxb-slack-secret", extra={"channel": "C1"})
    log.warning("url was https://x/?t=admin-secret-7f3a9c", extra={"auth": "MTA.discord.secret"})
    try:
        raise RuntimeError("login failed for postgresql://bot:db-pass-42@db/strike")
    except RuntimeError:
        log.exception("database unreachable (signing-secret-123)")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3
    entries = [json.loads(line) for line in lines]
    assert entries[0]["message"] == "connecting with token ***"
    assert entries[0]["level"] == "info" and entries[0]["logger"] == "strikebot.test"
    assert entries[0]["channel"] == "C1"
    assert entries[1]["auth"] == "***"
    assert "RuntimeError: login failed for postgresql://bot:***@db/strike" in entries[2]["exc"]
    for secret in SECRETS:
        assert secret not in stream.getvalue()


def test_terminal_output_is_redacted_too(restore_root: None) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    configure_logging(SETTINGS, stream=stream)
    log = logging.getLogger("strikebot.test")
    try:
        raise ValueError("bad token xoxb-slack-secret")
    except ValueError:
        log.exception("slack refused admin-secret-7f3a9c")
    text = stream.getvalue()
    assert "slack refused ***" in text
    assert "ValueError: bad token ***" in text
    assert not text.lstrip().startswith("{")  # rich, not JSON
    for secret in SECRETS:
        assert secret not in text


def test_configuring_twice_keeps_one_handler(restore_root: None) -> None:
    first = configure_logging(SETTINGS, stream=io.StringIO())
    second = configure_logging(SETTINGS, stream=io.StringIO())
    ours = [h for h in logging.getLogger().handlers if h.get_name() == "strikebot"]
    assert ours == [second] and first is not second


def test_a_percent_encoded_database_password_is_hidden_in_both_spellings(
    restore_root: None,
) -> None:
    settings = Settings.from_env(
        {"STRIKEBOT_DATABASE_URL": "postgresql+asyncpg://bot:p%40ss-w0rd@db.internal/strike"}
    )
    stream = io.StringIO()
    configure_logging(settings, stream=stream, json_lines=True)
    logging.getLogger("strikebot.test").error(
        "cannot connect to %s as p@ss-w0rd", settings.database_url
    )
    line = stream.getvalue()
    assert "p%40ss-w0rd" not in line and "p@ss-w0rd" not in line
    assert "postgresql+asyncpg://bot:***@db.internal/strike" in line
