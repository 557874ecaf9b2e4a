"""SMS settings: the Twilio account (environment), the `[sms]` section (quiet hours,
segments, countries) and the sending pace (`[delivery] sms_...`)."""

from __future__ import annotations

import math
import re

from pydantic import Field, SecretStr, field_validator

from bot.ports import (
    Pacing,
    PluginSettings,
    QuietHours,
    QuietHoursSetting,
    Section,
    parse_quiet_hours,
)

NAME = "sms"
TWILIO_API = "https://api.twilio.com"


class SmsSettings(PluginSettings):
    """TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and a sender (TWILIO_FROM, a number in E.164,
    or TWILIO_MESSAGING_SERVICE_SID) turn texts on. TWILIO_API_BASE points at a fake."""

    account_sid: str | None = Field(default=None, alias="TWILIO_ACCOUNT_SID")
    auth_token: SecretStr | None = Field(default=None, alias="TWILIO_AUTH_TOKEN")
    sender: str | None = Field(default=None, alias="TWILIO_FROM")
    messaging_service: str | None = Field(default=None, alias="TWILIO_MESSAGING_SERVICE_SID")
    api_base: str = Field(default=TWILIO_API, alias="TWILIO_API_BASE")

    @field_validator("account_sid")
    @classmethod
    def _sid(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"AC[0-9a-fA-F]{32}", value):
            raise ValueError("an account SID is 'AC' and 32 hex digits (Twilio console, Account)")
        return value

    @field_validator("sender")
    @classmethod
    def _sender(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"\+[1-9][0-9]{6,14}", value):
            raise ValueError("write the number in E.164, e.g. +12135550100")
        return value

    @field_validator("messaging_service")
    @classmethod
    def _service(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"MG[0-9a-fA-F]{32}", value):
            raise ValueError("a messaging service SID is 'MG' and 32 hex digits")
        return value

    @field_validator("api_base")
    @classmethod
    def _base(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("write the full address, e.g. https://api.twilio.com")
        return value.rstrip("/")

    @property
    def enabled(self) -> bool:
        return bool(
            self.account_sid and self.auth_token and (self.sender or self.messaging_service)
        )

    @property
    def off_hint(self) -> str:
        return (
            "set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM (or "
            "TWILIO_MESSAGING_SERVICE_SID) to send texts (README: Reach families by text)"
        )

    @property
    def token(self) -> str:
        return self.auth_token.get_secret_value() if self.auth_token else ""


class SmsSection(Section):
    """`[sms]`: when texts may go, how long they may be, and which countries they reach."""

    # Campaign time. Routine and important updates and briefings wait; urgent ones do not.
    quiet_hours: QuietHoursSetting = "21:00-08:00"
    # A text is cut to fit this many segments (160 GSM-7 / 70 UCS-2 characters each, 153/67
    # when split), ending with the link to the full update.
    max_segments: int = Field(default=2, ge=1, le=10)
    # ISO country codes of numbers that may sign up; the first is assumed for a number
    # written without +country code.
    countries: list[str] = Field(default_factory=lambda: ["US"], min_length=1)
    # How every text starts, saying who sends it (e.g. "UTLA"). Default: the abbreviation
    # in brackets in [campaign] union, else the union's name.
    sender_name: str | None = Field(default=None, min_length=1, max_length=30)
    # True once the sender is registered for US texting (A2P 10DLC for a local number,
    # toll-free verification for an 8XX one): `strikebot doctor` warns until then.
    us_registered: bool = False
    # What one segment costs, in US dollars (Twilio's price for your country), for the web
    # desk's estimate of a text's cost. Unset: the desk shows segments only.
    segment_price: float | None = Field(default=None, gt=0, le=10)

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


# Twilio's answer to a send takes about this long (seconds): `sms_in_flight` 0 keeps enough
# texts in flight for the rate at it.
ROUND_TRIP = 0.5


class SmsDelivery(Section):
    """`[delivery] sms_...`: Twilio's pace. A US long code sends about 1 text a second, a
    toll-free number 3, a messaging service with a 10DLC campaign what its tier allows."""

    sms_per_second: float = Field(default=1.0, gt=0, le=1000)
    sms_in_flight: int = Field(default=0, ge=0, le=100)

    def in_flight(self) -> int:
        """Texts awaiting Twilio's answer at once: as set, or enough for the rate at a
        typical round trip (0, automatic: at least 4, at most 100, the HTTP pool's size)."""
        if self.sms_in_flight:
            return self.sms_in_flight
        return min(max(math.ceil(self.sms_per_second * ROUND_TRIP), 4), 100)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for texts."""
        return Pacing(
            global_per_second=self.sms_per_second,
            per_channel_per_second=1.0,
            burst=max(1, int(self.sms_per_second)),
            max_in_flight=self.in_flight(),
            in_flight_setting="[delivery] sms_in_flight",
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: the texts' pace from their `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, SmsDelivery) else SmsDelivery()).pacing()
