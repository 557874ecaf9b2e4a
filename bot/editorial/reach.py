"""How far an update will go, for the preview before it is posted: chat channels, and what
the platforms that reach people one by one will spend (e-mails, text segments).

    found = await reach(store, campaign, update)
    found.sentence("en")  # "It will go to 3 chat channels, 1,204 e-mails and 2,310 text
                          #  segments (1,155 texts)."

Every surface's preview uses this (Discord's and Slack's forms, `/strike post`,
`strikebot post --dry-run`). Text segments depend on the wording in each language, so the
update is rendered once per (platform, language, time zone) and measured by the plugin's
`Cost.measure`, exactly as it will be sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import i18n
from bot.config import StrikeConfig
from bot.messages.compose import update_message
from bot.models import Campaign, Update
from bot.plugins import Plugins, Section, installed_plugins
from bot.store import Store

_WORDS = i18n.Words("reach")


@dataclass(frozen=True, slots=True)
class Spend:
    """One costed platform's share: how many people (messages) and units (segments)."""

    platform: str
    messages: int
    units: int


@dataclass(frozen=True, slots=True)
class Reach:
    channels: int = 0  # chat channels (platforms that cost nothing per message)
    spends: tuple[Spend, ...] = ()
    receivers: int = 0  # machines that take an event per change (webhook endpoints)
    _plugins: Plugins = field(default_factory=Plugins, repr=False, compare=False)
    # Everyone above, by platform: channels, people or receivers (the web desk's cards).
    platforms: Mapping[str, int] = field(default_factory=dict)

    @property
    def people(self) -> int:
        return sum(s.messages for s in self.spends)

    def spend(self, platform: str) -> Spend | None:
        return next((s for s in self.spends if s.platform == platform), None)

    def sentence(self, language: str) -> str:
        """ "It will go to 3 chat channels, 1,204 e-mails and 2,310 text segments (1,155
        texts)." in `language`; says so when nobody would get it."""
        lang = i18n.pick(language)
        w = _WORDS[lang]
        parts = []
        if self.channels:
            parts.append(_plural(lang, "reach.channels", self.channels))
        if self.receivers:
            parts.append(_plural(lang, "reach.receivers", self.receivers))
        for spend in self.spends:
            plugin = self._plugins.get(spend.platform)
            if plugin is None or plugin.cost is None or not spend.messages:
                continue
            units = _plural(lang, plugin.cost.units, spend.units)
            if spend.units != spend.messages:
                texts = i18n.plural(lang, "reach.texts", spend.messages)
                units = w["messages"].format(
                    units=units, n=i18n.format_number(spend.messages, lang), messages=texts
                )
            parts.append(units)
        if not parts:
            return w["nobody"]
        return w["lead"].format(parts=i18n.format_list(parts, lang))


def _plural(language: str, context: str, n: int) -> str:
    return i18n.plural(language, context, n).format(n=i18n.format_number(n, language))


def cost_sections(
    config: StrikeConfig, plugins: Plugins | None = None
) -> dict[str, Section | None]:
    """The campaign-file sections of the plugins that cost per message (their `measure`
    reads them: an SMS plugin's segment limit)."""
    plugins = installed_plugins() if plugins is None else plugins
    return {
        name: config.plugin_config(name).section
        for name, plugin in plugins.items()
        if plugin.cost is not None
    }


async def reach(
    store: Store,
    campaign: Campaign,
    update: Update,
    *,
    sections: Mapping[str, Section | None] | None = None,
    plugins: Plugins | None = None,
) -> Reach:
    """Who would receive `update` if it were posted now: its urgency and its audience
    decide, counted over the rows the fan-out's query gives (`SiteStore.recipients`)."""
    plugins = installed_plugins() if plugins is None else plugins
    sections = sections or {}
    async with store.read() as tx:
        audience = await tx.audience_counts(str(update.urgency), update.audience)
    channels = receivers = 0
    groups: Counter[tuple[str, str, str]] = Counter()
    per_platform: Counter[str] = Counter()
    for (platform, language, zone), n in audience.items():
        per_platform[platform] += n
        plugin = plugins.get(platform)
        if plugin is not None and plugin.events:
            receivers += n
        elif plugin is None or plugin.cost is None:
            channels += n
        else:
            groups[(platform, language, zone)] += n
    messages: Counter[str] = Counter()
    units: Counter[str] = Counter()
    for (platform, language, zone), n in groups.items():
        cost = plugins[platform].cost
        assert cost is not None
        message = update_message(update, language, campaign, timezone=zone)
        each = cost.measure(message, campaign, sections.get(platform))
        messages[platform] += n
        units[platform] += n * each
    spends = tuple(Spend(p, messages[p], units[p]) for p in sorted(messages))
    return Reach(channels, spends, receivers, plugins, dict(sorted(per_platform.items())))
