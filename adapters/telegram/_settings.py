"""Telegram's settings, campaign-file sections, admin rule, limits and mention syntax."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr

from bot.ports import Actor, AdminRule, Limits, Pacing, PluginSettings, Section, i18n

NAME = "telegram"
WEBHOOK_PATH = "/telegram/webhook"
DEFAULT_API_BASE = "https://api.telegram.org"

# A message is at most 4096 characters of text once its HTML is parsed. Our budget leaves
# room for the labels, links and footer the renderer adds around these parts.
LIMITS = Limits(
    title=256, body=3000, field_name=100, field_value=1000, fields=10, footer=200, total=3600
)
TEXT_MAX = 4096


class TelegramSettings(PluginSettings):
    """TELEGRAM_BOT_TOKEN turns Telegram on. TELEGRAM_API_BASE points at a local Bot API
    server (or, in tests, the fake). TELEGRAM_WEBHOOK_URL switches to webhook mode (several
    instances behind a load balancer); TELEGRAM_WEBHOOK_SECRET is the header Telegram sends
    with each update (derived from the token when unset)."""

    bot_token: SecretStr | None = Field(default=None, alias="TELEGRAM_BOT_TOKEN")
    api_base: str | None = Field(default=None, alias="TELEGRAM_API_BASE")
    webhook_url: str | None = Field(default=None, alias="TELEGRAM_WEBHOOK_URL")
    webhook_secret: SecretStr | None = Field(
        default=None, alias="TELEGRAM_WEBHOOK_SECRET", pattern=r"^[A-Za-z0-9_-]{1,256}$"
    )

    @property
    def enabled(self) -> bool:
        return self.bot_token is not None

    @property
    def off_hint(self) -> str:
        return "set TELEGRAM_BOT_TOKEN to connect (README: Connect to Telegram)"

    def secrets(self) -> list[str]:
        found = super().secrets()
        if self.bot_token is not None and self.webhook_secret is None:
            found.append(self.derived_secret())
        return found

    def derived_secret(self) -> str:
        """The webhook's secret header: TELEGRAM_WEBHOOK_SECRET, else one derived from the
        token (the same on every instance, and known to nobody without the token)."""
        if self.webhook_secret is not None:
            return self.webhook_secret.get_secret_value()
        assert self.bot_token is not None
        seed = b"strikebot-telegram-webhook:" + self.bot_token.get_secret_value().encode()
        return hashlib.sha256(seed).hexdigest()


class TelegramSection(Section):
    """`[telegram]`: how updates reach the bot. "polling" (one instance, no public address),
    "webhook" (TELEGRAM_WEBHOOK_URL; any number of instances), or "auto"."""

    mode: str = Field(default="auto", pattern="^(auto|polling|webhook)$")


class TelegramAdmins(AdminRule):
    """`[admins.telegram]`: Telegram user ids, and groups or channels whose administrators
    count as admins (`admin_chat_ids`, checked with getChatMember)."""

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("telegram.who")

    admin_chat_ids: list[str] = Field(default_factory=list)

    def allows(self, actor: Actor) -> bool:
        return actor.user_id in self.user_ids or bool(actor.roles & set(self.admin_chat_ids))

    @classmethod
    def place(cls, value: str) -> tuple[str, str]:
        """A person's id is a positive number (user_ids); a group's or channel's a negative
        one (admin_chat_ids: its administrators are admins)."""
        value = value.strip()
        if re.fullmatch(r"[1-9][0-9]{0,15}", value):
            return "user_ids", value
        if re.fullmatch(r"-[1-9][0-9]{0,15}", value):
            return "admin_chat_ids", value
        raise ValueError(
            f"{value!r} is not a Telegram id, which is a number (a group's is negative): "
            "send /start to @userinfobot to learn yours"
        )


class TelegramDelivery(Section):
    """`[delivery] telegram_...`: Telegram's pace. About 30 messages/s for one bot, and 20 a
    minute into one group; the defaults stay under both."""

    telegram_global_per_second: float = Field(default=25.0, gt=0, le=30)
    telegram_per_chat_per_minute: float = Field(default=18.0, gt=0, le=20)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for Telegram."""
        return Pacing(
            global_per_second=self.telegram_global_per_second,
            per_channel_per_second=self.telegram_per_chat_per_minute / 60.0,
            per_workspace_per_second=self.telegram_per_chat_per_minute / 60.0,  # a chat's topics
            burst=1,
            max_in_flight=16,
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: Telegram's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, TelegramDelivery) else TelegramDelivery()).pacing()
