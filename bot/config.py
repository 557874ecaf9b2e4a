"""The campaign file (`config/strike.toml`), validated with pydantic.

A bad file is refused with the file, the key and what to write instead. Secrets never live
here: tokens come only from the environment (`Settings`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from bot import i18n
from bot.errors import ConfigError
from bot.messages.kinds import defaults as kind_defaults
from bot.models import (
    Campaign,
    CampaignKind,
    DemandStatus,
    Families,
    FamilyQuestion,
    Status,
    UpdateText,
    Urgency,
)
from bot.network import Clients, parse_proxies
from bot.plugins import (
    AdminRule,
    FromEnvironment,
    Plugin,
    Plugins,
    PluginSettings,
    Section,
    from_environment,
    installed_plugins,
)
from bot.plugins.admins import AdminList
from bot.store.engine import DEFAULT_DATABASE_URL

DEFAULT_CONFIG_PATH = Path("config/strike.toml")


def _zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(
            f"{value!r} is not a time zone; write an IANA name such as 'America/Los_Angeles'"
        ) from None
    return value


def _aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(
            "give the UTC offset, e.g. 2019-01-14T06:00:00-08:00 (a time without one is ambiguous)"
        )
    return value.astimezone(UTC)


def _hhmm(value: str) -> str:
    try:
        time.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a time of day; write it as HH:MM, e.g. '07:00'"
        ) from None
    return value


TimeZoneName = Annotated[str, AfterValidator(_zone)]
AwareDatetime = Annotated[datetime, AfterValidator(_aware)]
HHMM = Annotated[str, AfterValidator(_hhmm)]
Localized = dict[str, str]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CampaignSection(_Model):
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,62}$")
    union: str = Field(min_length=1)
    employer: str = Field(min_length=1)
    start_date: date
    strike_start: date | None = None
    timezone: TimeZoneName
    languages: list[str] = Field(min_length=1)
    public_url: str = "http://127.0.0.1:8080"
    require_approval: bool = False
    # What the workplace is: school | hospital | transit | other (bot/messages/kinds.py).
    kind: CampaignKind = CampaignKind.SCHOOL
    # The statuses admins choose from, in order (default: every status).
    statuses: list[Status] = []

    @field_validator("statuses")
    @classmethod
    def _statuses(cls, value: list[Status]) -> list[Status]:
        if len(set(value)) != len(value):
            raise ValueError("a status is listed twice")
        return value

    @field_validator("languages")
    @classmethod
    def _languages(cls, value: list[str]) -> list[str]:
        known = i18n.languages()
        unsupported = [lang for lang in value if lang not in known]
        if unsupported:
            raise ValueError(
                f"{unsupported[0]!r} has no catalogue: add "
                f"<locales>/{unsupported[0]}/LC_MESSAGES/{i18n.DOMAIN}.po in bot/locales/ or "
                f"in {i18n.LOCALES_ENV} (docs/translating.md); languages with a catalogue: "
                f"{', '.join(known)}"
            )
        if len(set(value)) != len(value):
            raise ValueError("a language is listed twice")
        return value

    @field_validator("public_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("write the full address, starting with https://")
        return value.rstrip("/")


class DeliverySection(_Model):
    """`[delivery]`: the core's keys here; each platform plugin adds its pacing keys, named
    `<platform>_...`, validated by the plugin (see `StrikeConfig.plugin_config`)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    max_attempts: int = Field(default=12, ge=1, le=100)
    # Sent, dead and cancelled deliveries older than this many days are summarised (per
    # update, platform and outcome) and purged; 0 keeps them all. The audit log stays.
    keep_history_days: int = Field(default=90, ge=0, le=3650)
    # Where to tell admins that a channel broke or an update awaits approval.
    admin_channels: list[str] = []  # "platform:workspace/channel"


class WebhooksSection(_Model):
    """`[webhooks]`: where event receivers may be, and when a failing one is switched off."""

    # Receivers on private, loopback or link-local addresses are refused unless allowed here.
    allow_private: bool = False
    allowed_networks: list[str] = []  # e.g. ["10.1.0.0/16"]: allowed even though private
    disable_after_hours: float = Field(default=48.0, gt=0, le=24 * 30)

    @field_validator("allowed_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for network in value:
            try:
                ipaddress.ip_network(network.strip(), strict=False)
            except ValueError:
                raise ValueError(
                    f"{network!r} is not a network; write it as 10.1.0.0/16 or 127.0.0.1/32"
                ) from None
        return value


class ServerSection(_Model):
    """`[server]`: what the bot's own web server withstands (docs/deploy.md). Put a reverse
    proxy in front all the same; these hold when one is missing or overwhelmed."""

    # Proxies (CIDRs) whose X-Forwarded-For is believed; STRIKEBOT_TRUSTED_PROXIES overrides.
    # Empty: every client is the address it connects from.
    trusted_proxies: list[str] = []
    # Open connections at most; 0: the process's file limit, less a quarter kept for the
    # database, the platforms and the logs (`strikebot run` raises the limit to the hard one).
    max_connections: int = Field(default=0, ge=0, le=1_000_000)
    # Open connections from one client (an IPv4 address, an IPv6 /64); trusted proxies are
    # exempt. A school's Wi-Fi behind one address needs a few dozen.
    max_connections_per_client: int = Field(default=64, ge=1, le=100_000)
    # Seconds a new connection has to send its first request's headers.
    header_timeout: float = Field(default=10.0, gt=0, le=600)
    # Seconds a request has to send its body.
    body_timeout: float = Field(default=20.0, gt=0, le=600)
    # Seconds an idle keep-alive connection stays open, and requests on one before it closes.
    keepalive_timeout: float = Field(default=15.0, gt=0, le=3600)
    keepalive_requests: int = Field(default=1000, ge=1, le=1_000_000)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: list[str]) -> list[str]:
        parse_proxies(value)
        return value


class BriefingsSection(_Model):
    default_time: HHMM = "07:00"
    grace_minutes: int = Field(default=120, ge=0, le=24 * 60)
    # The days a family who signed up gets the morning briefing, 0 = Monday ... 6 = Sunday
    # (default: the kind's: school days, Monday to Friday, for a school; every day for a
    # hospital or transit).
    days: list[Annotated[int, Field(ge=0, le=6)]] | None = Field(default=None, min_length=1)


class SignupsSection(_Model):
    """`[signups]`: how many people may sign up for e-mail and text (bot/people/signups.py)."""

    # Sign-ups from one connection (an IP address) per hour. A parents' meeting on one
    # school Wi-Fi needs more: raise it for the evening.
    per_client_per_hour: int = Field(default=20, ge=1, le=100_000)
    # Sign-ups from one network (an IPv4 /24, an IPv6 /48) per hour.
    per_network_per_hour: int = Field(default=60, ge=1, le=1_000_000)
    # Sign-ups per hour across everyone before the busy rule: then a network that already
    # signed up `per_network_when_busy` people this hour waits; others still get through.
    per_hour: int = Field(default=1000, ge=1, le=1_000_000)
    per_network_when_busy: int = Field(default=3, ge=1, le=1_000_000)
    # Confirmations sent per hour across everyone, never more (each e-mail costs a little).
    at_most_per_hour: int = Field(default=5000, ge=1, le=10_000_000)
    # How long a confirmation link (or a YES reply) stays valid; unconfirmed sign-ups are
    # deleted after it.
    confirm_hours: int = Field(default=48, ge=1, le=24 * 14)


class DemoSection(_Model):
    """`[demo]`: the campaign file is a demo of a past strike. Every command run with it
    reads the time `clock_starts` (the moment its story stands, with its offset), running
    on from there (`bot.runtime.demo`); `--real-time` keeps the real clock."""

    clock_starts: AwareDatetime


class FamilyQuestionEntry(_Model):
    """`[[families.questions]]`: a question of the campaign's own, with its answer."""

    question: Localized
    answer: Localized


# A school campaign's first names for the answers (still read): schools = answers.open.
SCHOOL_KEYS = {"schools": "open", "meals": "meals", "ask": "ask"}


class FamiliesSection(_Model):
    """`[families]`: the answers families need first, shown at the top of the public page,
    in briefings and in `/strike status`. The kind's questions (`bot.messages.kinds`: a
    school's "Are schools open?", meals, where to ask) are answered under `answers` by key
    (`open` is answered yes or no with `open`); the campaign's own follow in `questions`.
    Texts by language, like demands."""

    title: Localized = {}
    open: bool | None = None
    answers: dict[str, Localized] = {}
    questions: list[FamilyQuestionEntry] = []
    # A school campaign's first names (still read): schools_open = open, schools = answers.open.
    schools_open: bool | None = None
    schools: Localized = {}
    meals: Localized = {}
    ask: Localized = {}

    def answered(self) -> dict[str, Localized]:
        """The kind's questions' answers by key, the old names read as the new."""
        found = {new: getattr(self, old) for old, new in SCHOOL_KEYS.items() if getattr(self, old)}
        return found | {key: texts for key, texts in self.answers.items() if texts}

    def verdict(self) -> bool | None:
        return self.open if self.open is not None else self.schools_open

    def to_families(self, kind: CampaignKind) -> Families | None:
        answered = self.answered()
        verdict = self.verdict()
        if verdict is None and not answered and not self.questions and not self.title:
            return None
        found: list[FamilyQuestion] = []
        for q in kind_defaults(kind).questions:
            if q.key in answered or (q.yes and verdict is not None):
                found.append(
                    FamilyQuestion(
                        answer=answered.get(q.key, {}),
                        key=q.key,
                        context=q.context,
                        verdict=verdict if q.yes else None,
                        yes=q.yes,
                        no=q.no,
                    )
                )
        for i, own in enumerate(self.questions):
            found.append(
                FamilyQuestion(answer=own.answer, key=f"questions[{i}]", wording=own.question)
            )
        return Families(tuple(found), self.title)


class DemandEntry(_Model):
    key: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    status: DemandStatus = DemandStatus.OPEN
    title: Localized
    summary: Localized = {}
    union_position: Localized = {}
    employer_offer: Localized = {}
    facts: dict[str, list[str]] = {}
    source: str = ""
    # When the status and offer above were current (the date of the offer, with its offset).
    as_of: AwareDatetime | None = None


class UpdateEntry(_Model):
    key: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,119}$")
    published_at: AwareDatetime
    status: Status
    urgency: Urgency = Urgency.ROUTINE
    headline: Localized
    body: Localized = {}
    next_step: Localized = {}
    next_step_at: AwareDatetime | None = None
    author: str = "seed"

    def texts(self) -> dict[str, UpdateText]:
        return {
            lang: UpdateText(
                headline=headline,
                body=self.body.get(lang, ""),
                next_step=self.next_step.get(lang, ""),
            )
            for lang, headline in self.headline.items()
        }


SiteCode = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")]


class SiteGroupEntry(_Model):
    """`[[site_groups]]`: a group of sites (a local district, a region, a campus)."""

    code: SiteCode
    name: Localized
    example: bool = False  # a demo's made-up row


class SiteEntry(_Model):
    """`[[sites]]`: a site (a school, a worksite) in a group of `[[site_groups]]`."""

    code: SiteCode
    group: SiteCode
    name: Localized
    address: str = ""
    example: bool = False


class SubscriptionEntry(_Model):
    platform: str  # an installed platform plugin's name (checked against the registry)
    workspace: str
    channel: str
    label: str = ""
    language: str | None = None  # default: the campaign's first language
    urgencies: list[Urgency] = [Urgency.ROUTINE, Urgency.IMPORTANT, Urgency.URGENT]
    briefing_time: HHMM | None = None
    timezone: TimeZoneName | None = None
    briefing_days: list[Annotated[int, Field(ge=0, le=6)]] = [0, 1, 2, 3, 4, 5, 6]  # 0 = Monday
    quiet_start: HHMM | None = None
    quiet_end: HHMM | None = None
    # What it follows (codes of [[sites]] and [[site_groups]]); neither: everything.
    sites: list[SiteCode] = []
    groups: list[SiteCode] = []

    @model_validator(mode="after")
    def _quiet_pair(self) -> SubscriptionEntry:
        if (self.quiet_start is None) != (self.quiet_end is None):
            raise ValueError("give both quiet_start and quiet_end (e.g. '21:00' and '07:00')")
        return self


@dataclass(frozen=True, slots=True)
class PluginConfig:
    """One plugin's parts of the campaign file, validated by the plugin's own models."""

    section: Section | None
    admins: AdminRule
    delivery: Section | None


class StrikeConfig(_Model):
    """The campaign file. Besides the core's sections, each installed platform plugin owns
    `[<name>]` and `[admins.<name>]` and its `<name>_...` keys in `[delivery]`; `parse_config`
    validates those with the plugin's models (`plugin_config`)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    campaign: CampaignSection
    admins: dict[str, dict[str, Any]] = {}
    delivery: DeliverySection = DeliverySection()
    briefings: BriefingsSection = BriefingsSection()
    signups: SignupsSection = SignupsSection()
    webhooks: WebhooksSection = WebhooksSection()
    server: ServerSection = ServerSection()
    families: FamiliesSection = FamiliesSection()
    demo: DemoSection | None = None
    # A status's label of the campaign's own, by language: strike_on = { en = "..." }.
    status_labels: dict[Status, Localized] = {}
    demands: list[DemandEntry] = []
    updates: list[UpdateEntry] = []
    subscriptions: list[SubscriptionEntry] = []
    site_groups: list[SiteGroupEntry] = []
    sites: list[SiteEntry] = []

    @model_validator(mode="after")
    def _cross_checks(self) -> StrikeConfig:
        languages = set(self.campaign.languages)
        default = self.campaign.languages[0]
        keys: set[str] = set()
        for i, demand in enumerate(self.demands):
            if demand.key in keys:
                raise ValueError(f"demands[{i}].key {demand.key!r} is used twice; keys are unique")
            keys.add(demand.key)
            _check_localized(f"demands[{i}].title", demand.title, languages, default)
            for name in ("summary", "union_position", "employer_offer", "facts"):
                _check_extra(f"demands[{i}].{name}", getattr(demand, name), languages)
        self._check_families(languages, default)
        for status, texts in self.status_labels.items():
            if self.campaign.statuses and status not in self.campaign.statuses:
                raise ValueError(
                    f"status_labels.{status.value} labels a status not in [campaign] statuses"
                )
            _check_extra(f"status_labels.{status.value}", texts, languages)
        update_keys: set[str] = set()
        for i, update in enumerate(self.updates):
            if update.key in update_keys:
                raise ValueError(f"updates[{i}].key {update.key!r} is used twice; keys are unique")
            update_keys.add(update.key)
            _check_localized(f"updates[{i}].headline", update.headline, languages, default)
            if self.campaign.statuses and update.status not in self.campaign.statuses:
                raise ValueError(
                    f"updates[{i}].status {update.status.value!r} is not in [campaign] statuses"
                )
            for name in ("body", "next_step"):
                _check_extra(f"updates[{i}].{name}", getattr(update, name), languages)
        group_codes = {g.code for g in self.site_groups}
        for i, group in enumerate(self.site_groups):
            _check_localized(f"site_groups[{i}].name", group.name, languages, default)
        for i, site in enumerate(self.sites):
            _check_localized(f"sites[{i}].name", site.name, languages, default)
            if site.group not in group_codes:
                raise ValueError(
                    f"sites[{i}].group {site.group!r} is not a code of [[site_groups]]"
                )
        for i, sub in enumerate(self.subscriptions):
            if sub.language is not None and sub.language not in languages:
                raise ValueError(
                    f"subscriptions[{i}].language {sub.language!r} is not in [campaign] "
                    f"languages; use one of {', '.join(self.campaign.languages)}"
                )
        return self

    def _check_families(self, languages: set[str], default: str) -> None:
        families = self.families
        kind = self.campaign.kind
        keys = [q.key for q in kind_defaults(kind).questions]
        if kind is not CampaignKind.SCHOOL:
            for old in ("schools_open", *SCHOOL_KEYS):
                if old in families.model_fields_set and old != "ask":
                    raise ValueError(
                        f"families.{old} is a school campaign's key; this campaign's kind is "
                        f"{kind.value!r}: answer its questions under [families.answers] "
                        f"({', '.join(keys)}), and `open = true|false`"
                    )
        for key in families.answers:
            if key not in keys:
                raise ValueError(
                    f"families.answers.{key}: a {kind.value} campaign's questions are "
                    f"{', '.join(keys)}; add others under [[families.questions]]"
                )
        for key, texts in families.answered().items():
            _check_extra(f"families.answers.{key}", texts, languages)
        _check_extra("families.title", families.title, languages)
        for i, own in enumerate(families.questions):
            _check_localized(f"families.questions[{i}].question", own.question, languages,
                             default)  # fmt: skip
            _check_localized(f"families.questions[{i}].answer", own.answer, languages, default)

    # -- what the rest of the program uses --------------------------------------

    def to_campaign(self) -> Campaign:
        c = self.campaign
        return Campaign(
            slug=c.slug,
            union=c.union,
            employer=c.employer,
            start_date=c.start_date,
            timezone=c.timezone,
            languages=tuple(c.languages),
            public_url=c.public_url,
            require_approval=c.require_approval,
            strike_start=c.strike_start,
            families=self.families.to_families(c.kind),
            kind=c.kind,
            statuses=tuple(c.statuses),
            status_labels={status: dict(texts) for status, texts in self.status_labels.items()},
            briefing_days=(
                frozenset(self.briefings.days)
                if self.briefings.days is not None
                else kind_defaults(c.kind).briefing_days
            ),
        )

    def to_admins(self) -> AdminList:
        rules = {name: self.plugin_config(name).admins for name in self._plugins}
        return AdminList(rules, file=self.file)

    @property
    def file(self) -> str:
        """The campaign file this was read from, as people name it."""
        return self._source if not self._source.startswith("<") else "the campaign file"

    def plugin_config(self, name: str) -> PluginConfig:
        """The `[<name>]`, `[admins.<name>]` and `[delivery] <name>_...` parts, validated
        with the plugin's models when first asked for. Raises `ConfigError` naming the key."""
        try:
            parts = self._plugins[name]
        except KeyError:
            raise ConfigError(f"No platform plugin called {name!r} is installed.") from None
        if not isinstance(parts, PluginConfig):
            parts = self._plugins[name] = _validate_parts(parts, self._source)
        return parts

    def check(self) -> StrikeConfig:
        """Validate every plugin's parts now (what `strikebot run` does before starting):
        a mistake in any platform's table is refused before anything runs."""
        for name in self._plugins:
            self.plugin_config(name)
        return self

    # Each plugin's parts: as read (its plugin and raw tables) until first asked for.
    _plugins: dict[str, PluginConfig | _RawParts] = PrivateAttr(default_factory=dict)
    _source: str = PrivateAttr(default="<config>")


def _check_localized(where: str, value: Localized, languages: set[str], default: str) -> None:
    if default not in value:
        raise ValueError(f"{where} needs a {default!r} text (the campaign's first language)")
    extra = set(value) - languages
    if extra:
        raise ValueError(
            f"{where} has text in {sorted(extra)[0]!r}, which is not in [campaign] languages"
        )


def _check_extra(where: str, value: dict[str, Any], languages: set[str]) -> None:
    extra = set(value) - languages
    if extra:
        raise ValueError(
            f"{where} has text in {sorted(extra)[0]!r}, which is not in [campaign] languages"
        )


def load_config(path: Path | str | None = None, *, platforms: bool = True) -> StrikeConfig:
    """Read and validate the campaign file. Raises `ConfigError` naming file, key and fix.
    With `platforms=False` each plugin's tables are validated only when first used (for a
    command that uses no platform: `strikebot status`)."""
    path = Path(path or from_environment(CoreSettings).config_path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file. Copy config/strike.toml from the repository or set "
            "STRIKEBOT_CONFIG to your campaign file."
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror}). Point --config or STRIKEBOT_CONFIG at "
            "a readable campaign file."
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text. Save it as UTF-8 and try again.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}). Fix the line it names.") from None
    return parse_config(raw, source=str(path), platforms=platforms)


def parse_config(
    raw: dict[str, Any],
    *,
    source: str = "<config>",
    plugins: Plugins | None = None,
    platforms: bool = True,
) -> StrikeConfig:
    """Validate the core's sections and which plugin owns each other table and key, then
    each plugin's parts with its models; with `platforms=False`, each plugin's only when
    first used (`plugin_config`)."""
    plugins = installed_plugins() if plugins is None else plugins
    try:
        config = StrikeConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source, raw)) from None
    problems = _unclaimed(config, plugins)
    if problems:
        raise ConfigError("\n".join(f"{source}: {problem}" for problem in problems[:5]))
    delivery_extra = config.delivery.model_extra or {}
    for name, plugin in plugins.items():
        prefix = f"{name}_"
        config._plugins[name] = _RawParts(
            plugin,
            (config.model_extra or {}).get(name, {}),
            config.admins.get(name, {}),
            {k: v for k, v in delivery_extra.items() if k.startswith(prefix)},
        )
    config._source = source
    return config.check() if platforms else config


@dataclass(frozen=True, slots=True)
class _RawParts:
    """One plugin's tables as the campaign file gives them, not yet validated."""

    plugin: Plugin
    section: dict[str, Any]
    admins: dict[str, Any]
    delivery: dict[str, Any]


def _validate_parts(raw: _RawParts, source: str) -> PluginConfig:
    plugin, name = raw.plugin, raw.plugin.name
    plugin.delivery_keys()  # a plugin whose keys are not its own is refused
    validated: list[Any] = []
    for where, model, values in (
        (name, plugin.section, raw.section),
        (f"admins.{name}", plugin.admins, raw.admins),
        ("delivery", plugin.delivery, raw.delivery),
    ):
        try:
            validated.append(None if model is None else model.model_validate(values))
        except ValidationError as exc:
            raise ConfigError(_explain(exc, source, values, prefix=where)) from None
    return PluginConfig(*validated)


def admin_list(raw: Mapping[str, Any], plugins: Plugins | None = None) -> AdminList:
    """Admins from `[admins]`-shaped data ({"platform": {"user_ids": [...]}}), each platform
    read by its plugin's rule (platforms not given get their defaults)."""
    plugins = installed_plugins() if plugins is None else plugins
    unknown = set(raw) - set(plugins)
    if unknown:
        raise ConfigError(f"admins.{sorted(unknown)[0]}: no such platform is installed")
    rules = {}
    for name, plugin in plugins.items():
        try:
            rules[name] = plugin.admins.model_validate(raw.get(name, {}))
        except ValidationError as exc:
            raise ConfigError(
                _explain(exc, "<admins>", dict(raw), prefix=f"admins.{name}")
            ) from None
    return AdminList(rules)


def _unclaimed(config: StrikeConfig, plugins: Plugins) -> list[str]:
    """Sections and keys that no installed plugin owns: misspellings, or a missing plugin."""
    known = ", ".join(plugins) or "none"
    problems = []
    for key in config.model_extra or {}:
        if key not in plugins or not plugins[key].declares("section"):
            problems.append(
                f"{key}: unknown section; check its spelling against config/strike.toml "
                f"(installed platforms: {known})"
            )
    for name in config.admins:
        if name not in plugins:
            problems.append(
                f"admins.{name}: no platform called {name!r} is installed (installed: {known})"
            )
    for key in config.delivery.model_extra or {}:
        # A key a plugin does not declare is refused when its part is validated.
        owner = next((p for p in plugins.values() if key.startswith(f"{p.name}_")), None)
        if owner is None or not owner.declares("delivery"):
            problems.append(
                f"delivery.{key}: unknown key; check its spelling against config/strike.toml"
            )
    delivering = plugins.delivering
    for i, sub in enumerate(config.subscriptions):
        if sub.platform not in delivering:
            problems.append(
                f"subscriptions[{i}].platform: {sub.platform!r} is not an installed platform; "
                f"use one of: {', '.join(delivering) or 'none'}"
            )
    return problems


def _explain(exc: ValidationError, source: str, raw: dict[str, Any], *, prefix: str = "") -> str:
    lines = []
    for error in exc.errors()[:5]:
        loc = _dotted(error["loc"], raw)
        loc = f"{prefix}.{loc}" if prefix and loc else prefix or loc
        message = _config_problem(error)
        got = (
            ""
            if error["type"] in ("missing", "extra_forbidden")
            else f" (got {_shown(error['input'])})"
        )
        where = f"{loc}: " if loc else ""
        lines.append(f"{source}: {where}{message}{got}")
    more = len(exc.errors()) - 5
    if more > 0:
        lines.append(f"...and {more} more problem(s).")
    return "\n".join(lines)


_PATTERNS = {
    CampaignSection.model_fields["slug"].metadata[0].pattern: "use 2-63 lower-case letters, "
    "digits and '-', starting with a letter or a digit, e.g. acme-workers-2026",
}


def _config_problem(error: ErrorDetails) -> str:
    """What is wrong with one value of the campaign file, in words (no pydantic jargon)."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "extra_forbidden":
        return "unknown key; check its spelling against config/strike.toml"
    if kind == "missing":
        return "required; add it"
    if kind == "string_pattern_mismatch":
        return _PATTERNS.get(str(ctx.get("pattern")), "not in the form this key takes")
    if kind in ("string_too_short", "too_short"):
        return "may not be empty" if ctx.get("min_length") == 1 else "too short"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bounds = {"greater_than_equal": "at least", "less_than_equal": "at most",
                  "greater_than": "more than", "less_than": "less than"}  # fmt: skip
        limit = next(iter(ctx.values()), "")
        return f"must be {bounds[kind]} {limit}"
    if kind in ("bool_type", "bool_parsing"):
        return "write true or false"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "write a whole number"
    if kind in ("float_type", "float_parsing"):
        return "write a number"
    if kind in ("string_type",):
        return 'write text in double quotes, e.g. "…"'
    if kind in ("list_type",):
        return 'write a list in brackets, e.g. ["…", "…"]'
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return 'write a table of keys, e.g. { en = "…" }'
    if kind in (
        "date_type",
        "date_parsing",
        "date_from_datetime_inexact",
        "date_from_datetime_parsing",
    ):
        return "write a date as YYYY-MM-DD, e.g. 2019-01-14"
    if kind in ("datetime_type", "datetime_parsing", "datetime_from_date_parsing"):
        return "write a date and time with its UTC offset, e.g. 2019-01-14T06:00:00-08:00"
    if kind == "enum":
        return f"use one of {ctx.get('expected')}"
    if kind == "literal_error":
        return f"use {ctx.get('expected')}"
    return str(error["msg"]).removeprefix("Value error, ")


def _shown(value: object) -> str:
    """A value from the campaign file as it was written there (TOML), not as Python's repr."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:79] + "…"


def _dotted(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class CoreSettings(FromEnvironment):
    """The core's own variables, read by pydantic-settings; each default is written here
    once (docs/configuration.md lists them, and a test keeps the two in step)."""

    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        alias="STRIKEBOT_DATABASE_URL",
        description="SQLite file, or postgresql+asyncpg://user:password@host/db",
    )
    config_path: Path = Field(
        default=DEFAULT_CONFIG_PATH, alias="STRIKEBOT_CONFIG", description="the campaign file"
    )
    http_host: str = Field(
        default="127.0.0.1", alias="STRIKEBOT_HTTP_HOST", description="where the web server listens"
    )
    http_port: int = Field(default=8080, alias="STRIKEBOT_HTTP_PORT", description="its port")

    trusted_proxies: str | None = Field(
        default=None,
        alias="STRIKEBOT_TRUSTED_PROXIES",
        description="the proxies whose X-Forwarded-For is believed, comma-separated CIDRs "
        "(replaces [server] trusted_proxies)",
    )
    proxy_hops: str | None = Field(
        default=None, alias="STRIKEBOT_PROXY_HOPS", description="no longer read: see above"
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str | None) -> str | None:
        if value is not None:
            parse_proxies(tuple(p.strip() for p in value.split(",") if p.strip()))
        return value

    @field_validator("proxy_hops")
    @classmethod
    def _hops(cls, value: str | None) -> str | None:
        if value is not None and value.strip() not in ("", "0"):
            raise ValueError(
                f"{value} is no longer read: counting hops let anyone who reaches the port "
                "directly write their own X-Forwarded-For. Name the proxy instead: "
                "STRIKEBOT_TRUSTED_PROXIES=<its address>/32 (or [server] trusted_proxies in "
                "the campaign file), and remove STRIKEBOT_PROXY_HOPS"
            )
        return value

    @field_validator("http_port", mode="before")
    @classmethod
    def _port(cls, value: object) -> object:
        text = str(value).strip()
        if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
            raise ValueError(f"{text} is not a port; use a number from 1 to 65535, such as 8080")
        return int(text)


@dataclass(frozen=True, slots=True)
class PluginVariables(Mapping[str, PluginSettings]):
    """Each installed plugin's variables by name, read from `env` when first asked for (a
    bad one is refused then): a command that uses no platform, such as `strikebot status`,
    builds none of their models. `strikebot run` reads every one as it starts."""

    plugins: Plugins
    env: Mapping[str, str]
    read: dict[str, PluginSettings] = field(default_factory=dict)

    def __getitem__(self, name: str) -> PluginSettings:
        found = self.read.get(name)
        if found is None:
            found = self.read[name] = self.plugins[name].settings.from_env(self.env)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.plugins)

    def __len__(self) -> int:
        return len(self.plugins)


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that comes from the environment: the core's variables (`CoreSettings`),
    and each installed plugin's (`PluginSettings`, read when first used). Secrets are never
    logged or printed."""

    core: CoreSettings = field(default_factory=lambda: from_environment(CoreSettings, {}))
    plugins: Mapping[str, PluginSettings] = field(default_factory=dict)
    # STRIKEBOT_TRUSTED_PROXIES (comma-separated CIDRs), when set: replaces [server]'s.
    trusted_proxies: tuple[str, ...] | None = None

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, *, plugins: Plugins | None = None
    ) -> Settings:
        """The core's variables, and every installed plugin's as they are used, from `env`
        (default: the process's environment as it is now)."""
        plugins = installed_plugins() if plugins is None else plugins
        env = dict(os.environ) if env is None else env
        core = from_environment(CoreSettings, env)
        proxies = None
        if core.trusted_proxies is not None:
            proxies = tuple(p.strip() for p in core.trusted_proxies.split(",") if p.strip())
        return cls(
            core=core,
            plugins=PluginVariables(plugins, env),
            trusted_proxies=proxies,
        )

    @property
    def database_url(self) -> str:
        return self.core.database_url

    @property
    def config_path(self) -> Path:
        return self.core.config_path

    @property
    def http_host(self) -> str:
        return self.core.http_host

    @property
    def http_port(self) -> int:
        return self.core.http_port

    def plugin(self, plugin: Plugin) -> PluginSettings:
        """`plugin`'s settings (its defaults when they were not read from the environment)."""
        found = self.plugins.get(plugin.name)
        return found if found is not None else plugin.settings.from_env({})

    def check(self) -> None:
        """Read every plugin's variables now, a bad one refused (`strikebot run` does so
        before it touches the database)."""
        for _ in self.plugins.values():
            pass

    def secrets(self) -> list[str]:
        return [secret for found in self.plugins.values() for secret in found.secrets()]


def clients_for(settings: Settings, config: StrikeConfig) -> Clients:
    """Whose X-Forwarded-For is believed: STRIKEBOT_TRUSTED_PROXIES when set, else
    `[server] trusted_proxies`."""
    chosen = settings.trusted_proxies
    return Clients(parse_proxies(config.server.trusted_proxies if chosen is None else chosen))
