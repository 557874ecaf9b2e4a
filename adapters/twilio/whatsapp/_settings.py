"""WhatsApp settings: the Twilio account and WhatsApp sender (environment), the
`[whatsapp]` section (templates, countries, quiet hours) and the pace (`[delivery]
whatsapp_...`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from bot.ports import Pacing, Section

from .._settings import Address, ServiceSid, TwilioAccount, TwilioSection

NAME = "whatsapp"
CONTENT_API = "https://content.twilio.com"
# What a template's variables ({{1}}, {{2}}...) may be filled with, in the order given.
Variable = Literal["sender", "title", "body", "next_step", "url"]
KINDS = ("update", "correction", "retraction", "briefing")


class WhatsAppSettings(TwilioAccount):
    """The same Twilio account as texts (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN) and the
    number registered as the WhatsApp sender (TWILIO_WHATSAPP_FROM, E.164) turn WhatsApp on;
    TWILIO_WHATSAPP_MESSAGING_SERVICE_SID sends through a messaging service instead.
    TWILIO_CONTENT_API_BASE points the Content API at a fake."""

    number: str | None = Field(default=None, alias="TWILIO_WHATSAPP_FROM")
    messaging_service: ServiceSid | None = Field(
        default=None, alias="TWILIO_WHATSAPP_MESSAGING_SERVICE_SID"
    )
    content_base: Address = Field(default=CONTENT_API, alias="TWILIO_CONTENT_API_BASE")

    @field_validator("number")
    @classmethod
    def _number(cls, value: str | None) -> str | None:
        if value is not None:
            value = value.removeprefix("whatsapp:")
            if not re.fullmatch(r"\+[1-9][0-9]{6,14}", value):
                raise ValueError("write the WhatsApp sender's number in E.164, e.g. +12135550100")
        return value

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


class WhatsAppSection(TwilioSection):
    """`[whatsapp]`: the templates, which countries' numbers may join, when messages may
    go, and how they say who sends them."""

    templates: Templates = Field(default_factory=Templates)
    # Free-form messages only to people who wrote within this many hours (WhatsApp allows
    # 24; the hour to spare covers a message queued or retried near the end).
    window_hours: float = Field(default=23.0, gt=0, le=24)


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
