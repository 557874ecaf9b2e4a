"""Who may change things. Admins come from config (user, role and group ids per platform);
on Discord, the Manage Server permission also counts. The CLI is trusted: whoever can run it
can already open the database."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.errors import NotAllowed
from bot.models import Actor, Platform


@dataclass(frozen=True, slots=True)
class AdminList:
    discord_user_ids: frozenset[str] = field(default_factory=frozenset)
    discord_role_ids: frozenset[str] = field(default_factory=frozenset)
    discord_manage_server_is_admin: bool = True
    slack_user_ids: frozenset[str] = field(default_factory=frozenset)
    slack_usergroup_ids: frozenset[str] = field(default_factory=frozenset)
    console_user_ids: frozenset[str] = field(default_factory=lambda: frozenset({"cli"}))

    def allows(self, actor: Actor) -> bool:
        platform = str(actor.platform)
        if platform == "cli":
            return True
        if platform == "http":
            # Only the web adapter builds "http" actors, after checking the admin bearer
            # token (STRIKEBOT_ADMIN_TOKEN); holding that token is what makes an HTTP admin.
            return True
        if platform == Platform.DISCORD:
            return (
                actor.user_id in self.discord_user_ids
                or bool(actor.roles & self.discord_role_ids)
                or (self.discord_manage_server_is_admin and actor.platform_admin)
            )
        if platform == Platform.SLACK:
            return actor.user_id in self.slack_user_ids or bool(
                actor.roles & self.slack_usergroup_ids
            )
        if platform == Platform.CONSOLE:
            return actor.user_id in self.console_user_ids
        return False

    def require(self, actor: Actor, doing: str = "change updates") -> None:
        if self.allows(actor):
            return
        raise NotAllowed(
            f"Only union admins can {doing}. {_how_to_get_access(actor, 'en')}",
            translations={
                "es": f"Solo las personas administradoras del sindicato pueden hacer esto. "
                f"{_how_to_get_access(actor, 'es')}"
            },
        )


CLI_ACTOR = Actor(platform="cli", user_id="cli", display_name="command line")


def _how_to_get_access(actor: Actor, language: str) -> str:
    where = {
        Platform.DISCORD: ("your Discord user id or role id", "[admins.discord]"),
        Platform.SLACK: ("your Slack user id or user group id", "[admins.slack]"),
    }.get(
        Platform(actor.platform) if actor.platform in set(Platform) else Platform.CONSOLE,
        ("your user id", "[admins.console]"),
    )
    if language == "es":
        return (
            f"Pide a una persona administradora que agregue {actor.user_id!r} en "
            f"{where[1]} de config/strike.toml."
        )
    return (
        f"Ask an admin to add {where[0]} ({actor.user_id!r}) under {where[1]} in "
        "config/strike.toml."
    )
