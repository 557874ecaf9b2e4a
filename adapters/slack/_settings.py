"""Slack's settings, campaign-file sections, admin rule, limits and mention syntax."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, SecretStr

from bot.ports import (
    Actor,
    AdminRule,
    Limits,
    Pacing,
    PluginSettings,
    Section,
    i18n,
)

NAME = "slack"
EVENTS_PATH = "/slack/events"

# Our budget per message: several sections of body, each kept under the 3000 limit, and up
# to 20 fields. Slack's real constraint is per block (and 50 blocks), so `total` only keeps
# the fields from crowding out the body; what does not fit in 50 blocks is cut with a link.
LIMITS = Limits(
    title=150,
    body=4 * 2900,
    field_name=150,
    field_value=1900,
    fields=20,
    footer=300,
    total=60_000,
)


class SlackSettings(PluginSettings):
    """SLACK_BOT_TOKEN turns Slack on; Socket Mode needs SLACK_APP_TOKEN, HTTP mode
    SLACK_SIGNING_SECRET. SLACK_API_URL points at GovSlack or a local fake."""

    bot_token: SecretStr | None = Field(default=None, alias="SLACK_BOT_TOKEN")
    signing_secret: SecretStr | None = Field(default=None, alias="SLACK_SIGNING_SECRET")
    app_token: SecretStr | None = Field(default=None, alias="SLACK_APP_TOKEN")
    api_url: str | None = Field(default=None, alias="SLACK_API_URL")

    @property
    def enabled(self) -> bool:
        return self.bot_token is not None

    @property
    def off_hint(self) -> str:
        return "set SLACK_BOT_TOKEN to connect (docs/platforms.md, Slack)"


class SlackSection(Section):
    """`[slack]`: how Slack reaches the bot."""

    mode: str = Field(default="auto", pattern="^(auto|socket|http)$")


class SlackAdmins(AdminRule):
    """`[admins.slack]`: Slack user ids and user-group ids."""

    who: ClassVar[Mapping[str, str]] = i18n.Phrase("slack.who")

    usergroup_ids: list[str] = Field(default_factory=list)

    def allows(self, actor: Actor) -> bool:
        return actor.user_id in self.user_ids or bool(actor.roles & set(self.usergroup_ids))

    @classmethod
    def place(cls, value: str) -> tuple[str, str]:
        """`U…`/`W…` is a user (user_ids), `S…` a user group (usergroup_ids)."""
        value = value.strip().upper()
        if re.fullmatch(r"[UW][A-Z0-9]{6,14}", value):
            return "user_ids", value
        if re.fullmatch(r"S[A-Z0-9]{6,14}", value):
            return "usergroup_ids", value
        raise ValueError(
            f"{value!r} is not a Slack id: a person's starts with U (or W), a user group's with "
            "S; in Slack, open the profile → ⋮ → Copy member ID"
        )


class SlackDelivery(Section):
    """`[delivery] slack_...`: Slack's pace (about 1 message/s per channel, and a cap per
    workspace)."""

    slack_per_channel_per_second: float = Field(default=1.0, gt=0, le=1.0)
    slack_workspace_per_second: float = Field(default=20.0, gt=0)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for Slack."""
        return Pacing(
            # One bot token serves one workspace: its cap is the whole token's.
            global_per_second=self.slack_workspace_per_second,
            per_channel_per_second=self.slack_per_channel_per_second,
            per_workspace_per_second=self.slack_workspace_per_second,
            burst=3,
            max_in_flight=16,
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: Slack's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, SlackDelivery) else SlackDelivery()).pacing()
