"""Who may change things. Each platform plugin's `AdminRule` (`[admins.<platform>]` in the
campaign file) says who is an admin there. The CLI is trusted: whoever can run it can already
open the database. The HTTP admin API's actors are trusted once the web plugin has checked
the bearer token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import i18n
from bot.errors import NotAllowed
from bot.i18n.sentences import in_every_language
from bot.models import Actor
from bot.plugins import AdminRule

# Surfaces of the core itself, not platforms: they authenticate before building an actor.
TRUSTED_SURFACES = frozenset({"cli", "http"})


@dataclass(frozen=True, slots=True)
class AdminList:
    """The admin rule of every platform, by platform name."""

    rules: Mapping[str, AdminRule] = field(default_factory=dict)
    # The campaign file the rules came from, named to a refused person ("add you under
    # [admins.discord] in config/acme.toml").
    file: str = "config/strike.toml"

    def allows(self, actor: Actor) -> bool:
        platform = str(actor.platform)
        if platform in TRUSTED_SURFACES:
            return True
        rule = self.rules.get(platform)
        return rule is not None and rule.allows(actor)

    def require(self, actor: Actor, doing: str = "change updates") -> None:
        if self.allows(actor):
            return

        def sentence(language: str) -> str:
            how = self.how_to_get_access(actor, language)
            return i18n.text(language, "auth.not_allowed").format(doing=doing, how=how)

        raise in_every_language(NotAllowed, sentence)

    def how_to_get_access(self, actor: Actor, language: str) -> str:
        platform = str(actor.platform)
        rule = self.rules.get(platform)
        phrases = rule.who if rule is not None else AdminRule.who
        source = i18n.source_language()
        who = phrases.get(language) or phrases.get(source) or AdminRule.who[language]
        where = f"[admins.{platform}]"
        template = i18n.text(language, "auth.how_to_get_access")
        return template.format(who=who, user=actor.user_id, where=where, file=self.file)


CLI_ACTOR = Actor(platform="cli", user_id="cli", display_name="command line")
