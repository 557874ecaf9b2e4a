"""The console plugin: the bot in a terminal, like Hubot's shell.

`ConsoleAdapter` implements `bot.ports.Adapter`: deliveries are printed instead of posted
(under `strikebot run`, to its standard output). `strikebot console` (see `cli.py`) opens a
prompt that answers `/strike ...` commands against the same store and shows deliveries as
they go out. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point; `docs/adapters.md` uses this package as its worked example.
"""

from adapters.console._adapter import ConsoleAdapter
from adapters.console._plugin import NAME, plugin
from adapters.console._render import render_message, render_reply

__all__ = ["NAME", "ConsoleAdapter", "plugin", "render_message", "render_reply"]
