"""Sentence catalogues, one TOML file per feature, with every language side by side.

    say("es", "day_of_strike", day=5)        -> "Día 5 de la huelga."
    raise invalid("bad_time", value="25:00")  # an InvalidInput carrying every language

Shared vocabulary (status names, dates) stays in `bot.i18n`.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import TypeVar

from bot import i18n
from bot.errors import InvalidInput, NotFound, StrikebotError

E = TypeVar("E", bound=StrikebotError)

__all__ = ["catalogue", "invalid", "localized_error", "not_found", "say", "short"]


@cache
def catalogue(name: str = "commands") -> dict[str, dict[str, str]]:
    """language -> key -> template, read once from `bot/locales/<name>.toml`."""
    raw = (resources.files(__package__) / f"{name}.toml").read_text(encoding="utf-8")
    return {lang: dict(entries) for lang, entries in tomllib.loads(raw).items()}


def say(language: str, key: str, /, **values: object) -> str:
    """The sentence `key` in `language` (falling back to English) with `values` filled in."""
    table = catalogue()
    template = table.get(i18n.pick(language), {}).get(key) or table["en"][key]
    return template.format_map(values)


def short(value: object, limit: int = 60) -> str:
    """A user's input quoted back in an error: one line, at most `limit` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def localized_error(cls: type[E], key: str, /, **values: object) -> E:
    """An error of type `cls` whose message is `key` in English, with every translation."""
    translations = {lang: say(lang, key, **values) for lang in i18n.LANGUAGES if lang != "en"}
    return cls(say("en", key, **values), translations=translations)


def invalid(key: str, /, **values: object) -> InvalidInput:
    return localized_error(InvalidInput, key, **values)


def not_found(key: str, /, **values: object) -> NotFound:
    return localized_error(NotFound, key, **values)
