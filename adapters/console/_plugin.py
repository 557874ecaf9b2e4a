"""The console plugin's declaration: what the core needs to know, said once."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from pydantic import Field

from bot.ports import AdminRule, Command, Plugin, PluginSettings, i18n

if TYPE_CHECKING:
    from adapters.console._adapter import ConsoleAdapter
    from bot.ports import PluginContext

NAME = "console"


class ConsoleSettings(PluginSettings):
    """`STRIKEBOT_CONSOLE=off` keeps `strikebot run` from printing console deliveries."""

    deliver: bool = Field(default=True, alias="STRIKEBOT_CONSOLE")

    @property
    def enabled(self) -> bool:
        return self.deliver

    @property
    def off_hint(self) -> str:
        return "STRIKEBOT_CONSOLE is off; unset it to print console deliveries here"


class ConsoleAdmins(AdminRule):
    """`[admins.console]`: console user names (`strikebot console --user NAME`)."""

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("console.who")

    user_ids: list[str] = Field(default_factory=lambda: ["console"])


def create(ctx: PluginContext) -> ConsoleAdapter:
    """Under `strikebot run`, console deliveries print to standard output: panels on a
    terminal, one JSON object per line otherwise."""
    from adapters.console._adapter import ConsoleAdapter  # with rich's renderers, when used

    return ConsoleAdapter(json_output=not sys.stdout.isatty())


plugin = Plugin(
    name=NAME,
    title="Console",
    create=create,
    settings=ConsoleSettings,
    admins=ConsoleAdmins,
    address_example="console:local/general",
    commands=(
        Command(
            "console",
            "talk to the bot in this terminal: /strike status, /strike post ...",
            "adapters.console.cli:register",
        ),
    ),
    docs="docs/adapters.md",
)
