"""An `OutboundMessage` as an e-mail: one plain-text and one HTML part from the same message,
in the reader's language, with a visible unsubscribe link and RFC 8058 one-click headers.

Every header value is built from one line of text: line breaks, tabs and other control
characters in a headline become spaces, so no text anyone wrote can add a header. The
`email` package refuses such values anyway; this keeps the subject readable instead.

`List-Unsubscribe` (and any header carrying URLs) is written on one line as it is, never
RFC 2047 encoded: Python folds every header at 78 columns and turns a long unbreakable
value into encoded-words, which mail providers do not read as a URL (`UrlListHeader`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from email.headerregistry import Address, BaseHeader, HeaderRegistry, UnstructuredHeader
from email.message import EmailMessage
from email.policy import Policy
from email.policy import default as default_policy
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import quote

import jinja2

from bot.ports import MessageKind, OutboundMessage, Urgency, i18n

SUBJECT_MAX = 150

WORDS = i18n.Words("email")

_HTML = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
).get_template("message.html")


@dataclass(frozen=True, slots=True)
class Envelope:
    """Who sends to whom, and the links around the message."""

    sender: Address
    to: str
    message_id: str
    union: str
    list_id: str
    unsubscribe_url: str | None  # None for a sign-up's confirmation (not subscribed yet)
    reply_to: str | None = None
    preferences_url: str | None = None  # the person's settings page (bot.people.preferences)


def one_line(text: str, limit: int = SUBJECT_MAX) -> str:
    """Text fit for a header: control characters and line breaks become single spaces."""
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in text)
    cleaned = re.sub(r"\s+", " ", cleaned).strip()
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned


def subject_of(message: OutboundMessage) -> str:
    words = WORDS[message.language]
    title = one_line(message.title) or one_line(message.body, 80)
    if message.kind is MessageKind.UPDATE and message.urgency is Urgency.URGENT:
        title = f"{words['urgent']}: {title}"
    return one_line(title)


def text_part(message: OutboundMessage, envelope: Envelope) -> str:
    words = WORDS[message.language]
    lines = [message.title.strip(), ""]
    if message.status_label:
        lines[0:0] = [f"[{message.status_label}]"]
    if message.body.strip():
        lines += [message.body.strip(), ""]
    for field in message.fields:
        lines += [f"{field.name}: {field.value}", ""]
    for link in message.links:
        lines += [f"{link.label}: {link.url}", ""]
    if message.footer:
        lines += [message.footer, ""]
    if envelope.unsubscribe_url:  # a confirmation's body already says what to do
        lines.append("-- ")
        lines.append(words["why"].format(union=envelope.union))
        lines.append(words["unsubscribe_text"].format(url=envelope.unsubscribe_url))
        if envelope.preferences_url:
            lines.append(words["preferences_text"].format(url=envelope.preferences_url))
    return _plain("\n".join(lines)) + "\n"


def html_part(message: OutboundMessage, envelope: Envelope, colour: str) -> str:
    words = WORDS[message.language]
    paragraphs = [
        [_plain(line) for line in block.split("\n")]
        for block in message.body.replace("\r\n", "\n").split("\n\n")
        if block.strip()
    ]
    why = words["why"] if envelope.unsubscribe_url else ""
    return _HTML.render(
        lang=message.language,
        subject=subject_of(message),
        m=message,
        paragraphs=paragraphs,
        badge=message.status_label,
        colour=colour,
        why=why.format(union=envelope.union),
        unsubscribe=envelope.unsubscribe_url,
        unsubscribe_label=words["unsubscribe"],
        preferences=envelope.preferences_url if envelope.unsubscribe_url else None,
        preferences_label=words["preferences"],
    )


class UrlListHeader(UnstructuredHeader, BaseHeader):
    """A header whose value is angle-bracketed URLs (`List-Unsubscribe`, RFC 2369/8058): a
    structured header, so never an encoded-word (`=?utf-8?q?...?=` is not a URL to Gmail or
    Yahoo) and never folded inside a URL. Written on one line (RFC 5322 allows 998
    characters); several URLs are folded only between them, after their commas."""

    def fold(self, *, policy: Policy) -> str:
        urls = [u.strip() for u in str(self).split(",") if u.strip()]
        lines = [f"{self.name}: {urls[0]}"] if urls else [f"{self.name}: "]
        for url in urls[1:]:
            if len(lines[-1]) + 2 + len(url) <= LINE_MAX:
                lines[-1] += f", {url}"
            else:
                lines[-1] += ","
                lines.append(f" {url}")
        return policy.linesep.join(lines) + policy.linesep


URL_HEADERS = ("list-unsubscribe", "list-unsubscribe-post", "list-archive", "list-help")
LINE_MAX = 998  # RFC 5322 2.1.1: a line's hard limit, CRLF excluded
_HEADERS = HeaderRegistry()
for _name in URL_HEADERS:
    _HEADERS.map_to_type(_name, UrlListHeader)
# The default policy, with the URL headers above written as they are.
MAIL_POLICY = default_policy.clone(header_factory=_HEADERS)


def ascii_url(url: str) -> str:
    """`url` with anything outside printable ASCII percent-encoded (a header carries it
    as is, never encoded-word)."""
    return quote(url, safe="".join(chr(c) for c in range(33, 127)))


def build_email(
    message: OutboundMessage, envelope: Envelope, *, now: datetime, colour: str = "#1f4e8c"
) -> EmailMessage:
    """The whole e-mail: headers, a text part and an HTML alternative."""
    words = WORDS[message.language]
    mail = EmailMessage(policy=MAIL_POLICY)
    mail["From"] = envelope.sender
    mail["To"] = envelope.to
    mail["Subject"] = subject_of(message)
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = envelope.message_id
    mail["List-Id"] = (
        f"{one_line(words['list'].format(union=envelope.union), 80)} <{envelope.list_id}>"
    )
    if envelope.reply_to:
        mail["Reply-To"] = envelope.reply_to
    if envelope.unsubscribe_url:
        mail["List-Unsubscribe"] = f"<{ascii_url(envelope.unsubscribe_url)}>"
        mail["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    else:
        mail["Auto-Submitted"] = "auto-generated"
    add_parts(mail, text_part(message, envelope), html_part(message, envelope, colour))
    mail["Content-Language"] = message.language  # after the parts: set_content clears Content-*
    return mail


def add_parts(mail: EmailMessage, text: str, html: str) -> None:
    """The plain-text part and its HTML alternative, both quoted-printable: 7-bit clean for
    any server, and line by line, so one person's link is encoded apart from the rest
    (`Rendition`)."""
    mail.set_content(text, subtype="plain", charset="utf-8", cte="quoted-printable")
    mail.add_alternative(html, subtype="html", charset="utf-8", cte="quoted-printable")


def _plain(text: str) -> str:
    """Drop control characters other than line breaks and tabs (a NUL in a body breaks SMTP)."""
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc").replace(
        "\r", ""
    )
