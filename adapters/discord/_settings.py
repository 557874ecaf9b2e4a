"""Discord's settings, campaign-file sections, admin rule, limits and mention syntax."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr, model_validator

from bot.ports import Actor, AdminRule, Limits, Pacing, PluginSettings, Section, i18n

NAME = "discord"

# Embed title 256, description 4096, 25 fields (name 256, value 1024), footer 2048, and
# 6000 characters across all of a message's embeds.
LIMITS = Limits(
    title=256, body=4096, field_name=256, field_value=1024, fields=25, footer=2048, total=6000
)


class DiscordSettings(PluginSettings):
    """DISCORD_TOKEN turns Discord on. DISCORD_API_BASE and DISCORD_GATEWAY_URL point at a
    shared REST rate-limit proxy (or, in tests, the fake Discord).

    DISCORD_PUBLIC_KEY (the application's public key) serves the Interactions Endpoint URL,
    `POST /discord/interactions`, on every instance. DISCORD_SHARD_COUNT and
    DISCORD_SHARD_IDS (e.g. `0,1`) split a large bot's gateway shards across instances;
    whichever shards an instance may run, one instance at a time holds each."""

    token: SecretStr | None = Field(default=None, alias="DISCORD_TOKEN")
    api_base: str | None = Field(default=None, alias="DISCORD_API_BASE")
    gateway_url: str | None = Field(default=None, alias="DISCORD_GATEWAY_URL")
    public_key: str | None = Field(default=None, alias="DISCORD_PUBLIC_KEY")
    shard_count: int | None = Field(default=None, alias="DISCORD_SHARD_COUNT", ge=1, le=1000)
    shard_ids: str | None = Field(default=None, alias="DISCORD_SHARD_IDS")

    def shards(self) -> tuple[int, ...] | None:
        """The shard ids this instance may run; None: all of them, as one unit."""
        if not self.shard_ids:
            return None
        if self.shard_count is None:
            raise ValueError(
                "DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the total number of shards)."
            )
        try:
            ids = tuple(sorted({int(part) for part in self.shard_ids.split(",") if part.strip()}))
        except ValueError:
            raise ValueError(
                f"DISCORD_SHARD_IDS={self.shard_ids!r}: write shard numbers separated by commas, "
                "e.g. 0,1"
            ) from None
        if not ids or any(not 0 <= i < self.shard_count for i in ids):
            raise ValueError(
                f"DISCORD_SHARD_IDS={self.shard_ids!r}: each shard must be from 0 to "
                f"{self.shard_count - 1} (DISCORD_SHARD_COUNT={self.shard_count})."
            )
        return ids

    @property
    def enabled(self) -> bool:
        return self.token is not None

    @property
    def off_hint(self) -> str:
        return "set DISCORD_TOKEN to connect (docs/platforms.md, Discord)"


class DiscordSection(Section):
    """`[discord]`: the servers whose command list is synced at start (shown at once)."""

    guild_ids: list[str] = Field(default_factory=list)


class DiscordAdmins(AdminRule):
    """`[admins.discord]`: user ids, role ids, and whether Manage Server counts."""

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("discord.who")

    role_ids: list[str] = Field(default_factory=list)
    manage_server_is_admin: bool = True

    @classmethod
    def place(cls, value: str) -> tuple[str, str]:
        """A Discord id is a snowflake: 17 to 20 digits (a role id is one too: list roles
        under role_ids by hand)."""
        value = value.strip()
        if not re.fullmatch(r"[1-9][0-9]{16,19}", value):
            raise ValueError(
                f"{value!r} is not a Discord user id, which is 17 to 20 digits: in Discord, "
                "Settings → Advanced → Developer Mode on, then right-click the person → Copy "
                "User ID"
            )
        return "user_ids", value

    def allows(self, actor: Actor) -> bool:
        return (
            actor.user_id in self.user_ids
            or bool(actor.roles & set(self.role_ids))
            or (self.manage_server_is_admin and actor.platform_admin)
        )


class DiscordDelivery(Section):
    """`[delivery] discord_...`: Discord's pace. 50 requests/s per token is Discord's
    global limit, unless Discord has raised it for this bot (large bots may ask Discord's
    support for more): `discord_global_limit` is that grant; the pace stays under it."""

    discord_global_limit: int = Field(default=50, ge=50, le=10_000)
    discord_global_per_second: float = Field(default=48.0, gt=0)
    discord_per_channel_per_second: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _under_the_limit(self) -> DiscordDelivery:
        if self.discord_global_per_second > self.discord_global_limit:
            raise ValueError(
                f"discord_global_per_second ({self.discord_global_per_second:g}) is over "
                f"Discord's global limit for one bot token ({self.discord_global_limit}/s): "
                "lower it (48 stays under 50), or, only if Discord has granted this bot a "
                "higher limit, set discord_global_limit to that grant"
            )
        return self

    def pacing(self) -> Pacing:
        """The dispatcher's limits for Discord."""
        return Pacing(
            global_per_second=self.discord_global_per_second,
            per_channel_per_second=self.discord_per_channel_per_second,
            burst=2,
            max_in_flight=64,
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: Discord's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, DiscordDelivery) else DiscordDelivery()).pacing()
