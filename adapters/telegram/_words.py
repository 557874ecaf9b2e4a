"""The Telegram plugin's own sentences: command menus and the admin forms' prompts, in every
language the bot speaks. Answers to commands come from `bot.commands`."""

from __future__ import annotations

from bot.ports import i18n

# setMyCommands: one line per command, at most 256 characters. Admin commands are listed
# only in admins' private chats.
MEMBER_COMMANDS = ("status", "demands", "demand", "timeline", "next", "help")
ADMIN_COMMANDS = ("post", "edit", "retract", "approve", "subscribe", "unsubscribe")

WORDS = i18n.Words("telegram")


def word(language: str, key: str, /, **values: object) -> str:
    table = WORDS[language]
    return table[key].format(**values)
