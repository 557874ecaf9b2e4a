"""WhatsApp settings: the Twilio account and WhatsApp sender (environment), the
`[whatsapp]` section (templates, countries, quiet hours) and the pace (`[delivery]
whatsapp_...`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from bot.ports import (
    Pacing,
    PluginSettings,
    QuietHours,
    QuietHoursSetting,
    Section,
    parse_quiet_hours,
)

NAME = "whatsapp"
TWILIO_API = "https://api.twilio.com"
CONTENT_API = "https://content.twilio.com"
# What a template's variables ({{1}}, {{2}}...) may be filled with, in the order given.
Variable = Literal["sender", "title", "body", "next_step", "url"]
KINDS = ("update", "correction", "retraction", "briefing")


class WhatsAppSettings(PluginSettings):
    """The same Twilio account as texts (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN) and the
    number registered as the WhatsApp sender (TWILIO_WHATSAPP_FROM, E.164) turn WhatsApp on;
    TWILIO_WHATSAPP_MESSAGING_SERVICE_SID sends through a messaging service instead.
    TWILIO_API_BASE and TWILIO_CONTENT_API_BASE point at a fake."""

    account_sid: str | None = Field(default=None, alias="TWILIO_ACCOUNT_SID")
    auth_token: SecretStr | None = Field(default=None, alias="TWILIO_AUTH_TOKEN")
    number: str | None = Field(default=None, alias="TWILIO_WHATSAPP_FROM")
    messaging_service: str | None = Field(
        default=None, alias="TWILIO_WHATSAPP_MESSAGING_SERVICE_SID"
    )
    api_base: str = Field(default=TWILIO_API, alias="TWILIO_API_BASE")
    content_base: str = Field(default=CONTENT_API, alias="TWILIO_CONTENT_API_BASE")

    @field_validator("account_sid")
    @classmethod
    def _sid(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"AC[0-9a-fA-F]{32}", value):
            raise ValueError("an account SID is 'AC' and 32 hex digits (Twilio console, Account)")
        return value

    @field_validator("number")
    @classmethod
    def _number(cls, value: str | None) -> str | None:
        if value is not None:
            value = value.removeprefix("whatsapp:")
            if not re.fullmatch(r"\+[1-9][0-9]{6,14}", value):
                raise ValueError("write the WhatsApp sender's number in E.164, e.g. +12135550100")
        return value

    @field_validator("messaging_service")
    @classmethod
    def _service(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"MG[0-9a-fA-F]{32}", value):
            raise ValueError("a messaging service SID is 'MG' and 32 hex digits")
        return value

    @field_validator("api_base", "content_base")
    @classmethod
    def _base(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("write the full address, e.g. https://api.twilio.com")
        return value.rstrip("/")

    @property
    def enabled(self) -> bool:
        return bool(self.account_sid and self.auth_token and self.number)

    @property
    def off_hint(self) -> str:
        return (
            "set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_WHATSAPP_FROM (the number "
            "registered as your WhatsApp sender) to reach families on WhatsApp "
            "(docs/whatsapp.md)"
        )

    @property
    def token(self) -> str:
        return self.auth_token.get_secret_value() if self.auth_token else ""


def _default_variables() -> list[Variable]:
    return ["sender", "title", "body", "url"]


class Template(Section):
    """One kind of message as an approved WhatsApp template: its content SID per language
    (Twilio's Content Template Builder, `HX...`), and what fills its {{1}}, {{2}}..."""

    content: dict[str, str] = Field(default_factory=dict)
    variables: list[Variable] = Field(default_factory=_default_variables, min_length=1)

    @field_validator("content")
    @classmethod
    def _content(cls, value: dict[str, str]) -> dict[str, str]:
        for language, sid in value.items():
            if not re.fullmatch(r"HX[0-9a-fA-F]{32}", sid):
                raise ValueError(
                    f"{language} = {sid!r}: a content SID is 'HX' and 32 hex digits "
                    "(Twilio console, Messaging, Content Template Builder)"
                )
        return value


class Templates(Section):
    """`[whatsapp.templates.<kind>]`: the template each kind of message goes as outside the
    24-hour window. A kind without its own uses `update`'s."""

    update: Template | None = None
    correction: Template | None = None
    retraction: Template | None = None
    briefing: Template | None = None

    def for_kind(self, kind: str) -> Template | None:
        own: Template | None = getattr(self, kind, None) if kind in KINDS else None
        return own or self.update


class WhatsAppSection(Section):
    """`[whatsapp]`: the templates, which countries' numbers may join, when messages may
    go, and how they say who sends them."""

    templates: Templates = Field(default_factory=Templates)
    # ISO country codes of numbers that may join; the first is assumed for a bare number.
    countries: list[str] = Field(default_factory=lambda: ["US"], min_length=1)
    quiet_hours: QuietHoursSetting = "21:00-08:00"
    sender_name: str | None = Field(default=None, min_length=1, max_length=30)
    # Free-form messages only to people who wrote within this many hours (WhatsApp allows
    # 24; the hour to spare covers a message queued or retried near the end).
    window_hours: float = Field(default=23.0, gt=0, le=24)

    @field_validator("countries")
    @classmethod
    def _countries(cls, value: list[str]) -> list[str]:
        upper = [c.strip().upper() for c in value]
        bad = [c for c in upper if not re.fullmatch(r"[A-Z]{2}", c)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a two-letter country code such as 'US'")
        return upper

    def quiet(self) -> QuietHours | None:
        return parse_quiet_hours(self.quiet_hours)


class WhatsAppDelivery(Section):
    """`[delivery] whatsapp_...`: Twilio's WhatsApp pace (80 messages a second by default
    for a sender; less to be kind to the account's other traffic)."""

    whatsapp_per_second: float = Field(default=20.0, gt=0, le=1000)
    whatsapp_in_flight: int = Field(default=8, ge=1, le=100)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for WhatsApp."""
        return Pacing(
            global_per_second=self.whatsapp_per_second,
            per_channel_per_second=1.0,
            burst=max(1, int(self.whatsapp_per_second)),
            max_in_flight=self.whatsapp_in_flight,
            in_flight_setting="[delivery] whatsapp_in_flight",
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: WhatsApp's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, WhatsAppDelivery) else WhatsAppDelivery()).pacing()
