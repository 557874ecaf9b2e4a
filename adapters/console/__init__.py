"""The console adapter: the bot in a terminal, like Hubot's shell.

`ConsoleAdapter` implements `bot.ports.Adapter` for `Platform.CONSOLE`: deliveries are
printed instead of posted. `strikebot console` (see `cli.py`) opens a prompt that answers
`/strike ...` commands against the same store and shows deliveries as they go out.
"""

from adapters.console._adapter import ConsoleAdapter
from adapters.console._render import render_message, render_reply

__all__ = ["ConsoleAdapter", "render_message", "render_reply"]
