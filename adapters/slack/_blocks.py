"""OutboundMessage → Block Kit, inside Slack's limits, with every mention made inert.

Slack parses `&`, `<` and `>` in mrkdwn and in a message's `text`: `<!channel>`, `<!here>`,
`<@U123>`, `<!subteam^S1>` notify people. Escaping those three characters (Slack's own
rule) leaves the text readable and inert; plain "@channel" gets a zero-width space, and
mrkdwn objects are sent `verbatim` so Slack adds no links or mentions of its own.

Limits (Slack refuses the whole message past them): 50 blocks, header 150 plain-text
characters, section text 3000, 10 fields of 2000 each, 10 context elements, `text` 40,000.
Long text is split into several sections; what still does not fit is trimmed with a link
to the full text on the web.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.slack._settings import LIMITS
from adapters.slack._words import word
from bot.ports import (
    Field,
    MessageKind,
    OutboundMessage,
    Status,
    Urgency,
    fit,
    fit_message,
    i18n,
    neutralize_mentions,
    split,
)

MAX_BLOCKS = 50
MAX_MODAL_BLOCKS = 100
HEADER_MAX = 150
SECTION_MAX = 3000
FIELD_MAX = 2000
FIELDS_PER_SECTION = 10
FALLBACK_MAX = 3000  # the notification preview; Slack's own cap is 40,000


Block = dict[str, Any]

STATUS_EMOJI: dict[Status, str] = {
    Status.BARGAINING: ":large_blue_circle:",
    Status.STRIKE_VOTE: ":ballot_box_with_ballot:",
    Status.STRIKE_ON: ":red_circle:",
    Status.TALKS_SCHEDULED: ":large_orange_circle:",
    Status.TENTATIVE_AGREEMENT: ":large_green_circle:",
    Status.RATIFICATION_VOTE: ":ballot_box_with_ballot:",
    Status.STRIKE_SUSPENDED: ":white_circle:",
    Status.STRIKE_OVER: ":white_check_mark:",
}
URGENCY_EMOJI = {Urgency.IMPORTANT: ":warning:", Urgency.URGENT: ":rotating_light:"}


@dataclass(frozen=True, slots=True)
class Rendered:
    """What chat.postMessage / chat.update / a response_url take."""

    text: str
    blocks: list[Block]

    def payload(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


# ------------------------------------------------------------------------- escaping


def escape(text: str) -> str:
    """Plain text → Slack mrkdwn that shows the same characters and notifies nobody."""
    text = neutralize_mentions(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain(text: str, limit: int) -> dict[str, Any]:
    """A plain_text object (never parsed for mentions), trimmed to `limit`."""
    return {
        "type": "plain_text",
        "text": fit(neutralize_mentions(text), limit) or " ",
        "emoji": True,
    }


def mrkdwn(text: str) -> dict[str, Any]:
    """An mrkdwn object from already-escaped text; verbatim: Slack adds no links or mentions."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def link(url: str, label: str) -> str:
    """`<url|label>`, or just the escaped label when the URL could break out of the link."""
    if not url.startswith(("https://", "http://")) or any(c in url for c in " |<>\n"):
        return escape(label)
    return f"<{url}|{escape(label).replace('|', '¦')}>"


# ------------------------------------------------------------------------- rendering


def render(message: OutboundMessage, *, max_blocks: int = MAX_BLOCKS) -> Rendered:
    """One message as Block Kit plus its notification text."""
    blocks = message_blocks(message, max_blocks=max_blocks)
    return Rendered(fallback_text(message), blocks)


def render_all(messages: Sequence[OutboundMessage], *, max_blocks: int = MAX_BLOCKS) -> Rendered:
    """Several messages in one (a reply with extras), separated by dividers."""
    return Rendered(fallback_text(messages[0]), stacked_blocks(messages, max_blocks=max_blocks))


def stacked_blocks(messages: Sequence[OutboundMessage], *, max_blocks: int) -> list[Block]:
    """The messages' blocks one after another, separated by dividers, within `max_blocks`
    (a message with no room for at least two blocks is left out, and so are the rest)."""
    blocks: list[Block] = []
    for i, message in enumerate(messages):
        room = max_blocks - len(blocks) - (1 if i else 0)
        if room < 2:
            break
        if i:
            blocks.append({"type": "divider"})
        blocks += message_blocks(message, max_blocks=room)
    return blocks


def fallback_text(message: OutboundMessage) -> str:
    """The `text` Slack shows in notifications and where blocks cannot be shown."""
    parts = [message.title]
    if message.status_label:
        parts[0] = f"[{message.status_label}] {message.title}"
    if message.body:
        parts.append(message.body)
    text = fit("\n".join(parts), FALLBACK_MAX - 200, message.url, message.language)
    escaped = escape(text)
    while len(escaped) > FALLBACK_MAX:  # escaping grew it (many & < >): trim harder
        text = fit(text, len(text) * FALLBACK_MAX // len(escaped) - 10, None, message.language)
        escaped = escape(text)
    return escaped


def message_blocks(message: OutboundMessage, *, max_blocks: int = MAX_BLOCKS) -> list[Block]:
    msg = fit_message(message, LIMITS)
    lang = msg.language
    head: list[Block] = []
    if msg.title.strip():
        head.append({"type": "header", "text": plain(msg.title, HEADER_MAX)})
    badge = _badge(msg)
    if badge:
        head.append({"type": "context", "elements": [mrkdwn(badge)]})

    body: list[Block] = [_section(piece) for piece in _pieces(msg.body)]
    body += _field_blocks(msg.fields, strike=msg.retracted)

    tail: list[Block] = []
    links = ""
    for item in msg.links:
        shown = link(item.url, fit(item.label, 150))
        if item.label.strip() and len(links) + len(shown) + 3 <= SECTION_MAX:
            links = f"{links} · {shown}" if links else shown
    if links:
        tail.append({"type": "context", "elements": [mrkdwn(links)]})
    if msg.footer.strip():
        tail.append({"type": "context", "elements": [mrkdwn(escape(msg.footer))]})

    room = max_blocks - len(head) - len(tail)
    if len(body) > room:
        more = _more_block(msg.url, lang)
        body = [*body[: max(room - 1, 0)], more] if room > 0 else []
    return [*head, *body, *tail][:max_blocks]


def _badge(msg: OutboundMessage) -> str:
    parts: list[str] = []
    if msg.status_label:
        emoji = ""
        if msg.retracted:
            emoji = ":no_entry_sign:"
        elif msg.status is not None:
            emoji = STATUS_EMOJI[msg.status]
        parts.append(f"{emoji} *{escape(msg.status_label)}*".strip())
    if msg.urgency in URGENCY_EMOJI and msg.kind is not MessageKind.REPLY:
        assert msg.urgency is not None
        label = escape(i18n.urgency_label(msg.urgency, msg.language))
        parts.append(f"{URGENCY_EMOJI[msg.urgency]} {label}")
    return "   ".join(parts)


def _strike(text: str) -> str:
    """Strike through every line (Slack's ~ does not cross line breaks)."""
    return "\n".join(f"~{line}~" if line.strip() else line for line in text.split("\n"))


def _pieces(text: str, *, strike: bool = False, limit: int = SECTION_MAX) -> list[str]:
    """Escaped pieces of `text`, each at most `limit` characters once escaped (escaping and
    strike marks make text longer, so a piece that grew past the limit is cut again)."""
    out: list[str] = []
    if not text.strip():
        return out
    growth = len(escape(text)) / len(text)  # "&" becomes "&amp;": cut the plain text smaller
    pending = split(text, max(int((limit - 100) / growth), 1))
    pending.reverse()
    while pending:
        piece = pending.pop()
        escaped = escape(piece)
        if strike:
            escaped = _strike(escaped)
        if len(escaped) <= limit:
            out.append(escaped)
            continue
        size = max(min(len(piece) * limit // len(escaped), len(piece) - 1) - 10, 1)
        pending.extend(reversed(split(piece, size)))
    return out


def _section(text: str) -> Block:
    return {"type": "section", "text": mrkdwn(text)}


def _field_blocks(fields: Iterable[Field], *, strike: bool) -> list[Block]:
    blocks: list[Block] = []
    inline: list[dict[str, Any]] = []

    def flush() -> None:
        if inline:
            blocks.append({"type": "section", "fields": list(inline)})
            inline.clear()

    for f in fields:
        name = f"*{escape(f.name)}*" if f.name.strip() else ""
        if f.inline:
            value = _pieces(f.value, strike=strike, limit=FIELD_MAX - len(name) - 1)[:1]
            text = "\n".join(filter(None, [name, *value]))
            if not text.strip():
                continue
            inline.append(mrkdwn(text))
            if len(inline) == FIELDS_PER_SECTION:
                flush()
            continue
        flush()
        pieces = _pieces(f.value, strike=strike, limit=SECTION_MAX - len(name) - 1)
        first = "\n".join(filter(None, [name, *pieces[:1]]))
        if first:
            blocks.append(_section(first))
        blocks += [_section(p) for p in pieces[1:]]
    flush()
    return blocks


def _more_block(url: str | None, language: str) -> Block:
    label = word(language, "did_not_fit")
    text = f"_{label}_ — {link(url, word(language, 'read_full_text'))}" if url else f"_{label}._"
    return {"type": "context", "elements": [mrkdwn(text)]}
