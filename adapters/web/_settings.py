"""The web plugin's settings: the environment (`WebSettings`) and `[web]` in the campaign
file (`WebSection`), apart from the application so that reading them loads no aiohttp."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr, field_validator

from bot.ports import Actor, AdminRule, PluginSettings, Section, i18n

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


class WebAdmins(AdminRule):
    """`[admins.web]`: the people who may sign in to the web desk, by e-mail address."""

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("desk_web.who")
    emails: list[str] = Field(default_factory=list)

    @field_validator("emails")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        found = [v.strip().lower() for v in value]
        for address in found:
            if address.count("@") != 1 or not address.isascii() or " " in address:
                raise ValueError(f"{address!r} is not an e-mail address such as lead@union.org")
        return found

    def allows(self, actor: Actor) -> bool:
        return actor.user_id.strip().lower() in self.emails


__all__ = ["NAME", "WebAdmins", "WebSection", "WebSettings"]
