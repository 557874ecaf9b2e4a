"""The console plugin: the bot in a terminal, like Hubot's shell.

`ConsoleAdapter` implements `bot.ports.Adapter`: deliveries are printed instead of posted
(under `strikebot run`, to its standard output). `strikebot console` (see `cli.py`) opens a
prompt that answers `/strike ...` commands against the same store and shows deliveries as
they go out. `plugin` is the declaration the core finds through the `strikebot.adapters`
entry point; `docs/adapters.md` uses this package as its worked example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.console._plugin import NAME, plugin
from bot.ports import lazy_exports

if TYPE_CHECKING:
    from adapters.console._adapter import ConsoleAdapter
    from adapters.console._render import render_message, render_reply

# Loaded when first used (see `lazy_exports`), so the declaration stays light.
_LAZY = {
    "ConsoleAdapter": "adapters.console._adapter",
    "render_message": "adapters.console._render",
    "render_reply": "adapters.console._render",
}

__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = ["NAME", "ConsoleAdapter", "plugin", "render_message", "render_reply"]
