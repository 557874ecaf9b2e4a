"""The commands' sentences, from the gettext catalogues beside this file (`bot.i18n`).

    say("es", "day_of_strike", day=5)        -> "Día 5 de la huelga."
    raise invalid("bad_time", value="25:00")  # an InvalidInput carrying every language

`say`, `invalid` and `not_found` take a key of the `commands` table; `localized_error` takes
any message context ("<table>.<key>").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from bot import i18n
from bot.errors import InvalidInput, NotFound, StrikebotError

E = TypeVar("E", bound=StrikebotError)

__all__ = ["in_every_language", "invalid", "localized_error", "not_found", "say", "short"]

COMMANDS = i18n.Words("commands")


def say(language: str, key: str, /, **values: object) -> str:
    """The sentence `key` in `language` (falling back to the source language) with `values`
    filled in."""
    return COMMANDS.say(language, key, **values)


def short(value: object, limit: int = 60) -> str:
    """A user's input quoted back in an error: one line, at most `limit` characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def localized_error(cls: type[E], context: str, /, **values: object) -> E:
    """An error of type `cls` whose message is the message `context` ("<table>.<key>", or a
    key of the commands table) in the source language, with every translation."""
    if "." not in context:
        context = f"commands.{context}"
    return in_every_language(cls, lambda lang: i18n.text(lang, context).format_map(values))


def in_every_language(cls: type[E], render: Callable[[str], str]) -> E:
    """An error of type `cls` whose sentence `render(language)` builds, in every language."""
    source = i18n.source_language()
    translations = {lang: render(lang) for lang in i18n.languages() if lang != source}
    return cls(render(source), translations=translations)


def invalid(key: str, /, **values: object) -> InvalidInput:
    return localized_error(InvalidInput, key, **values)


def not_found(key: str, /, **values: object) -> NotFound:
    return localized_error(NotFound, key, **values)
