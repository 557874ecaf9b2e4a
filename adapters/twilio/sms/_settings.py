"""SMS settings: the Twilio account (environment), the `[sms]` section (quiet hours,
segments, countries) and the sending pace (`[delivery] sms_...`)."""

from __future__ import annotations

import math
import re

from pydantic import Field, field_validator

from bot.ports import Pacing, Section

from .._settings import ServiceSid, TwilioAccount, TwilioSection

NAME = "sms"


class SmsSettings(TwilioAccount):
    """The account (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN) and a sender (TWILIO_FROM, a number
    in E.164, or TWILIO_MESSAGING_SERVICE_SID) turn texts on."""

    sender: str | None = Field(default=None, alias="TWILIO_FROM")
    messaging_service: ServiceSid | None = Field(default=None, alias="TWILIO_MESSAGING_SERVICE_SID")

    @field_validator("sender")
    @classmethod
    def _sender(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"\+[1-9][0-9]{6,14}", value):
            raise ValueError("write the number in E.164, e.g. +12135550100")
        return value

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


class SmsSection(TwilioSection):
    """`[sms]`: when texts may go, how long they may be, and which countries they reach."""

    # A text is cut to fit this many segments (160 GSM-7 / 70 UCS-2 characters each, 153/67
    # when split), ending with the link to the full update.
    max_segments: int = Field(default=2, ge=1, le=10)
    # True once the sender is registered for US texting (A2P 10DLC for a local number,
    # toll-free verification for an 8XX one): `strikebot doctor` warns until then.
    us_registered: bool = False
    # What one segment costs, in US dollars (Twilio's price for your country), for the web
    # desk's estimate of a text's cost. Unset: the desk shows segments only.
    segment_price: float | None = Field(default=None, gt=0, le=10)


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
