"""Structured logging for `strikebot run`: JSON lines off a terminal, rich on one, no secrets.

    from bot.runtime.logging import configure_logging
    configure_logging(settings)      # once, at start-up

Every record passes through `RedactSecrets` before any handler formats it: the configured
tokens (and the database password) are replaced by `***` in the message, its arguments, the
formatted traceback and any `extra=` fields, so a token that ends up in an exception message
or a URL never reaches the log.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TextIO

from bot.config import Settings

REDACTED = "***"

# Attributes every LogRecord has; anything else came in through `extra=`.
_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None)).keys()
) | {"message", "asctime", "taskName"}


def secrets_of(settings: Settings) -> list[str]:
    """The secret values a log line must never contain."""
    values = [*settings.secrets(), *_database_password(settings.database_url)]
    return [v for v in values if v]


def _database_password(url: str) -> list[str | None]:
    """The password as written in the URL (maybe %-encoded) and as the driver gets it."""
    from urllib.parse import urlsplit

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return [make_url(url).password, urlsplit(url).password]
    except (ArgumentError, ValueError):
        return []


class RedactSecrets(logging.Filter):
    """Replaces each secret value with `***` wherever it appears in a record.

    Attach it to handlers (not loggers) so records from every library logger pass through it.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret containing another is removed whole.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
            # The traceback is now text; a handler must not render the live exception again.
            record.exc_info = None
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        for key, value in list(vars(record).items()):
            if key not in _STANDARD_ATTRS and isinstance(value, str):
                setattr(record, key, self.redact(value))
        return True


class JsonLines(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, exc (if any), and `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and key not in entry:
                entry[key] = value
        return json.dumps(entry, ensure_ascii=False, default=str)


class _RedactingJsonLines(JsonLines):
    """JsonLines that also redacts the finished line (non-string `extra=` values)."""

    def __init__(self, redactor: RedactSecrets) -> None:
        super().__init__()
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor.redact(super().format(record))


def configure_logging(
    settings: Settings | None = None,
    *,
    level: int | str = logging.INFO,
    stream: TextIO | None = None,
    json_lines: bool | None = None,
) -> logging.Handler:
    """Install one handler on the root logger (replacing any earlier one of ours) and return it.

    `json_lines=None` picks JSON when `stream` (default stderr) is not a terminal.
    """
    stream = stream if stream is not None else sys.stderr
    if json_lines is None:
        json_lines = not (hasattr(stream, "isatty") and stream.isatty())
    redactor = RedactSecrets(secrets_of(settings) if settings else [])
    handler: logging.Handler
    if json_lines:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(_RedactingJsonLines(redactor))
    else:
        from rich.console import Console
        from rich.logging import RichHandler

        # rich_tracebacks stays off: rich would render the live exception (and could show
        # locals), bypassing the redacted text the filter prepared.
        handler = RichHandler(
            console=Console(file=stream, stderr=stream is sys.stderr),
            rich_tracebacks=False,
            show_path=False,
            markup=False,
        )
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    handler.addFilter(redactor)
    handler.set_name("strikebot")
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == "strikebot":
            root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    # aiohttp's access log is useful at INFO; its per-request debug lines are not.
    logging.getLogger("aiohttp.access").setLevel(logging.INFO)
    # Database drivers' debug lines print query parameters: people's addresses and numbers
    # (bot/people/signups.py). They stay quiet even when everything else is at DEBUG.
    for driver in ("aiosqlite", "asyncpg", "sqlalchemy.engine"):
        logging.getLogger(driver).setLevel(logging.WARNING)
    # One line per thing that matters: the store says how far it migrated (not Alembic's
    # line per migration), the scheduler its own state (not APScheduler's start and stop).
    for chatty in ("alembic", "apscheduler"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    return handler
