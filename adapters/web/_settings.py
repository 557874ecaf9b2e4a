"""The web plugin's settings: the environment (`WebSettings`) and `[web]` in the campaign
file (`WebSection`), apart from the application so that reading them loads no aiohttp."""

from __future__ import annotations

from pydantic import Field, SecretStr

from bot.ports import PluginSettings, Section

NAME = "web"


class WebSettings(PluginSettings):
    """The web plugin's environment: the admin API's bearer token (off when unset). Who a
    client is behind a proxy is the core's (`[server] trusted_proxies`, `ctx.clients`)."""

    admin_token: SecretStr | None = Field(default=None, alias="STRIKEBOT_ADMIN_TOKEN")


class WebSection(Section):
    """`[web]` in the campaign file. `publish_dir`: keep a static copy of the public site
    there, re-published after every change (see `strikebot publish`); relative paths are
    from the directory strikebot runs in."""

    publish_dir: str | None = None


__all__ = ["NAME", "WebSection", "WebSettings"]
