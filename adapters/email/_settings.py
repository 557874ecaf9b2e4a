"""E-mail's settings: the SMTP server and sender (environment), the `[email]` section and
the provider's pace (`[delivery] email_...`)."""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from email.headerregistry import Address
from email.utils import parseaddr
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import Field, SecretStr, field_validator

from bot.ports import (
    Pacing,
    PluginSettings,
    QuietHours,
    QuietHoursSetting,
    Section,
    parse_quiet_hours,
)

NAME = "email"


@dataclass(frozen=True, slots=True)
class SmtpServer:
    """Where and how to hand mail over, read from STRIKEBOT_SMTP_URL."""

    host: str
    port: int
    username: str | None
    password: str | None
    use_tls: bool  # smtps://: TLS from the first byte (port 465)
    start_tls: bool  # smtp://: STARTTLS, required unless a relay on this machine


def parse_smtp_url(url: str) -> SmtpServer:
    """`smtp://user:pass@host:587` (STARTTLS), `smtps://user:pass@host:465` (TLS), or
    `smtp://127.0.0.1:25?tls=off` (a relay on this machine, no TLS)."""
    parts = urlsplit(url)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ValueError(
            "write it as smtp://user:password@host:587 (STARTTLS) or smtps://user:password@host:465"
        )
    try:
        port = parts.port or (465 if parts.scheme == "smtps" else 587)
    except ValueError:
        raise ValueError("the port is not a number; e.g. smtp://user:password@host:587") from None
    plain = parse_qs(parts.query).get("tls", [""])[0].lower() in ("off", "none", "false")
    if plain and not _loopback(parts.hostname):
        raise ValueError(
            "tls=off is only for a mail relay on this machine (127.0.0.1); other servers "
            "need STARTTLS so the password and the mail are never sent in the clear"
        )
    return SmtpServer(
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        use_tls=parts.scheme == "smtps",
        start_tls=parts.scheme == "smtp" and not plain,
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class EmailSettings(PluginSettings):
    """STRIKEBOT_SMTP_URL and STRIKEBOT_MAIL_FROM turn e-mail on."""

    smtp_url: SecretStr | None = Field(default=None, alias="STRIKEBOT_SMTP_URL")
    mail_from: str | None = Field(default=None, alias="STRIKEBOT_MAIL_FROM")

    @field_validator("smtp_url")
    @classmethod
    def _check_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            parse_smtp_url(value.get_secret_value())
        return value

    @field_validator("mail_from")
    @classmethod
    def _check_from(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if any(ch in value for ch in "\r\n"):
            raise ValueError("write the sender on one line")
        _name, address = parseaddr(value)
        if "@" not in address or "@" not in value:
            raise ValueError(
                "write the sender as news@your-union.org or 'UTLA Strike <news@your-union.org>'"
            )
        return value

    @property
    def enabled(self) -> bool:
        return self.smtp_url is not None and self.mail_from is not None

    @property
    def off_hint(self) -> str:
        return "set STRIKEBOT_SMTP_URL and STRIKEBOT_MAIL_FROM (README: Reach families by e-mail)"

    def server(self) -> SmtpServer:
        assert self.smtp_url is not None
        return parse_smtp_url(self.smtp_url.get_secret_value())

    def sender(self) -> Address:
        assert self.mail_from is not None
        name, address = parseaddr(self.mail_from)
        user, _, domain = address.rpartition("@")
        return Address(display_name=name, username=user, domain=domain)

    def secrets(self) -> list[str]:
        found = super().secrets()
        if self.smtp_url is not None:
            password = self.server().password
            if password:
                found.append(password)
        return found


class EmailSection(Section):
    """`[email]`: quiet hours for e-mail in campaign time (none by default: an e-mail wakes
    nobody), and a reply-to address for people who answer."""

    quiet_hours: QuietHoursSetting = "off"
    reply_to: str | None = None

    @field_validator("reply_to")
    @classmethod
    def _check_reply_to(cls, value: str | None) -> str | None:
        if value is not None and ("@" not in value or any(ch in value for ch in "\r\n<>")):
            raise ValueError("write a plain address, e.g. families@your-union.org")
        return value

    def quiet(self) -> QuietHours | None:
        return parse_quiet_hours(self.quiet_hours)


# Connections opened when `email_connections` is 0 (automatic): enough for the rate at this
# round trip per message (a typical provider's), at least 4 and at most 100.
ROUND_TRIP = 0.5


class EmailDelivery(Section):
    """`[delivery] email_...`: the provider's pace. Most SMTP services allow 10-14 messages a
    second on a paid plan; a small plan allows far fewer. Set it to what yours allows.
    `email_connections` 0 (the default) opens as many as the rate needs (`connections`)."""

    email_per_second: float = Field(default=10.0, gt=0, le=1000)
    email_connections: int = Field(default=0, ge=0, le=200)

    def connections(self) -> int:
        """SMTP connections kept open: as set, or enough for the rate (0, automatic)."""
        if self.email_connections:
            return self.email_connections
        return min(max(math.ceil(self.email_per_second * ROUND_TRIP), 4), 100)

    def pacing(self) -> Pacing:
        """The dispatcher's limits for e-mail."""
        connections = self.connections()
        return Pacing(
            global_per_second=self.email_per_second,
            per_channel_per_second=1.0,
            burst=max(1, min(connections, int(self.email_per_second))),
            max_in_flight=connections,
            in_flight_setting="[delivery] email_connections",
        )


def pacing(section: Section | None) -> Pacing:
    """`Plugin.pacing`: e-mail's pace from its `[delivery]` keys (None: the defaults)."""
    return (section if isinstance(section, EmailDelivery) else EmailDelivery()).pacing()
