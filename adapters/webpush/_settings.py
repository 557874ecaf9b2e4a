"""Web Push settings: the VAPID key pair and contact (environment), the `[webpush]`
section (which push services, how long a message waits, quiet hours) and the pace."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

from bot.ports import (
    Pacing,
    PluginSettings,
    QuietHours,
    QuietHoursSetting,
    Section,
    parse_quiet_hours,
)

NAME = "webpush"
SUBSCRIBE_PATH = "/push/subscriptions"
UNSUBSCRIBE_PATH = "/push/subscriptions/delete"
# The push services of the browsers people use (Chrome and Edge's FCM, Firefox's autopush,
# Safari's, Windows' WNS). A browser's subscription names one of them; no other is written
# to, so a forged subscription cannot make the bot post to an address of its choosing.
PUSH_SERVICES = (
    "https://fcm.googleapis.com",
    "https://updates.push.services.mozilla.com",
    "https://web.push.apple.com",
    "https://*.push.apple.com",
    "https://*.notify.windows.com",
)


class WebPushSettings(PluginSettings):
    """WEBPUSH_VAPID_PRIVATE_KEY (the application server's key, RFC 8292: base64url of the
    raw 32-byte P-256 key, or PEM; `strikebot webpush keys` makes one) and
    WEBPUSH_VAPID_SUBJECT (how a push service reaches the operator: mailto: or https:)
    turn browser notifications on."""

    private_key: SecretStr | None = Field(default=None, alias="WEBPUSH_VAPID_PRIVATE_KEY")
    subject: str | None = Field(default=None, alias="WEBPUSH_VAPID_SUBJECT")

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"(mailto:[^@\s]+@[^@\s]+|https://\S+)", value):
            raise ValueError(
                "write how a push service reaches you: mailto:comms@union.org or an https:// "
                "address"
            )
        return value

    @property
    def enabled(self) -> bool:
        return bool(self.private_key and self.subject)

    @property
    def off_hint(self) -> str:
        return (
            "set WEBPUSH_VAPID_PRIVATE_KEY and WEBPUSH_VAPID_SUBJECT to offer browser "
            "notifications on the page (`strikebot webpush keys` makes a key; docs/webpush.md)"
        )

    @property
    def key(self) -> str:
        return self.private_key.get_secret_value() if self.private_key else ""


class WebPushSection(Section):
    """`[webpush]`: which push services subscriptions may name, how long a push service
    keeps a message for a browser that is offline, and when notifications may go."""

    # Origins ("https://host", "https://*.host") of the push services browsers may name.
    services: list[str] = Field(default_factory=lambda: list(PUSH_SERVICES), min_length=1)
    ttl_hours: float = Field(default=24.0, gt=0, le=24 * 28)
    quiet_hours: QuietHoursSetting = "21:00-08:00"

    @field_validator("services")
    @classmethod
    def _services(cls, value: list[str]) -> list[str]:
        for origin in value:
            parts = urlsplit(origin)
            if parts.scheme not in ("https", "http") or not parts.netloc or parts.path:
                raise ValueError(f"{origin!r} is not an origin such as https://fcm.googleapis.com")
        return value

    def quiet(self) -> QuietHours | None:
        return parse_quiet_hours(self.quiet_hours)

    def allows(self, endpoint: str) -> bool:
        """Whether `endpoint` is at one of `services`."""
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        port = parts.port
        for origin in self.services:
            allowed = urlsplit(origin)
            if allowed.scheme != parts.scheme or allowed.port != port:
                continue
            pattern = (allowed.hostname or "").lower()
            if (pattern.startswith("*.") and host.endswith(pattern[1:])) or host == pattern:
                return True
        return False


class WebPushDelivery(Section):
    """`[delivery] webpush_...`: how fast messages go to the push services."""

    webpush_per_second: float = Field(default=50.0, gt=0, le=1000)
    webpush_in_flight: int = Field(default=16, ge=1, le=200)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for web push."""
        return Pacing(
            global_per_second=self.webpush_per_second,
            per_channel_per_second=1.0,
            burst=max(1, int(self.webpush_per_second)),
            max_in_flight=self.webpush_in_flight,
            in_flight_setting="[delivery] webpush_in_flight",
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: web push's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, WebPushDelivery) else WebPushDelivery()).pacing()
