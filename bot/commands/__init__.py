"""What members ask and admins order, platform-neutral, answered from the store.

An adapter turns a slash command into a `CommandContext` plus arguments, calls one method
(or `handle(ctx, text)` with the typed text), and renders the `Reply`. Every method answers:
a person's mistake becomes a reply saying what to do (`ok=False`, only they see it), and
nothing a person types makes an exception escape.

Language: the context's locale when the bot speaks it, else the channel's subscription
language, else the campaign's. Times: the context's time zone, else the channel's, else the
campaign's. Sentences live in the gettext catalogues in `bot/locales/` (`bot.i18n`).

The parts: `_context` (who asks, the reply, the one path every command runs), `_questions`
(what members ask), `_admin` (what admins order), `_text` (the typed form). Reading what
people type is `bot.editorial.parsing`; the rules their text must meet, `bot.editorial.rules`.
"""

from __future__ import annotations

from bot.commands._context import CommandContext, Reply
from bot.commands._text import (
    COMMAND_NAMES,
    LOCALIZED_NAMES,
    TypedForm,
    command_named,
    is_command_prefix,
)

__all__ = [
    "COMMAND_NAMES",
    "LOCALIZED_NAMES",
    "CommandContext",
    "Commands",
    "Reply",
    "command_named",
    "is_command_prefix",
]


class Commands(TypedForm):
    """The commands, bound to a store, the campaign, the admin use cases and a clock."""
