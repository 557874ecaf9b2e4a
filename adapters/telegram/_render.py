"""`OutboundMessage` → Telegram HTML (parse_mode "HTML").

Everything people wrote is escaped (`&`, `<`, `>`); the only markup is ours: the title in
bold, the status badge and footer in italics, field names in bold, a retracted update's
original text struck through, links as `<a href>`. Nothing pings anyone: every `@username`
gets a zero-width space after its `@` (Telegram notifies the person named otherwise), and no
`tg://user` link is ever written. The result fits Telegram's 4096 characters of text.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace

from adapters.telegram._settings import LIMITS, TEXT_MAX
from bot.ports import MessageKind, OutboundMessage, fit, fit_message

ZWSP = "\u200b"
_USERNAME = re.compile(r"@(?=[A-Za-z][A-Za-z0-9_]{4,31}\b)")
_TAG = re.compile(r"<[^>]+>")
_STRIKE_WORD = re.compile(r"/(?:strike|huelga) ")


def inert(text: str) -> str:
    """`text` with every @username made inert; idempotent."""
    return _USERNAME.sub("@" + ZWSP, text)


def esc(text: str) -> str:
    return html.escape(inert(text), quote=False)


def visible_length(rendered: str) -> int:
    """Characters Telegram counts: the text once tags are parsed and entities decoded."""
    return len(html.unescape(_TAG.sub("", rendered)))


def render(message: OutboundMessage) -> str:
    """The message as Telegram HTML, within its length limit."""
    fitted = fit_message(message, LIMITS)
    text = _html(fitted)
    over = visible_length(text) - TEXT_MAX
    if over > 0:  # labels and links pushed it over: take the rest from the body
        body = fit(fitted.body, max(len(fitted.body) - over - 1, 0), fitted.url, fitted.language)
        text = _html(replace(fitted, body=body))
    return text


def reply_text(messages: list[OutboundMessage]) -> str:
    """A command's answer (and what follows it, a preview) as one message. Help text names
    commands the Telegram way: `/status`, not `/strike status`."""
    parts = [render(_telegram_words(m)) for m in messages]
    text = "\n\n".join(parts)
    while visible_length(text) > TEXT_MAX and len(parts) > 1:
        parts.pop()
        text = "\n\n".join(parts)
    return text


def _telegram_words(message: OutboundMessage) -> OutboundMessage:
    if message.kind is not MessageKind.REPLY:
        return message
    return replace(
        message,
        title=_STRIKE_WORD.sub("/", message.title),
        body=_STRIKE_WORD.sub("/", message.body),
    )


def _html(message: OutboundMessage) -> str:
    lines: list[str] = []
    title = f"<b>{esc(message.title)}</b>" if message.title else ""
    if message.status_label and message.status_label not in message.title:
        title += (
            f" · <i>{esc(message.status_label)}</i>"
            if title
            else f"<i>{esc(message.status_label)}</i>"
        )
    if title:
        lines.append(title)
    if message.body:
        lines.append(esc(message.body))
    for field in message.fields:
        value = esc(field.value)
        if message.retracted:
            value = f"<s>{value}</s>"
        lines.append(f"<b>{esc(field.name)}</b>\n{value}")
    links = [
        f'<a href="{html.escape(link.url, quote=True)}">{esc(link.label)}</a>'
        for link in message.links
        if link.url.startswith(("https://", "http://"))
    ]
    if links:
        lines.append(" · ".join(links))
    if message.footer:
        lines.append(f"<i>{esc(message.footer)}</i>")
    return "\n\n".join(lines)
