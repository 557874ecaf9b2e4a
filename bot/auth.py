"""Who may change things. Each platform plugin's `AdminRule` (`[admins.<platform>]` in the
campaign file) says who is an admin there. The CLI is trusted: whoever can run it can already
open the database. The HTTP admin API's actors are trusted once the web plugin has checked
the bearer token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.errors import NotAllowed
from bot.models import Actor
from bot.plugins import AdminRule

# Surfaces of the core itself, not platforms: they authenticate before building an actor.
TRUSTED_SURFACES = frozenset({"cli", "http"})


@dataclass(frozen=True, slots=True)
class AdminList:
    """The admin rule of every platform, by platform name."""

    rules: Mapping[str, AdminRule] = field(default_factory=dict)

    def allows(self, actor: Actor) -> bool:
        platform = str(actor.platform)
        if platform in TRUSTED_SURFACES:
            return True
        rule = self.rules.get(platform)
        return rule is not None and rule.allows(actor)

    def require(self, actor: Actor, doing: str = "change updates") -> None:
        if self.allows(actor):
            return
        raise NotAllowed(
            f"Only union admins can {doing}. {self.how_to_get_access(actor, 'en')}",
            translations={
                "es": f"Solo las personas administradoras del sindicato pueden hacer esto. "
                f"{self.how_to_get_access(actor, 'es')}"
            },
        )

    def how_to_get_access(self, actor: Actor, language: str) -> str:
        platform = str(actor.platform)
        rule = self.rules.get(platform)
        phrases = rule.who if rule is not None else AdminRule.who
        who = phrases.get(language) or phrases.get("en") or AdminRule.who["en"]
        where = f"[admins.{platform}]"
        if language == "es":
            return (
                f"Pide a una persona administradora que agregue {who} ({actor.user_id!r}) en "
                f"{where} de config/strike.toml."
            )
        return f"Ask an admin to add {who} ({actor.user_id!r}) under {where} in config/strike.toml."


CLI_ACTOR = Actor(platform="cli", user_id="cli", display_name="command line")
