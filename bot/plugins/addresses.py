"""Channel addresses, `platform:workspace/channel`, read in one place for every surface.

    parse_address("discord:300000000000000003/400000000000000004")
    -> Address(platform="discord", workspace="300000000000000003", channel="400000000000000004")

The platform must be an installed plugin whose channels can be subscribed; a mistake gets a
sentence with an example from the installed plugins, in every language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import InvalidInput
from bot.i18n.sentences import localized_error
from bot.plugins import Plugins, installed_plugins

FIELD_MAX = 64  # the store's column width for workspace and channel ids
_SHAPE = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*):([^/\s]+)/([^/\s]+)\s*")


@dataclass(frozen=True, slots=True)
class Address:
    platform: str
    workspace: str
    channel: str

    def __str__(self) -> str:
        return f"{self.platform}:{self.workspace}/{self.channel}"


def example_address(plugins: Plugins | None = None) -> str:
    """An example for error messages: the first installed plugin's, else a generic one."""
    plugins = installed_plugins() if plugins is None else plugins
    for name in plugins.delivering:
        if plugins[name].address_example:
            return plugins[name].address_example
    return "platform:workspace/channel"


def parse_address(text: str, plugins: Plugins | None = None) -> Address:
    """The address in `text`, or `InvalidInput` saying how to write one."""
    plugins = installed_plugins() if plugins is None else plugins
    match = _SHAPE.fullmatch(text)
    if match is None:
        example = example_address(plugins)
        raise localized_error(
            InvalidInput, "addresses.not_an_address", text=text[:80], example=example
        )
    name, workspace, channel = match.groups()
    name = name.lower()
    if name not in plugins.delivering:
        known = ", ".join(plugins.delivering) or "none"
        raise localized_error(InvalidInput, "addresses.unknown_platform", name=name, known=known)
    if len(workspace) > FIELD_MAX or len(channel) > FIELD_MAX:
        raise localized_error(InvalidInput, "addresses.ids_too_long", max=FIELD_MAX)
    return Address(name, workspace, channel)


def find_address(text: str, plugins: Plugins | None = None) -> Address | None:
    """`parse_address`, or None when `text` is not a valid address."""
    try:
        return parse_address(text, plugins)
    except InvalidInput:
        return None
