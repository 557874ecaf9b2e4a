"""The Slack adapter's own sentences (modal labels, progress notes), in English and Spanish.

Everything a command answers comes from `bot.commands` / `bot.i18n.sentences`; these are only the
words of Slack's forms. Modal titles and buttons are at most 24 characters (Slack's limit).
"""

from __future__ import annotations

from bot.ports import i18n

_WORDS = i18n.Words("slack")


def word(language: str, key: str, /, **values: object) -> str:
    template = _WORDS[language][key]
    return template.format(**values) if values else template
