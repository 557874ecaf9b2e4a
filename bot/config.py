"""The campaign file (`config/strike.toml`), validated with pydantic.

A bad file is refused with the file, the key and what to write instead. Secrets never live
here: tokens come only from the environment (`Settings`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.auth import AdminList
from bot.errors import ConfigError
from bot.models import (
    Campaign,
    DemandStatus,
    Status,
    UpdateText,
    Urgency,
)

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

    @field_validator("languages")
    @classmethod
    def _languages(cls, value: list[str]) -> list[str]:
        unsupported = [lang for lang in value if lang not in ("en", "es")]
        if unsupported:
            raise ValueError(f"{unsupported[0]!r} is not supported yet; use 'en' and/or 'es'")
        if len(set(value)) != len(value):
            raise ValueError("a language is listed twice")
        return value

    @field_validator("public_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("write the full address, starting with https://")
        return value.rstrip("/")


class DiscordAdmins(_Model):
    user_ids: list[str] = []
    role_ids: list[str] = []
    manage_server_is_admin: bool = True


class SlackAdmins(_Model):
    user_ids: list[str] = []
    usergroup_ids: list[str] = []


class ConsoleAdmins(_Model):
    user_ids: list[str] = ["console"]


class AdminsSection(_Model):
    discord: DiscordAdmins = DiscordAdmins()
    slack: SlackAdmins = SlackAdmins()
    console: ConsoleAdmins = ConsoleAdmins()


class DeliverySection(_Model):
    discord_global_per_second: float = Field(default=48.0, gt=0, le=50)
    discord_per_channel_per_second: float = Field(default=5.0, gt=0)
    slack_per_channel_per_second: float = Field(default=1.0, gt=0, le=1.0)
    slack_workspace_per_second: float = Field(default=20.0, gt=0)
    max_attempts: int = Field(default=12, ge=1, le=100)
    # Where to tell admins that a channel broke or an update awaits approval.
    admin_channels: list[str] = []  # "platform:workspace/channel"


class BriefingsSection(_Model):
    default_time: HHMM = "07:00"
    grace_minutes: int = Field(default=120, ge=0, le=24 * 60)


class DiscordSection(_Model):
    guild_ids: list[str] = []  # command tree synced to these instantly


class SlackSection(_Model):
    mode: str = Field(default="auto", pattern="^(auto|socket|http)$")


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


class SubscriptionEntry(_Model):
    platform: str = Field(pattern="^(discord|slack|console)$")
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

    @model_validator(mode="after")
    def _quiet_pair(self) -> SubscriptionEntry:
        if (self.quiet_start is None) != (self.quiet_end is None):
            raise ValueError("give both quiet_start and quiet_end (e.g. '21:00' and '07:00')")
        return self


class StrikeConfig(_Model):
    campaign: CampaignSection
    admins: AdminsSection = AdminsSection()
    delivery: DeliverySection = DeliverySection()
    briefings: BriefingsSection = BriefingsSection()
    discord: DiscordSection = DiscordSection()
    slack: SlackSection = SlackSection()
    demands: list[DemandEntry] = []
    updates: list[UpdateEntry] = []
    subscriptions: list[SubscriptionEntry] = []

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
        update_keys: set[str] = set()
        for i, update in enumerate(self.updates):
            if update.key in update_keys:
                raise ValueError(f"updates[{i}].key {update.key!r} is used twice; keys are unique")
            update_keys.add(update.key)
            _check_localized(f"updates[{i}].headline", update.headline, languages, default)
            for name in ("body", "next_step"):
                _check_extra(f"updates[{i}].{name}", getattr(update, name), languages)
        for i, sub in enumerate(self.subscriptions):
            if sub.language is not None and sub.language not in languages:
                raise ValueError(
                    f"subscriptions[{i}].language {sub.language!r} is not in [campaign] "
                    f"languages; use one of {', '.join(self.campaign.languages)}"
                )
        return self

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
        )

    def to_admins(self) -> AdminList:
        a = self.admins
        return AdminList(
            discord_user_ids=frozenset(a.discord.user_ids),
            discord_role_ids=frozenset(a.discord.role_ids),
            discord_manage_server_is_admin=a.discord.manage_server_is_admin,
            slack_user_ids=frozenset(a.slack.user_ids),
            slack_usergroup_ids=frozenset(a.slack.usergroup_ids),
            console_user_ids=frozenset(a.console.user_ids),
        )


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


def load_config(path: Path | str | None = None) -> StrikeConfig:
    """Read and validate the campaign file. Raises `ConfigError` naming file, key and fix."""
    path = Path(path or os.environ.get("STRIKEBOT_CONFIG") or DEFAULT_CONFIG_PATH)
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
    return parse_config(raw, source=str(path))


def parse_config(raw: dict[str, Any], *, source: str = "<config>") -> StrikeConfig:
    try:
        return StrikeConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source, raw)) from None


def _explain(exc: ValidationError, source: str, raw: dict[str, Any]) -> str:
    lines = []
    for error in exc.errors()[:5]:
        loc = _dotted(error["loc"], raw)
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key; check its spelling against config/strike.toml"
        elif error["type"] == "missing":
            message = "required; add it"
        got = (
            "" if error["type"] in ("missing", "extra_forbidden") else f" (got {error['input']!r})"
        )
        where = f"{loc}: " if loc else ""
        lines.append(f"{source}: {where}{message}{got}")
    more = len(exc.errors()) - 5
    if more > 0:
        lines.append(f"...and {more} more problem(s).")
    return "\n".join(lines)


def _dotted(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything that comes from the environment. Secrets are never logged or printed."""

    database_url: str
    config_path: Path
    http_host: str
    http_port: int
    admin_token: str | None
    discord_token: str | None
    discord_api_base: str | None
    discord_gateway_url: str | None
    slack_bot_token: str | None
    slack_signing_secret: str | None
    slack_app_token: str | None
    slack_api_url: str | None

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        e = dict(os.environ if env is None else env)
        port_text = e.get("STRIKEBOT_HTTP_PORT", "8080")
        try:
            port = int(port_text)
            if not 0 <= port <= 65535:
                raise ValueError
        except ValueError:
            raise ConfigError(
                f"STRIKEBOT_HTTP_PORT={port_text!r} is not a port; use a number such as 8080."
            ) from None
        return cls(
            database_url=e.get("STRIKEBOT_DATABASE_URL") or "sqlite+aiosqlite:///data/strikebot.db",
            config_path=Path(e.get("STRIKEBOT_CONFIG") or DEFAULT_CONFIG_PATH),
            http_host=e.get("STRIKEBOT_HTTP_HOST") or "127.0.0.1",
            http_port=port,
            admin_token=e.get("STRIKEBOT_ADMIN_TOKEN") or None,
            discord_token=e.get("DISCORD_TOKEN") or None,
            discord_api_base=e.get("DISCORD_API_BASE") or None,
            discord_gateway_url=e.get("DISCORD_GATEWAY_URL") or None,
            slack_bot_token=e.get("SLACK_BOT_TOKEN") or None,
            slack_signing_secret=e.get("SLACK_SIGNING_SECRET") or None,
            slack_app_token=e.get("SLACK_APP_TOKEN") or None,
            slack_api_url=e.get("SLACK_API_URL") or None,
        )

    def __repr__(self) -> str:
        hidden = {"admin_token", "discord_token", "slack_bot_token", "slack_signing_secret",
                  "slack_app_token"}  # fmt: skip
        parts = []
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name in hidden and value:
                value = "***"
            parts.append(f"{name}={value!r}")
        return f"Settings({', '.join(parts)})"
