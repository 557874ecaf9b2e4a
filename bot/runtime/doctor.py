"""`strikebot doctor` and the start-up warnings: can the bot do what the campaign expects?

The core checks what it knows: the public address members' links use, whether each platform
that takes admins' commands lists real admins, the campaign file against the database, and
how complete each language's catalogue is. Each plugin answers for itself through its
`Plugin.doctor` hook (token, scopes or intents, every subscribed channel; a mail server's
login; the admin API's token), so the core names no platform. Each plugin's state comes
first: on, off (and how to switch it on), or broken (and why). Every problem comes with its
fix. The verdict (`Report.exit_code`) is "all good" only when nothing fails and something
that reaches people is on and answered. docs/cli.md lists the exit statuses.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot import i18n
from bot.clock import Clock, utcnow
from bot.config import Settings, StrikeConfig
from bot.editorial.translator_files import catalogue_status
from bot.plugins import AdminRule, Check, DoctorRequest, Plugin, Plugins, Verdict
from bot.runtime.seed import file_differences
from bot.store import Store

log = logging.getLogger("strikebot.doctor")

CORE = "campaign"
STATE = "state"  # the subject of each plugin's first line: on, off or broken
PLUGIN_TIMEOUT = 30.0  # seconds a plugin's doctor may take in all
# Exit statuses of `strikebot doctor` (docs/cli.md); 2 and 4 are every command's (bad input,
# database unavailable).
EXIT_OK = 0
EXIT_FAILING = 1
EXIT_NOTHING_REACHED = 5
# Ids the shipped campaign file and `strikebot init` examples use as placeholders.
_PLACEHOLDER = re.compile(r"placeholder|^([1-9])0{12,}[1-9]$|^0+$", re.IGNORECASE)
# How many of a partial catalogue's missing sentences a line names.
NAMED_GAPS = 3


def is_loopback(url: str) -> bool:
    """Whether members could not open `url` from their phones (loopback or unspecified)."""
    host = (urlsplit(url).hostname or "").strip("[]").lower()
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def placeholder_ids(values: object) -> list[str]:
    """The ids in an `[admins.<platform>]` table that are still placeholders."""
    found: list[str] = []
    if isinstance(values, dict):
        for value in values.values():
            if isinstance(value, list):
                found += [str(v) for v in value if _PLACEHOLDER.search(str(v))]
    return found


def has_token(plugin: Plugin, settings: Settings) -> bool:
    """Whether a platform that reaches people is switched on by a secret of its own."""
    own = settings.plugin(plugin)
    return plugin.delivers and own.enabled and bool(own.secrets())


def takes_admins(plugin: Plugin) -> bool:
    """Whether people post from this platform, so `[admins.<name>]` matters: a plugin that
    declares its own admin rule, and does not reach people at their own addresses."""
    return plugin.contact is None and plugin.admins is not AdminRule


def campaign_checks(settings: Settings, config: StrikeConfig, plugins: Plugins) -> list[Check]:
    """What the core can tell without asking any platform or the database."""
    checks: list[Check] = []
    on = [p for p in plugins.values() if has_token(p, settings)]
    url = config.campaign.public_url
    if is_loopback(url):
        verdict = Verdict.FAIL if on else Verdict.WARN
        checks.append(
            Check(
                CORE,
                "public_url",
                verdict,
                f"[campaign] public_url is {url}, which only this machine can open"
                + (
                    f"; members on {', '.join(p.title for p in on)} would get dead links"
                    if on
                    else ""
                ),
                "Set public_url in the campaign file to the status page's real https:// address.",
            )
        )
    elif urlsplit(url).scheme != "https":
        checks.append(
            Check(CORE, "public_url", Verdict.WARN,
                  f"[campaign] public_url is {url}: links work, but unencrypted",
                  "Put a TLS proxy in front (docs/deploy.md) and write public_url with https://.")
        )  # fmt: skip
    else:
        checks.append(Check(CORE, "public_url", Verdict.OK, f"links point at {url}"))
    for plugin in on:
        if not takes_admins(plugin):
            continue
        rule = config.plugin_config(plugin.name).admins
        raw = rule.model_dump()
        placeholders = placeholder_ids(raw)
        listed = [v for value in raw.values() if isinstance(value, list) for v in value]
        who = plugin.admins.who[i18n.source_language()]
        if placeholders:
            checks.append(
                Check(
                    plugin.name,
                    "admins",
                    Verdict.FAIL,
                    f"[admins.{plugin.name}] still lists placeholder ids: "
                    + ", ".join(placeholders),
                    f"Replace them with your admins' real ids ({who}); see "
                    f"{plugin.docs or 'docs/configuration.md'}.",
                )
            )
        elif not listed:
            checks.append(
                Check(
                    plugin.name,
                    "admins",
                    Verdict.WARN,
                    f"[admins.{plugin.name}] lists nobody: no one can post from {plugin.title}",
                    f"Add {who} under [admins.{plugin.name}].",
                )
            )
        else:
            checks.append(
                Check(plugin.name, "admins", Verdict.OK, f"{len(listed)} admin id(s) listed")
            )
    return checks


def catalogue_checks(config: StrikeConfig) -> list[Check]:
    """How much of the bot's own sentences each campaign language has; a partial catalogue
    shows the missing sentences in the source language."""
    checks = []
    source = i18n.source_language()
    for language in config.campaign.languages:
        status = catalogue_status(language)
        subject = f"catalogue {language}"
        if language == source:
            checks.append(Check(CORE, subject, Verdict.OK, "the source language: every sentence"))
            continue
        gaps = [*status.missing, *status.stale]
        if not gaps:
            checks.append(
                Check(CORE, subject, Verdict.OK, f"all {status.total} sentences translated")
            )
            continue
        named = ", ".join(gaps[:NAMED_GAPS]) + (", ..." if len(gaps) > NAMED_GAPS else "")
        checks.append(
            Check(CORE, subject, Verdict.WARN,
                  f"{status.translated} of {status.total} sentences translated; "
                  f"{len(status.missing)} missing and {len(status.stale)} out of date ({named}) "
                  f"are shown in {i18n.language_name(source, source)}",
                  f"strikebot translations export {language}, have it translated, then "
                  "strikebot translations import (docs/translating.md).")
        )  # fmt: skip
    return checks


async def file_checks(store: Store, config: StrikeConfig, clock: Clock) -> list[Check]:
    """The campaign file against the database: each entry edited in the file since the
    database last agreed with it, and the command that applies it."""
    differences = await file_differences(store, config, clock)
    if not differences:
        return [
            Check(CORE, "campaign file", Verdict.OK, "the database follows every entry of the file")
        ]
    return [
        Check(CORE, f"file: {d.target}", Verdict.WARN,
              f"differs from the database in {', '.join(d.fields)}; the database is what people "
              "see (the file seeds it once)",
              "; ".join(d.commands) or "Change the file back to match the database.")
        for d in differences
    ]  # fmt: skip


def startup_warnings(settings: Settings, config: StrikeConfig, plugins: Plugins) -> list[str]:
    """The problems worth a clear warning at start-up: with a platform token set, a
    loopback public_url or placeholder admins. Empty when nothing is switched on."""
    if not any(has_token(p, settings) for p in plugins.values()):
        return []
    return [
        f"{check.detail}. {check.fix}"
        for check in campaign_checks(settings, config, plugins)
        if check.verdict is Verdict.FAIL
    ]


async def startup_notes(store: Store, config: StrikeConfig, clock: Clock) -> list[str]:
    """What `strikebot run` says once after seeding: each campaign-file entry the database
    does not follow (and the command that applies it), and each partial catalogue."""
    notes = [f"{d.sentence()}." for d in await file_differences(store, config, clock)]
    notes += [
        f"the {check.subject} is partial: {check.detail}. {check.fix}"
        for check in catalogue_checks(config)
        if check.verdict is not Verdict.OK
    ]
    return notes


@dataclass(frozen=True, slots=True)
class Report:
    """Everything doctor checked, and what it means: `reaching` names the platforms that are
    on, answered, and have somewhere to post (a channel that works, or people who sign up
    themselves)."""

    checks: tuple[Check, ...]
    reaching: tuple[str, ...]
    connected: tuple[str, ...]  # on and answering, whether or not anything is subscribed

    @property
    def failed(self) -> bool:
        return any(c.verdict is Verdict.FAIL for c in self.checks)

    @property
    def exit_code(self) -> int:
        if self.failed:
            return EXIT_FAILING
        return EXIT_OK if self.reaching else EXIT_NOTHING_REACHED

    def summary(self) -> str:
        """One sentence for the end of the table."""
        warned = sum(c.verdict is Verdict.WARN for c in self.checks)
        if self.failed:
            return "Some things will not work until fixed (the fix column says how)."
        if not self.reaching:
            if self.connected:
                return (
                    f"Nothing fails, but nothing reaches anyone yet: {', '.join(self.connected)} "
                    "answered, and no channel there is subscribed. Type /strike subscribe in a "
                    "channel, or strikebot subscriptions add ADDRESS."
                )
            return (
                "Nothing fails, but nothing reaches anyone yet: no platform that reaches people "
                "is connected and answering. The state lines say how to switch each on."
            )
        extra = f"; {warned} warning(s) say what will surprise people" if warned else ""
        return f"Everything checked works: {', '.join(self.reaching)} reach people{extra}."


async def run_doctor(
    settings: Settings,
    config: StrikeConfig,
    store: Store,
    plugins: Plugins,
    *,
    clock: Clock = utcnow,
) -> Report:
    """Every check: the campaign's, the file's, the catalogues', then each plugin's state
    and its own checks (asked in parallel)."""
    checks = campaign_checks(settings, config, plugins)
    checks += await file_checks(store, config, clock)
    checks += catalogue_checks(config)
    campaign = config.to_campaign()
    async with store.read() as tx:
        subs = await tx.list_subscriptions()
    people = sum(1 for s in subs if (p := plugins.get(s.platform)) and p.contact is not None)
    channels_total = len(subs) - people
    checks.append(
        Check(CORE, "database", Verdict.OK,
              f"{channels_total} channel(s) subscribed, {people} person(s) signed up")
    )  # fmt: skip
    asked: list[tuple[Plugin, int, asyncio.Task[Sequence[Check]]]] = []
    states: dict[str, list[Check]] = {}
    for plugin in plugins.values():
        own = settings.plugin(plugin)
        mine = tuple(s for s in subs if s.platform == plugin.name)
        whom = _whom(plugin, len(mine))
        if not own.enabled:
            hint = own.off_hint or f"see {plugin.docs}"
            if mine:
                states[plugin.name] = [
                    Check(plugin.name, STATE, Verdict.FAIL,
                          f"off, and {whom} get nothing",
                          own.off_hint or f"Switch {plugin.title} on (see {plugin.docs}).")
                ]  # fmt: skip
            else:
                fix = hint[:1].upper() + hint[1:] + "."
                states[plugin.name] = [Check(plugin.name, STATE, Verdict.OFF, "off", fix)]
            continue
        if plugin.doctor is None:
            line = [Check(plugin.name, STATE, Verdict.OK, f"on ({whom}); it has no self-check")]
            if mine and plugin.delivers:
                line.append(
                    Check(plugin.name, "self-check", Verdict.SKIP,
                          f"{plugin.title} cannot check itself; {whom}")
                )  # fmt: skip
            states[plugin.name] = line
            continue
        parts = config.plugin_config(plugin.name)
        # People's own addresses never go to a plugin's doctor: it checks the way out only.
        channels = () if plugin.contact is not None else mine
        request = DoctorRequest(own, parts.section, parts.admins, campaign, channels)
        asked.append((plugin, len(mine), asyncio.create_task(_ask(plugin, request))))
    reaching: list[str] = []
    connected: list[str] = []
    for plugin, count, task in asked:
        found = list(await task)
        addresses = {s.address for s in subs if s.platform == plugin.name}
        broken = [c for c in found if c.verdict is Verdict.FAIL and c.subject not in addresses]
        answered = any(c.verdict is Verdict.OK for c in found) and not broken
        whom = _whom(plugin, count)
        if broken:
            state = Check(plugin.name, STATE, Verdict.FAIL, f"broken: {broken[0].detail}",
                          broken[0].fix)  # fmt: skip
        else:
            state = Check(plugin.name, STATE, Verdict.OK, f"on ({whom})")
        if answered and plugin.delivers:
            connected.append(plugin.title)
            works = any(c.verdict is Verdict.OK and c.subject in addresses for c in found)
            if plugin.contact is not None or works:
                reaching.append(plugin.title)
        states[plugin.name] = [state, *found]
    for name in plugins:  # each plugin's lines together, in the registry's order
        checks += states.get(name, [])
    return Report(tuple(checks), tuple(reaching), tuple(connected))


def _whom(plugin: Plugin, count: int) -> str:
    if plugin.contact is not None:
        return f"{count} person(s) signed up"
    if plugin.events:
        return f"{count} endpoint(s)"
    if not plugin.delivers:
        return "nothing to subscribe"
    return f"{count} channel(s) subscribed"


async def _ask(plugin: Plugin, request: DoctorRequest) -> Sequence[Check]:
    assert plugin.doctor is not None
    try:
        return await asyncio.wait_for(plugin.doctor(request), PLUGIN_TIMEOUT)
    except TimeoutError:
        return [
            Check(plugin.name, "reachable", Verdict.FAIL,
                  f"{plugin.title} did not answer within {PLUGIN_TIMEOUT:.0f} s",
                  "Check this machine's network access to the platform, then run doctor again.")
        ]  # fmt: skip
    except Exception as exc:
        log.exception("the %s doctor failed", plugin.name)
        return [
            Check(plugin.name, "self-check", Verdict.FAIL,
                  f"the check itself failed ({type(exc).__name__})",
                  "Run again; if it keeps failing, report it with the log above.")
        ]  # fmt: skip


__all__ = [
    "EXIT_FAILING",
    "EXIT_NOTHING_REACHED",
    "EXIT_OK",
    "Report",
    "campaign_checks",
    "catalogue_checks",
    "file_checks",
    "is_loopback",
    "placeholder_ids",
    "run_doctor",
    "startup_notes",
    "startup_warnings",
]
