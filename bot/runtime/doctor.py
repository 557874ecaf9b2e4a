"""`strikebot doctor` and the start-up warnings: can the bot do what the campaign expects?

The core checks what it knows (the public address members' links use, whether each platform
switched on has real admins, the database); each platform plugin answers for itself through
its `Plugin.doctor` hook (token, scopes or intents, and every subscribed channel), so the
core names no platform. Every problem comes with its fix.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from bot import i18n
from bot.config import Settings, StrikeConfig
from bot.plugins import Check, DoctorRequest, Plugin, Plugins, Verdict
from bot.store import Store

log = logging.getLogger("strikebot.doctor")

CORE = "campaign"
PLUGIN_TIMEOUT = 30.0  # seconds a plugin's doctor may take in all
# Ids the shipped campaign file and `strikebot init` examples use as placeholders.
_PLACEHOLDER = re.compile(r"placeholder|^([1-9])0{12,}[1-9]$|^0+$", re.IGNORECASE)


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


def campaign_checks(settings: Settings, config: StrikeConfig, plugins: Plugins) -> list[Check]:
    """What the core can tell without asking any platform."""
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
    else:
        checks.append(Check(CORE, "public_url", Verdict.OK, f"links point at {url}"))
    for plugin in on:
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


def _titles(plugins: Sequence[Plugin]) -> str:
    return ", ".join(p.title for p in plugins)


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


async def run_doctor(
    settings: Settings, config: StrikeConfig, store: Store, plugins: Plugins
) -> list[Check]:
    """Every check: the campaign's, then each switched-on plugin's (in parallel)."""
    checks = campaign_checks(settings, config, plugins)
    campaign = config.to_campaign()
    async with store.read() as tx:
        subs = await tx.list_subscriptions()
    checks.append(Check(CORE, "database", Verdict.OK, f"{len(subs)} channel(s) subscribed"))
    asked: list[tuple[Plugin, asyncio.Task[Sequence[Check]]]] = []
    for plugin in plugins.values():
        own = settings.plugin(plugin)
        channels = tuple(s for s in subs if s.platform == plugin.name)
        if not own.enabled or not plugin.delivers or plugin.contact is not None:
            if channels:
                checks.append(
                    Check(
                        plugin.name,
                        "switched on",
                        Verdict.FAIL,
                        f"{len(channels)} channel(s) are subscribed on {plugin.title}, "
                        "which is off: nothing reaches them",
                        own.off_hint or f"Switch {plugin.title} on (see {plugin.docs}).",
                    )
                )
            continue
        if plugin.doctor is None:
            if not channels:
                continue  # nothing it could fail to reach
            checks.append(
                Check(plugin.name, "self-check", Verdict.SKIP,
                      f"{plugin.title} cannot check itself; {len(channels)} channel(s)")
            )  # fmt: skip
            continue
        parts = config.plugin_config(plugin.name)
        request = DoctorRequest(own, parts.section, parts.admins, campaign, channels)
        asked.append((plugin, asyncio.create_task(_ask(plugin, request))))
    for _plugin, task in asked:
        checks += await task
    return checks


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
    "campaign_checks",
    "is_loopback",
    "placeholder_ids",
    "run_doctor",
    "startup_warnings",
]
