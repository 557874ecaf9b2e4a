"""What texts and WhatsApp set alike: the Twilio account (environment) and the part of their
campaign-file sections about whom they reach, when, and who they say is sending."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator, Field, SecretStr, field_validator

from bot.ports import (
    Campaign,
    PluginSettings,
    QuietHours,
    QuietHoursSetting,
    Section,
    parse_quiet_hours,
)

if TYPE_CHECKING:
    from ._client import Refused, TwilioClient

TWILIO_API = "https://api.twilio.com"


def _service(value: str) -> str:
    if not re.fullmatch(r"MG[0-9a-fA-F]{32}", value):
        raise ValueError("a messaging service SID is 'MG' and 32 hex digits")
    return value


def address(value: str) -> str:
    """An API's base address, checked and without its trailing slash."""
    if not value.startswith(("https://", "http://")):
        raise ValueError("write the full address, e.g. https://api.twilio.com")
    return value.rstrip("/")


ServiceSid = Annotated[str, AfterValidator(_service)]
Address = Annotated[str, AfterValidator(address)]


class TwilioAccount(PluginSettings):
    """TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN, the account both plugins send through;
    TWILIO_API_BASE points at a fake."""

    account_sid: str | None = Field(default=None, alias="TWILIO_ACCOUNT_SID")
    auth_token: SecretStr | None = Field(default=None, alias="TWILIO_AUTH_TOKEN")
    api_base: Address = Field(default=TWILIO_API, alias="TWILIO_API_BASE")

    @field_validator("account_sid")
    @classmethod
    def _sid(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"AC[0-9a-fA-F]{32}", value):
            raise ValueError("an account SID is 'AC' and 32 hex digits (Twilio console, Account)")
        return value

    @property
    def token(self) -> str:
        return self.auth_token.get_secret_value() if self.auth_token else ""

    def client(
        self,
        platform: str,
        *,
        timeout: float,
        noun: str = "message",
        refusals: Mapping[int, type[Refused]] | None = None,
    ) -> TwilioClient:
        """The Messages API for this account (its SID set), for `platform`'s messages."""
        from ._client import TwilioClient  # aiohttp loads only when a plugin sends

        assert self.account_sid is not None
        return TwilioClient(
            self.api_base,
            self.account_sid,
            self.token,
            timeout=timeout,
            platform=platform,
            noun=noun,
            refusals=refusals,
        )


class TwilioSection(Section):
    """What `[sms]` and `[whatsapp]` say alike: which countries' numbers may sign up, when
    messages may go, and who they say is sending."""

    # ISO country codes of numbers that may sign up; the first is assumed for a number
    # written without +country code.
    countries: list[str] = Field(default_factory=lambda: ["US"], min_length=1)
    # Campaign time. Routine and important updates and briefings wait; urgent ones do not.
    quiet_hours: QuietHoursSetting = "21:00-08:00"
    # How every message starts, saying who sends it (e.g. "UTLA"). Default: the abbreviation
    # in brackets in [campaign] union, else the union's name.
    sender_name: str | None = Field(default=None, min_length=1, max_length=30)

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


def sender_name(campaign: Campaign, section: Section | None = None) -> str:
    """Who a message says it is from: the section's `sender_name`, else "UTLA" for "United
    Teachers Los Angeles (UTLA)"."""
    name = getattr(section, "sender_name", None)
    return str(name) if name else campaign.short_union
