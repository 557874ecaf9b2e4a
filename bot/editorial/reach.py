"""How far an update will go, for the preview before it is posted: chat channels, and what
the platforms that reach people one by one will spend (e-mails, text segments).

    found = await reach(store, campaign, update)
    found.sentence("en")  # "It will go to 3 chat channels, 1,204 e-mails and 2,310 text
                          #  segments (1,155 texts)."

Every surface's preview uses this (Discord's and Slack's forms, `/strike post`,
`strikebot post --dry-run`). Text segments depend on the wording in each language, so the
update is rendered once per (platform, language, time zone) and measured by the plugin's
`Cost.measure`, exactly as it will be sent.

The sentence ends with how long each platform takes at its configured pace (`paces`, from
each plugin's `Plugin.pacing` and its `[delivery]` keys): "1,155 texts at 1 a second: about
19 minutes."; past an hour it says so, with the plugin's advice (`Plugin.slow_advice`).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot import i18n
from bot.config import StrikeConfig
from bot.messages.compose import update_message
from bot.models import Campaign, Update
from bot.plugins import Plugins, Section, installed_plugins
from bot.plugins.outbound import Pacing
from bot.store import Store

_WORDS = i18n.Words("reach")
LONG = 3600.0  # seconds: a send this long is said to be long, with the plugin's advice
CHAT_WORTH_SAYING = 60.0  # seconds: chat channels' time is said from this long on


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
    # Each platform's configured limits (`paces`), for how long a send takes.
    paces: Mapping[str, Pacing] = field(default_factory=dict)

    def seconds(self, platform: str) -> float | None:
        """How long sending to everyone on `platform` takes at its configured pace."""
        pacing = self.paces.get(platform)
        n = self.platforms.get(platform, 0)
        if pacing is None or not n or pacing.global_per_second <= 0:
            return None
        return n / pacing.global_per_second

    def estimates(self, language: str) -> list[str]:
        """Per platform with a pace: "100,000 texts at 100 a second: about 17 minutes.",
        and past `LONG` that it is long, with the plugin's advice, in `language`. Chat
        channels only when they take a minute or more."""
        found = []
        for platform in sorted(self.paces):
            seconds = self.seconds(platform)
            if seconds is None:
                continue
            pacing = self.paces[platform]
            plugin = self._plugins.get(platform)
            n = self.platforms[platform]
            spend = self.spend(platform)
            cost = plugin.cost if plugin is not None else None
            if cost is None and seconds < CHAT_WORTH_SAYING:
                continue  # a few chat channels go in moments: nothing to say
            if cost is None:
                count = _count_term("reach.channels", n, numbered=True)
            elif cost.messages:
                count = _count_term(cost.messages, n, numbered=True)
            elif spend is None or spend.units == spend.messages:
                count = _count_term(cost.units, n, numbered=True)
            else:
                count = _count_term("reach.texts", n, numbered=False)
            rate = i18n.local(functools.partial(_amount, pacing.global_per_second))
            took = i18n.local(functools.partial(_duration, seconds))
            key = "reach.estimate_long" if seconds >= LONG else "reach.estimate"
            line = i18n.say(language, key, count=count, rate=rate, duration=took)
            if seconds >= LONG and plugin is not None and plugin.slow_advice:
                line = f"{line} {i18n.say(language, plugin.slow_advice)}"
            found.append(line)
        return found

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
        lead = w["lead"].format(parts=i18n.format_list(parts, lang))
        return " ".join([lead, *self.estimates(lang)])


def _plural(language: str, context: str, n: int) -> str:
    return i18n.plural(language, context, n).format(n=i18n.format_number(n, language))


def _count_term(context: str, n: int, *, numbered: bool) -> i18n.Term:
    """`n` of a plural message as a piece of a sentence: "1,204 e-mails" from a message with
    `{n}`, "100,000 texts" from one without (`numbered=False`)."""

    def render(language: str) -> str:
        if numbered:
            return _plural(language, context, n)
        return f"{i18n.format_number(n, language)} {i18n.plural(language, context, n)}"

    return i18n.Term(render, (context,))


def _amount(x: float, language: str) -> str:
    return i18n.format_amount(x, language)


def _duration(seconds: float, language: str) -> str:
    """'45 seconds', '17 minutes', '28 hours', '3 days' (CLDR), rounded to the unit that
    keeps the number readable."""
    for unit, size, below in (
        ("second", 1, 90),
        ("minute", 60, 90 * 60),
        ("hour", 3600, 48 * 3600),
    ):
        if seconds < below:
            return i18n.format_duration(max(round(seconds / size), 1), unit, language)
    return i18n.format_duration(round(seconds / 86400), "day", language)


def paces(config: StrikeConfig, plugins: Plugins | None = None) -> dict[str, Pacing]:
    """Each plugin's configured limits, from its `[delivery]` keys (`Plugin.pacing`), for
    the preview's time estimate."""
    plugins = installed_plugins() if plugins is None else plugins
    return {
        name: plugin.pacing(config.plugin_config(name).delivery)
        for name, plugin in plugins.items()
        if plugin.pacing is not None
    }


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
    paces: Mapping[str, Pacing] | None = None,
) -> Reach:
    """Who would receive `update` if it were posted now: its urgency and its audience
    decide, counted over the rows the fan-out's query gives (`SiteStore.recipients`); with
    `paces`, how long each platform takes."""
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
    counted = dict(sorted(per_platform.items()))
    return Reach(channels, spends, receivers, plugins, counted, dict(paces or {}))
