"""People's own addresses: e-mail addresses and mobile numbers, read in one place.

    read_email(" María.López@Example.COM ")  -> InvalidInput (accented letters: ask again)
    read_email("maria.lopez@example.com")    -> "maria.lopez@example.com"
    read_phone("(213) 555-0123", ("US",))    -> "+12135550123"

Input is normalised (NFKC: full-width letters and digits become plain ones) and then held
to the narrowest form that reaches people reliably: an e-mail address in plain ASCII (no
look-alike letters, no header-breaking characters), a mobile number in E.164 from an allowed
country. Each refusal is one sentence, in English and Spanish, saying what to write.
The libraries do the hard parts: `email-validator` (RFC 5321/5322 syntax) and
`phonenumbers` (Google's libphonenumber: numbering plans, number types).

Addresses are personal data: nothing here logs them, and `mask` is the only form that may
be shown to anyone but their owner (e.g. `m•••@e•••.com`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from urllib.parse import urlsplit

import phonenumbers
from email_validator import EmailNotValidError, validate_email

from bot.errors import InvalidInput
from bot.i18n.sentences import localized_error
from bot.models import Contact

EMAIL_MAX = 254  # RFC 5321's limit on a forward path
ENDPOINT_MAX = 2048  # a push service's endpoint URL (the column's size)
PHONE_INPUT_MAX = 40  # "+1 (213) 555-0123 ext. 1234" and then some
_PHONE_TYPES = frozenset(
    {phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE}
)


def _clean(text: object, limit: int) -> str:
    """NFKC-normalised, stripped text; refuses control characters and absurd lengths."""
    value = unicodedata.normalize("NFKC", str(text if text is not None else "")).strip()
    if len(value) > limit:
        raise localized_error(InvalidInput, "contacts.too_long", length=len(value), limit=limit)
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in value):
        raise localized_error(InvalidInput, "contacts.invisible_characters")
    return value


def read_email(text: object) -> str:
    """The address, lower-cased, or `InvalidInput` saying how to write one."""
    value = _clean(text, EMAIL_MAX)
    if not value:
        raise localized_error(InvalidInput, "contacts.email_missing")
    if not value.isascii():
        raise localized_error(InvalidInput, "contacts.email_not_ascii")
    try:
        found = validate_email(value, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError:
        raise localized_error(InvalidInput, "contacts.not_an_email") from None
    return str(found.ascii_email or found.normalized).lower()


def read_phone(
    text: object, countries: Sequence[str], *, anywhere: bool = False, mobile: bool = True
) -> str:
    """The mobile number in E.164 (`+12135550123`), or `InvalidInput` saying what to write.

    `countries` are the ISO codes texts may go to; the first is assumed for a number written
    without its country code. `anywhere`: any country (to find a record, not to sign up).
    `mobile=False`: any type of number (one that wrote on WhatsApp has WhatsApp)."""
    value = _clean(text, PHONE_INPUT_MAX)
    region = countries[0] if countries else "US"
    example = phonenumbers.format_number(
        phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
        or phonenumbers.parse("+12135550123"),
        phonenumbers.PhoneNumberFormat.NATIONAL,
    )
    bad = localized_error(InvalidInput, "contacts.not_a_mobile", example=example)
    if not value:
        raise bad
    try:
        number = phonenumbers.parse(value, region)
    except phonenumbers.NumberParseException:
        raise bad from None
    if not phonenumbers.is_valid_number(number):
        raise bad
    if not anywhere and phonenumbers.region_code_for_number(number) not in countries:
        allowed = ", ".join(countries)
        raise localized_error(InvalidInput, "contacts.country_not_allowed", allowed=allowed)
    if mobile and phonenumbers.number_type(number) not in _PHONE_TYPES:
        raise localized_error(InvalidInput, "contacts.not_mobile_type")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def read_endpoint(text: object) -> str:
    """A browser push subscription's endpoint: an absolute http(s) URL in plain ASCII, with
    no login in it, at most `ENDPOINT_MAX` characters. Which push services may be named is
    the push plugin's to say (`[webpush] services`)."""
    value = str(text if text is not None else "").strip()
    if len(value) > ENDPOINT_MAX:
        raise localized_error(
            InvalidInput, "contacts.too_long", length=len(value), limit=ENDPOINT_MAX
        )
    parts = urlsplit(value) if value.isascii() else None
    if (
        parts is None
        or parts.scheme not in ("https", "http")
        or not parts.hostname
        or parts.username is not None
        or any(ch.isspace() or not ch.isprintable() for ch in value)
    ):
        raise localized_error(InvalidInput, "contacts.not_an_endpoint")
    return value


def read_contact(kind: Contact, text: object, countries: Sequence[str] = ("US",)) -> str:
    if kind is Contact.EMAIL:
        return read_email(text)
    if kind is Contact.PUSH:
        return read_endpoint(text)
    return read_phone(text, countries, mobile=kind is Contact.PHONE)


def mask(address: str) -> str:
    """A form safe to show an admin: `m•••@e•••.com`, `+1•••••••123`."""
    if "@" in address:
        local, _, domain = address.rpartition("@")
        name, dot, tld = domain.rpartition(".")
        shown_domain = f"{name[:1]}•••{dot}{tld}" if dot else f"{domain[:1]}•••"
        return f"{local[:1]}•••@{shown_domain}"
    return f"{address[:2]}{'•' * max(len(address) - 5, 3)}{address[-3:]}"


def show_phone(e164: str | None) -> str:
    """A number as people dial it from anywhere ("+1 213-555-0100"); "" for none. For the
    campaign's own number, never a person's."""
    if not e164:
        return ""
    try:
        parsed = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return e164
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
